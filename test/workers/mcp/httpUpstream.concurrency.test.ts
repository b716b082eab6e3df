/**
 * HttpUpstream under concurrency and cancellation: one re-initialize for many simultaneous session
 * losses, per-request signals (no listener build-up on a shared signal), timeouts, caller aborts,
 * answers that never come, and requests still in flight on an expiring session.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { HttpMcpFixture, barrier } from '../../fixtures/upstreams/httpMcpFixture.js';
import { makeUpstream, rejection } from '../../fixtures/upstreams/httpUpstreamHarness.js';
import { UpstreamNoAnswerError, UpstreamProtocolError, UpstreamTimeoutError } from '../../../workers/mcp/httpUpstream.js';

async function fixture(t: { after(fn: () => Promise<void>): void }, mode: 'json' | 'sse' = 'json'): Promise<HttpMcpFixture> {
  const f = await HttpMcpFixture.start();
  f.mode = mode;
  t.after(() => f.close());
  return f;
}

const callId = (r: { body: Record<string, unknown> | undefined }): unknown => r.body?.['id'];

test('concurrent_requests_reconnect_only_once: ten simultaneous 404s lead to one re-initialize', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  await h.upstream.connect();
  f.expireSessions();
  const stale = f.issuedSessions[0];
  // Hold the ten 404 answers until all ten requests are in, so every call sees its 404 before any re-init.
  const allIn = barrier(10);
  f.intercept = async (req) => {
    if (req.rpc === 'tools/call' && req.headers['mcp-session-id'] === stale) await allIn.arrive();
    return false;
  };

  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => h.upstream.callTool('echo', { message: `m${i}` })));
  assert.deepEqual(
    results,
    Array.from({ length: 10 }, (_, i) => ({ content: [{ type: 'text', text: `m${i}` }] })),
  );
  assert.equal(f.initializeCount, 2);
  const calls = f.posts('tools/call');
  assert.equal(calls.length, 20);
  assert.equal(calls.filter((r) => r.headers['mcp-session-id'] === f.issuedSessions[1]).length, 10);
});

test('200 concurrent calls each run on their own signal; the shared caller signal holds one listener, then none', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t, 'sse');
  const signalsSeen = new Set<AbortSignal>();
  let callPosts = 0;
  const recordingFetch: typeof fetch = (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"tools/call"')) {
      callPosts++;
      if (init.signal) signalsSeen.add(init.signal);
    }
    return fetch(input, init);
  };
  const h = makeUpstream(f.url, { fetch: recordingFetch });
  t.after(() => h.upstream.close());
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  process.on('warning', onWarning);
  t.after(() => {
    process.off('warning', onWarning);
  });
  await h.upstream.connect();

  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  f.intercept = async (req) => {
    if (req.rpc === 'tools/call') await released;
    return false;
  };
  const caller = new AbortController();
  const calls = Array.from({ length: 200 }, (_, i) => h.upstream.callTool('echo', { message: `n${i}` }, caller.signal));
  await f.until((seen) => seen.filter((r) => r.rpc === 'tools/call').length === 200);
  const listenersAtPeak = getEventListeners(caller.signal, 'abort').length;
  release();
  const results = await Promise.all(calls);

  assert.equal(results.length, 200);
  assert.deepEqual(results[199], { content: [{ type: 'text', text: 'n199' }] });
  assert.equal(listenersAtPeak, 1, 'one fan-out listener on the caller signal, however many calls share it');
  assert.equal(getEventListeners(caller.signal, 'abort').length, 0);
  assert.equal(callPosts, 200);
  assert.equal(signalsSeen.size, 200, 'every request had a signal of its own');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    warnings.map((w) => w.name),
    [],
  );
});

test('a call past timeout_secs fails with UpstreamTimeoutError and cancels the request upstream', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url, { timeoutSecs: 1 });
  t.after(() => h.upstream.close());
  let unblock: () => void = () => {};
  const blocked = new Promise<void>((resolve) => (unblock = resolve));
  t.after(() => unblock());
  f.onCall = async (name, args) => {
    if (name === 'hang') await blocked;
    return { result: { content: [{ type: 'text', text: String(args['message'] ?? '') }] } };
  };
  await h.upstream.connect();

  const error = await rejection(h.upstream.callTool('hang', {}));
  assert.ok(error instanceof UpstreamTimeoutError, String(error));
  assert.equal(error.message, "Upstream 'fixture' did not answer tools/call within 1 s");
  const hung = f.posts('tools/call')[0]!;
  await f.until((seen) => seen.some((r) => r.rpc === 'notifications/cancelled'));
  const cancel = f.posts('notifications/cancelled')[0]!;
  assert.equal((cancel.body!['params'] as { requestId: unknown }).requestId, callId(hung));
  // The session is still good.
  assert.deepEqual(await h.upstream.callTool('echo', { message: 'after' }), { content: [{ type: 'text', text: 'after' }] });
  assert.equal(f.initializeCount, 1);
});

test("the caller's abort rejects with its reason and cancels the request upstream", { timeout: 20_000 }, async (t) => {
  const f = await fixture(t, 'sse');
  const h = makeUpstream(f.url, { timeoutSecs: 0 });
  t.after(() => h.upstream.close());
  let unblock: () => void = () => {};
  const blocked = new Promise<void>((resolve) => (unblock = resolve));
  t.after(() => unblock());
  f.onCall = async () => {
    await blocked;
    return { result: { content: [] } };
  };
  await h.upstream.connect();
  const caller = new AbortController();
  const pending = h.upstream.callTool('slow', {}, caller.signal);
  await f.until((seen) => seen.some((r) => r.rpc === 'tools/call'));
  const reason = new Error('caller gave up');
  caller.abort(reason);
  assert.equal(await rejection(pending), reason);
  await f.until((seen) => seen.some((r) => r.rpc === 'notifications/cancelled'));
  assert.equal(getEventListeners(caller.signal, 'abort').length, 0);
});

test('a response that ends without an answer fails the call instead of leaving it pending (timeout 0)', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url, { timeoutSecs: 0 });
  t.after(() => h.upstream.close());
  f.intercept = (req, res) => {
    if (req.rpc !== 'tools/call') return false;
    const tool = (req.body!['params'] as { name: string }).name;
    if (tool === 'sse-notification-only') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n');
    } else if (tool === 'sse-malformed-result') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: {"jsonrpc":"2.0","id":${JSON.stringify(req.body!['id'])},"result":"not an object"}\n\n`);
    } else if (tool === 'json-other-id') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":987654,"result":{"content":[]}}');
    } else if (tool === 'json-malformed-result') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(req.body!['id'])},"result":"not an object"}`);
    } else if (tool === 'accepted-no-body') {
      res.writeHead(202).end();
    } else if (tool === 'html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html>login page</html>');
    } else return false;
    return true;
  };
  await h.upstream.connect();
  for (const tool of ['sse-notification-only', 'sse-malformed-result', 'json-other-id', 'accepted-no-body']) {
    const error = await rejection(h.upstream.callTool(tool, {}));
    assert.ok(error instanceof UpstreamNoAnswerError, `${tool}: ${String(error)}`);
    assert.equal(error.message, "Upstream 'fixture' ended its response without a valid answer to tools/call");
  }
  const malformed = await rejection(h.upstream.callTool('json-malformed-result', {}));
  assert.ok(malformed instanceof UpstreamProtocolError, String(malformed));
  assert.ok(!malformed.message.includes('not an object'));
  const html = await rejection(h.upstream.callTool('html', {}));
  assert.ok(html instanceof UpstreamProtocolError, String(html));
  assert.equal(html.message, "Upstream 'fixture' answered tools/call with content type 'text/html', not JSON or SSE");
  // None of these cost the session.
  assert.equal(f.initializeCount, 1);
  assert.deepEqual(await h.upstream.callTool('echo', { message: 'fine' }), { content: [{ type: 'text', text: 'fine' }] });
});

test('a call still in flight on an expiring session gets its answer; the re-initialize does not cut it off', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t, 'sse');
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  let unblock: () => void = () => {};
  const blocked = new Promise<void>((resolve) => (unblock = resolve));
  t.after(() => unblock());
  f.onCall = async (name, args) => {
    if (name === 'slow') await blocked;
    return { result: { content: [{ type: 'text', text: `${name}:${String(args['message'])}` }] } };
  };
  await h.upstream.connect();
  const slow = h.upstream.callTool('slow', { message: 'old session' });
  await f.until((seen) => seen.some((r) => r.rpc === 'tools/call'));
  f.expireSessions();
  assert.deepEqual(await h.upstream.callTool('echo', { message: 'new session' }), {
    content: [{ type: 'text', text: 'echo:new session' }],
  });
  assert.equal(f.initializeCount, 2);
  unblock();
  assert.deepEqual(await slow, { content: [{ type: 'text', text: 'slow:old session' }] });
});
