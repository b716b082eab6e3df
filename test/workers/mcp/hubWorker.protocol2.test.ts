/**
 * The hub worker thread (workers/mcp/main.ts) speaking McpHubProtocol v2 to a stand-in supervisor
 * that serves HubHostProtocol v2: the `lists` event, forwarded `request`s, `call` with a route and a
 * progress token (the `notification` events), an upstream's sampling request as `clientRequest`,
 * `setLogLevel` and `notifyUpstreams`. The upstream is the real server-everything over stdio.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MessageChannel, Worker } from 'node:worker_threads';

import { connect, serve, withPayload } from '../../../shared/channel.js';
import { HubHostProtocol, McpHubProtocol } from '../../../shared/protocol/mcpHub.js';
import { messagePortTransport, workerTransport } from '../../../shared/transports/messagePort.js';
import { waitFor } from '../../helpers/poll.js';
import { EVERYTHING_SERVER } from '../proxy-stdio/pumpHarness.js';

const HUB_ENTRY = new URL('../../../workers/mcp/main.js', import.meta.url);
const decoder = new TextDecoder();
const json = (payload: Uint8Array | undefined): any => (payload === undefined ? undefined : JSON.parse(decoder.decode(payload)));

test('the hub worker serves protocol 2: lists, request, call with route and progress, clientRequest, setLogLevel, notifyUpstreams', {
  timeout: 60_000,
}, async (t) => {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(HUB_ENTRY, { workerData: { hostPort: port2, version: '0.0.0-test' }, transferList: [port2] });
  const hub = connect(workerTransport(worker), McpHubProtocol, { handshakeTimeout: 30_000 });
  const asked: Array<{ upstream: string; method: string; route: string | undefined; params: any }> = [];
  const hostServer = serve(messagePortTransport(port1), HubHostProtocol, {
    credential: async () => ({ value: null }),
    refreshCredential: async () => ({ value: null }),
    clientRequest: async ({ upstream, method, route }, ctx) => {
      asked.push({ upstream, method, route, params: json(ctx.payload) });
      if (method === 'sampling/createMessage') {
        const result = { model: 'm', role: 'assistant', content: { type: 'text', text: 'from the client' } };
        return withPayload({}, new TextEncoder().encode(JSON.stringify(result)));
      }
      if (method === 'roots/list') return { error: { code: -32601, message: 'no roots here' } };
      return { error: { code: -32603, message: 'unexpected' } };
    },
  });
  t.after(async () => {
    await hub.request('shutdown', {}, { timeout: 10_000 }).catch(() => {});
    hub.dispose();
    hostServer.dispose();
    await worker.terminate();
  });
  const lists: Array<{ revision: number; changed: string[]; body: any }> = [];
  const notifications: Array<{ upstream: string; method: string; route: string | undefined; params: any }> = [];
  hub.on('lists', (data, payload) => lists.push({ ...data, body: json(payload) }));
  hub.on('notification', (data, payload) => notifications.push({ ...data, route: data.route, params: json(payload) }));
  await hub.ready;

  await hub.request('setLogLevel', { level: 'debug' });
  await hub.request('connect', {
    server: {
      id: 'e1',
      name: 'every',
      transport: { type: 'stdio', command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], env: {} },
      enabled: true,
      timeout_secs: 30,
    },
    own_port: null,
  });
  await hub.request('initialConnectComplete', {});
  await waitFor(() => lists.some((l) => l.body.prompts.length > 0 && l.body.resources.length > 0), 'the lists event', 30_000);
  const last = lists.at(-1)!;
  assert.ok(last.changed.includes('resources') && last.changed.includes('prompts'), JSON.stringify(last.changed));
  assert.deepEqual(last.body.capabilities, { resources: true, subscribe: true, prompts: true, completions: true, logging: true });
  assert.ok(last.body.prompts.some((p: { name: string }) => p.name === 'every__simple-prompt'));
  assert.ok(last.body.resourceTemplates.some((r: { uriTemplate: string }) => r.uriTemplate.startsWith('tuic://every/demo://')));

  const prompt = await hub.requestWithPayload(
    'request',
    { upstream: 'every', method: 'prompts/get' },
    {
      payload: new TextEncoder().encode(JSON.stringify({ name: 'args-prompt', arguments: { city: 'Oslo' } })),
    },
  );
  assert.equal(prompt.result.error, undefined);
  assert.match(decoder.decode(prompt.payload), /Oslo/);
  const refused = await hub.request('request', { upstream: 'nobody', method: 'resources/read' });
  assert.deepEqual(refused.error, { code: -32602, message: "Unknown upstream 'nobody'" });

  const sampled = await hub.requestWithPayload(
    'call',
    { upstream: 'every', tool: 'trigger-sampling-request', route: 'sess/1' },
    {
      payload: new TextEncoder().encode(JSON.stringify({ prompt: 'hello', maxTokens: 3 })),
    },
  );
  assert.match(decoder.decode(sampled.payload), /from the client/);
  assert.deepEqual(
    asked.filter((a) => a.method === 'sampling/createMessage').map((a) => [a.upstream, a.route]),
    [['every', 'sess/1']],
  );

  const long = await hub.requestWithPayload(
    'call',
    { upstream: 'every', tool: 'trigger-long-running-operation', route: 'sess/2', progress_token: 42 },
    {
      payload: new TextEncoder().encode(JSON.stringify({ duration: 0.2, steps: 2 })),
    },
  );
  assert.match(decoder.decode(long.payload), /completed/);
  await waitFor(() => notifications.filter((n) => n.method === 'notifications/progress').length === 2, 'two progress notifications');
  for (const n of notifications.filter((x) => x.method === 'notifications/progress')) {
    assert.equal(n.route, 'sess/2');
    assert.equal(n.params.progressToken, 42);
  }

  // Log messages arrive without a route (the upstream sends one when its roots change and when logging is toggled).
  await hub.requestWithPayload('call', { upstream: 'every', tool: 'toggle-simulated-logging' }, { payload: new TextEncoder().encode('{}') });
  await waitFor(() => notifications.some((n) => n.method === 'notifications/message'), 'a log message', 10_000);
  assert.equal(notifications.find((n) => n.method === 'notifications/message')!.route, undefined);
  await hub.requestWithPayload('call', { upstream: 'every', tool: 'toggle-simulated-logging' }, { payload: new TextEncoder().encode('{}') });

  assert.deepEqual(await hub.request('notifyUpstreams', { method: 'notifications/roots/list_changed' }), {});
});
