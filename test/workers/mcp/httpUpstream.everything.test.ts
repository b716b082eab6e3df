/**
 * HttpUpstream against the real @modelcontextprotocol/server-everything in Streamable HTTP mode:
 * what it returns is compared with what a raw JSON-RPC session over fetch receives from the same server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawSession, startEverything } from '../../fixtures/upstreams/httpEverything.js';
import { makeUpstream } from '../../fixtures/upstreams/httpUpstreamHarness.js';
import { HUB_CLIENT_CAPABILITIES } from '../../../workers/mcp/upstreamClient.js';

test('server-everything over Streamable HTTP: tools unchanged, echo, result passthrough, health check, DELETE on close', { timeout: 30_000 }, async (t) => {
  const server = await startEverything();
  const h = makeUpstream(server.url, { name: 'everything' });
  // after-hooks run in registration order: the server goes last.
  t.after(() => h.upstream.close());
  let raw: Awaited<ReturnType<typeof rawSession>> | undefined;
  t.after(async () => {
    await raw?.close();
    await server.stop();
  });
  // Declaring what the hub declares: server-everything lists its sampling, elicitation and roots tools only then.
  raw = await rawSession(server.url, HUB_CLIENT_CAPABILITIES);

  await t.test('connect returns the tools exactly as the server lists them', async () => {
    const tools = await h.upstream.connect();
    const rawTools = (await raw!.request('tools/list'))['tools'];
    assert.ok(tools.some((tool) => tool.name === 'echo'));
    assert.ok(tools.some((tool) => tool.name === 'get-structured-content'));
    assert.deepStrictEqual(tools, rawTools);
  });

  await t.test('echo round-trips', async () => {
    assert.deepStrictEqual(await h.upstream.callTool('echo', { message: 'héllo\nworld' }), {
      content: [{ type: 'text', text: 'Echo: héllo\nworld' }],
    });
  });

  await t.test('a structured result passes through exactly as the server sent it', async () => {
    const args = { location: 'Chicago' };
    const result = await h.upstream.callTool('get-structured-content', args);
    assert.deepStrictEqual(result, await raw!.request('tools/call', { name: 'get-structured-content', arguments: args }));
    assert.deepStrictEqual((result as { structuredContent: unknown }).structuredContent, {
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
  });

  await t.test('an unknown tool comes back as the server answered it', async () => {
    const result = await h.upstream.callTool('no-such-tool', {});
    assert.deepStrictEqual(result, await raw!.request('tools/call', { name: 'no-such-tool', arguments: {} }));
  });

  await t.test('health check lists the tools', async () => {
    const tools = await h.upstream.healthCheck();
    assert.deepStrictEqual(tools, (await raw!.request('tools/list'))['tools']);
  });

  await t.test('close terminates the session with a DELETE', async () => {
    await h.upstream.close();
    await server.waitForStdout('Received session termination request for session');
  });
});

test('a restarted server-everything (its 400 for the unknown session) is re-initialized once and the call retried', { timeout: 30_000 }, async (t) => {
  let server = await startEverything();
  const h = makeUpstream(server.url, { name: 'restarted' });
  t.after(async () => {
    await h.upstream.close();
    await server.stop();
  });
  let toolsChanged = 0;
  h.upstream.onToolsMayHaveChanged(() => toolsChanged++);
  await h.upstream.connect();

  await server.stop();
  server = await startEverything(server.port);
  assert.deepStrictEqual(await h.upstream.callTool('echo', { message: 'after restart' }), {
    content: [{ type: 'text', text: 'Echo: after restart' }],
  });
  assert.equal(toolsChanged, 1);
  const reinit = h.logs.filter((l) => l.msg === 'upstream session re-initialized');
  assert.equal(reinit.length, 1);
  assert.ok(h.logs.some((l) => l.msg === 'upstream session lost; re-initializing once' && /HTTP 400/.test(String(l.fields?.['reason']))));
});
