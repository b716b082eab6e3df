/**
 * HttpUpstream against the controllable fixture server: what goes on the wire (headers, session id,
 * credentials per attempt, redirects, DELETE) and what comes back (raw results, SSE events, errors).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpMcpFixture, type SeenRequest } from '../../fixtures/upstreams/httpMcpFixture.js';
import { freePort } from '../../fixtures/upstreams/httpEverything.js';
import { TEST_VERSION, makeUpstream, rejection } from '../../fixtures/upstreams/httpUpstreamHarness.js';
import {
  UpstreamAuthFailedError,
  UpstreamClosedError,
  UpstreamConnectionError,
  UpstreamHttpStatusError,
  UpstreamRedirectError,
} from '../../../workers/mcp/httpUpstream.js';
import { UpstreamNeedsAuthError, UpstreamRpcError } from '../../../workers/mcp/upstreamClient.js';
import { UPSTREAM_PROTOCOL_VERSION } from '../../../shared/protocol/upstreamServer.js';

async function fixture(t: { after(fn: () => Promise<void>): void }, mode: 'json' | 'sse' = 'json'): Promise<HttpMcpFixture> {
  const f = await HttpMcpFixture.start();
  f.mode = mode;
  t.after(() => f.close());
  return f;
}

const header = (r: SeenRequest, name: string): string | undefined => {
  const v = r.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

test('initialize offers 2025-11-25 as tuicommander and every POST carries the proxy headers', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const { upstream } = makeUpstream(f.url);
  t.after(() => upstream.close());
  await upstream.connect();
  await upstream.callTool('echo', { message: 'hi' });
  await upstream.listTools();

  const init = f.posts('initialize')[0]!;
  const params = init.body!['params'] as { protocolVersion: string; clientInfo: { name: string; version: string } };
  assert.equal(params.protocolVersion, UPSTREAM_PROTOCOL_VERSION);
  assert.deepEqual(params.clientInfo, { name: 'tuicommander', version: TEST_VERSION });
  const posts = f.posts();
  assert.deepEqual(
    posts.map((r) => r.rpc),
    ['initialize', 'notifications/initialized', 'tools/list', 'tools/call', 'tools/list'],
  );
  for (const r of posts) {
    assert.equal(header(r, 'user-agent'), `tuicommander-mcp-proxy/${TEST_VERSION}`, r.rpc);
    assert.equal(header(r, 'mcp-protocol-version'), '2025-11-25', r.rpc);
    assert.equal(header(r, 'accept'), 'application/json, text/event-stream', r.rpc);
    assert.equal(header(r, 'content-type'), 'application/json', r.rpc);
  }
});

test('the session id from initialize is cached and sent with every later request', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const { upstream } = makeUpstream(f.url);
  t.after(() => upstream.close());
  await upstream.connect();
  await upstream.callTool('echo', { message: 'a' });
  await upstream.healthCheck();

  assert.equal(f.issuedSessions.length, 1);
  const [init, ...later] = f.posts();
  assert.equal(header(init!, 'mcp-session-id'), undefined);
  assert.equal(later.length, 4);
  for (const r of later) assert.equal(header(r, 'mcp-session-id'), f.issuedSessions[0], r.rpc);
});

test('initialize_sends_the_rotated_credential_not_the_first_one', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url, { name: 'rot' });
  t.after(() => h.upstream.close());
  h.store.set('rot', 'token-first');
  h.store.set('rot', 'token-second');
  await h.upstream.connect();
  assert.equal(header(f.posts('initialize')[0]!, 'authorization'), 'Bearer token-second');

  // A re-initialize after the session expired reads the store again too.
  h.store.set('rot', 'token-third');
  f.expireSessions();
  await h.upstream.callTool('echo', { message: 'x' });
  const inits = f.posts('initialize');
  assert.equal(inits.length, 2);
  assert.equal(header(inits[1]!, 'authorization'), 'Bearer token-third');
});

test('tool_calls_and_health_checks_follow_credential_rotation', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url, { name: 'rot', headers: [{ name: 'X-Api-Key', credential_ref: 'ref-1' }] });
  t.after(() => h.upstream.close());
  h.store.set('rot', 'tok-A');
  h.store.set('rot/header/ref-1', 'key-A');
  await h.upstream.connect();
  await h.upstream.callTool('echo', { message: '1' });

  h.store.set('rot', 'tok-B');
  h.store.set('rot/header/ref-1', 'key-B');
  await h.upstream.callTool('echo', { message: '2' });
  await h.upstream.healthCheck();

  const calls = f.posts('tools/call');
  assert.equal(header(calls[0]!, 'authorization'), 'Bearer tok-A');
  assert.equal(header(calls[0]!, 'x-api-key'), 'key-A');
  assert.equal(header(calls[1]!, 'authorization'), 'Bearer tok-B');
  assert.equal(header(calls[1]!, 'x-api-key'), 'key-B');
  const lastList = f.posts('tools/list').at(-1)!;
  assert.equal(header(lastList, 'authorization'), 'Bearer tok-B');
  assert.equal(header(lastList, 'x-api-key'), 'key-B');
  // No reconnect was needed for the rotation to take effect.
  assert.equal(f.initializeCount, 1);
});

test('custom header values are sent, but never logged nor put in error messages', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const other = await fixture(t);
  const TOKEN = 'tok-SECRET-4242';
  const VALUE = 'hv-SECRET-9191';
  const h = makeUpstream(f.url, {
    name: 'hdr',
    headers: [
      { name: 'X-Api-Key', credential_ref: 'ref-key' },
      { name: 'X-Unset', credential_ref: 'ref-unset' },
    ],
  });
  t.after(() => h.upstream.close());
  h.store.set('hdr', TOKEN);
  h.store.set('hdr/header/ref-key', VALUE);
  const echoed = `${TOKEN} ${VALUE}`;
  f.intercept = (req, res) => {
    const tool = (req.body?.['params'] as { name?: string } | undefined)?.name;
    if (req.rpc !== 'tools/call' || tool === 'echo') return false;
    if (tool === 'status500') res.writeHead(500, { 'content-type': 'text/plain' }).end(`you sent ${echoed}`);
    else if (tool === 'status401') res.writeHead(401, { 'www-authenticate': `Bearer realm="${echoed}"` }).end(echoed);
    else if (tool === 'elsewhere') res.writeHead(307, { location: `${other.url}?k=${VALUE}` }).end(echoed);
    else return false;
    return true;
  };

  await h.upstream.connect();
  await h.upstream.callTool('echo', { message: 'ok' });
  const call = f.posts('tools/call')[0]!;
  assert.equal(header(call, 'x-api-key'), VALUE);
  assert.equal(header(call, 'authorization'), `Bearer ${TOKEN}`);
  assert.equal(header(call, 'x-unset'), undefined);

  const errors = [
    await rejection(h.upstream.callTool('status500', {})),
    await rejection(h.upstream.callTool('status401', {})),
    await rejection(h.upstream.callTool('elsewhere', {})),
  ];
  assert.ok(errors[0] instanceof UpstreamHttpStatusError && errors[0].status === 500);
  assert.ok(errors[1] instanceof UpstreamAuthFailedError);
  assert.ok(errors[2] instanceof UpstreamRedirectError);
  // An invalid stored value is refused without quoting it.
  h.store.set('hdr/header/ref-key', `bad\nvalue-${VALUE}`);
  errors.push(await rejection(h.upstream.callTool('echo', { message: 'x' })));
  assert.match(errors[3]!.message, /header 'X-Api-Key' is not a valid HTTP header value/);

  const text = JSON.stringify([errors.map((e) => `${e.message} ${e.stack}`), h.logs]);
  assert.ok(!text.includes(VALUE), text);
  assert.ok(!text.includes(TOKEN), text);
  assert.ok(
    h.logs.some((l) => l.level === 'warn' && l.fields?.['header'] === 'X-Unset'),
    'missing header value is reported by name',
  );
  assert.equal(other.seen.length, 0);
});

for (const status of [404, 400]) {
  test(`HTTP ${status} on a call re-initializes once and retries it on the new session`, { timeout: 20_000 }, async (t) => {
    const f = await fixture(t);
    f.expiredStatus = status;
    const h = makeUpstream(f.url);
    t.after(() => h.upstream.close());
    let toolsChanged = 0;
    h.upstream.onToolsMayHaveChanged(() => toolsChanged++);
    await h.upstream.connect();
    f.expireSessions();

    const result = await h.upstream.callTool('echo', { message: 'again' });
    assert.deepEqual(result, { content: [{ type: 'text', text: 'again' }] });
    assert.equal(f.initializeCount, 2);
    const calls = f.posts('tools/call');
    assert.equal(calls.length, 2);
    assert.equal(header(calls[0]!, 'mcp-session-id'), f.issuedSessions[0]);
    assert.equal(header(calls[1]!, 'mcp-session-id'), f.issuedSessions[1]);
    assert.equal(toolsChanged, 1, 'a new session may list other tools');
  });
}

test('a call that fails again after the one re-initialize is not retried further', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  await h.upstream.connect();
  f.intercept = (req, res) => {
    if (req.rpc !== 'tools/call') return false;
    res.writeHead(404).end();
    return true;
  };
  const error = await rejection(h.upstream.callTool('echo', { message: 'x' }));
  assert.ok(error instanceof UpstreamHttpStatusError, String(error));
  assert.equal(error.status, 404);
  assert.equal(f.initializeCount, 2);
  assert.equal(f.posts('tools/call').length, 2);
});

test('a connection reset mid-call re-initializes and retries', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  await h.upstream.connect();
  let resets = 0;
  f.intercept = (req, res) => {
    if (req.rpc !== 'tools/call' || resets > 0) return false;
    resets++;
    res.socket?.destroy();
    return true;
  };
  assert.deepEqual(await h.upstream.callTool('echo', { message: 'survived' }), { content: [{ type: 'text', text: 'survived' }] });
  assert.equal(f.initializeCount, 2);
});

test('close sends one DELETE with the session id and credentials, is idempotent, and later calls fail', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url, { name: 'del', headers: [{ name: 'X-Api-Key', credential_ref: 'r' }] });
  h.store.set('del', 'tok');
  h.store.set('del/header/r', 'key');
  await h.upstream.connect();
  await Promise.all([h.upstream.close(), h.upstream.close()]);
  await h.upstream.close();

  const deletes = f.seen.filter((r) => r.httpMethod === 'DELETE');
  assert.equal(deletes.length, 1);
  assert.equal(header(deletes[0]!, 'mcp-session-id'), f.issuedSessions[0]);
  assert.equal(header(deletes[0]!, 'authorization'), 'Bearer tok');
  assert.equal(header(deletes[0]!, 'x-api-key'), 'key');
  assert.equal(header(deletes[0]!, 'user-agent'), `tuicommander-mcp-proxy/${TEST_VERSION}`);
  assert.ok((await rejection(h.upstream.callTool('echo', {}))) instanceof UpstreamClosedError);
  assert.ok((await rejection(h.upstream.connect())) instanceof UpstreamClosedError);
});

test('close never throws, even when the upstream is gone', { timeout: 20_000 }, async (t) => {
  const f = await HttpMcpFixture.start();
  const h = makeUpstream(f.url);
  await h.upstream.connect();
  await f.close();
  await h.upstream.close();
  assert.ok(h.logs.some((l) => l.msg === 'upstream session DELETE failed'));
  t.diagnostic('DELETE failure was logged, close resolved');
});

test('a cross-origin redirect is stopped before the other origin sees any request', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const other = await fixture(t);
  const h = makeUpstream(f.url, { name: 'redir' });
  t.after(() => h.upstream.close());
  h.store.set('redir', 'tok-redirect');
  f.intercept = (req, res) => {
    if (req.rpc !== 'tools/call') return false;
    res.writeHead(307, { location: other.url }).end();
    return true;
  };
  await h.upstream.connect();
  const error = await rejection(h.upstream.callTool('echo', { message: 'x' }));
  assert.ok(error instanceof UpstreamRedirectError, String(error));
  assert.match(error.message, new RegExp(`another origin \\(${other.origin.replace(/[.]/g, '\\.')}\\)`));
  assert.equal(other.seen.length, 0);

  // Same for the handshake of a fresh client.
  const fresh = makeUpstream(f.url, { name: 'redir' });
  f.intercept = (_req, res) => {
    res.writeHead(308, { location: `${other.origin}/mcp` }).end();
    return true;
  };
  assert.ok((await rejection(fresh.upstream.connect())) instanceof UpstreamRedirectError);
  await fresh.upstream.close();
  assert.equal(other.seen.length, 0);
});

test('a same-origin redirect is followed with the credentials; one that would drop the body is not', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url, { name: 'same', headers: [{ name: 'X-Api-Key', credential_ref: 'r' }] });
  t.after(() => h.upstream.close());
  h.store.set('same', 'tok-same');
  h.store.set('same/header/r', 'key-same');
  f.intercept = (req, res) => {
    if (req.path !== '/mcp') return false;
    res.writeHead(307, { location: '/mcp-moved' }).end();
    return true;
  };
  await h.upstream.connect();
  assert.deepEqual(await h.upstream.callTool('echo', { message: 'moved' }), { content: [{ type: 'text', text: 'moved' }] });
  const moved = f.posts().filter((r) => r.path === '/mcp-moved');
  assert.deepEqual(
    moved.map((r) => r.rpc),
    ['initialize', 'notifications/initialized', 'tools/list', 'tools/call'],
  );
  for (const r of moved) {
    assert.equal(header(r, 'authorization'), 'Bearer tok-same');
    assert.equal(header(r, 'x-api-key'), 'key-same');
  }
  assert.equal(header(moved[3]!, 'mcp-session-id'), f.issuedSessions[0]);

  f.intercept = (req, res) => {
    if (req.path !== '/mcp') return false;
    res.writeHead(302, { location: '/mcp-moved' }).end();
    return true;
  };
  assert.ok((await rejection(h.upstream.callTool('echo', { message: 'x' }))) instanceof UpstreamRedirectError);
});

test('an SSE answer is found among notifications, comments, other event types and multi-line data', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t, 'sse');
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  let toolsChanged = 0;
  h.upstream.onToolsMayHaveChanged(() => toolsChanged++);
  await h.upstream.connect();
  f.intercept = (req, res) => {
    if (req.rpc !== 'tools/call') return false;
    const id = JSON.stringify(req.body!['id']);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': keep-alive\n\n');
    res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n');
    res.write('data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n');
    res.write(`event: other\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"WRONG"}]}}\n\n`);
    // The answer split over two data lines and two TCP writes.
    res.write(`event: message\ndata: {"jsonrpc":"2.0",\ndata: "id":${id},"result":{"con`);
    res.end('tent":[{"type":"text","text":"RIGHT"}]}}\n\n');
    return true;
  };
  assert.deepEqual(await h.upstream.callTool('echo', {}), { content: [{ type: 'text', text: 'RIGHT' }] });
  assert.equal(toolsChanged, 1);
});

for (const mode of ['json', 'sse'] as const) {
  test(`a call result passes through unchanged, extension fields and malformed content included (${mode})`, { timeout: 20_000 }, async (t) => {
    const f = await fixture(t, mode);
    const h = makeUpstream(f.url);
    t.after(() => h.upstream.close());
    const odd = {
      _meta: { progressToken: 5, 'vendor.example/trace': { id: 'abc' } },
      content: 'not-an-array',
      isError: 'maybe',
      structuredContent: { a: [1, { b: null }], ' spaced key ': '\u2028' },
      'x-extension': { deep: { list: [true, false] } },
    };
    f.onCall = (name) => ({ result: name === 'empty' ? {} : odd });
    await h.upstream.connect();
    assert.deepStrictEqual(await h.upstream.callTool('odd', {}), odd);
    assert.deepStrictEqual(await h.upstream.callTool('empty', {}), {});
  });
}

test('tools/list returns the raw tool objects across pages', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  const page1 = [
    { name: 'a', description: '  leading spaces, trailing newline\n', inputSchema: { type: 'object', additionalProperties: false }, 'x-custom': [1] },
    { name: 'b', title: 'B', annotations: { readOnlyHint: true, futureHint: 'kept' }, inputSchema: { type: 'object' }, outputSchema: { type: 'object' } },
  ];
  const page2 = [{ name: 'c', description: 'ünïcödé \u0000 nul', inputSchema: { type: 'object' } }, { description: 'no name: skipped' }];
  f.intercept = (req, res) => {
    if (req.rpc !== 'tools/list') return false;
    const cursor = (req.body!['params'] as { cursor?: string } | undefined)?.cursor;
    f.answer(req, res, { result: cursor === 'p2' ? { tools: page2 } : { tools: page1, nextCursor: 'p2' } });
    return true;
  };
  const tools = await h.upstream.connect();
  assert.deepStrictEqual(tools, [...page1, page2[0]]);
  assert.ok(h.logs.some((l) => l.level === 'warn' && l.fields?.['dropped'] === 1));
});

test('a JSON-RPC error answer becomes an UpstreamRpcError and does not re-initialize', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  f.onCall = () => ({ error: { code: -32602, message: 'bad arguments: x', data: { field: 'x' } } });
  await h.upstream.connect();
  const error = await rejection(h.upstream.callTool('echo', {}));
  assert.ok(error instanceof UpstreamRpcError, String(error));
  assert.equal(error.code, -32602);
  assert.equal(error.message, 'bad arguments: x');
  assert.deepEqual(error.data, { field: 'x' });
  assert.equal(f.initializeCount, 1);
});

test('401 with a resource_metadata challenge needs OAuth, as does a bare Bearer challenge to a request without a token; a plain 401 to a token is an auth failure', {
  timeout: 20_000,
}, async (t) => {
  const f = await fixture(t);
  f.intercept = (req, res) => {
    const challenge =
      req.headers['authorization'] === 'Bearer wants-oauth'
        ? 'Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource", scope="x"'
        : 'Bearer realm="fixture"';
    res.writeHead(401, { 'www-authenticate': challenge }).end();
    return true;
  };
  const oauth = makeUpstream(f.url, { name: 'oauth' });
  oauth.store.set('oauth', 'wants-oauth');
  const plain = makeUpstream(f.url, { name: 'plain' });
  plain.store.set('plain', 'static-token');
  const tokenless = makeUpstream(f.url, { name: 'tokenless' });
  t.after(async () => {
    await oauth.upstream.close();
    await plain.upstream.close();
    await tokenless.upstream.close();
  });
  const needs = await rejection(oauth.upstream.connect());
  assert.ok(needs instanceof UpstreamNeedsAuthError, String(needs));
  assert.ok(!needs.message.includes('resource_metadata'), 'challenge parameters stay out of the message');
  assert.ok((await rejection(plain.upstream.connect())) instanceof UpstreamAuthFailedError);
  // No token sent and a Bearer challenge without resource_metadata: OAuth with well-known discovery.
  assert.ok((await rejection(tokenless.upstream.connect())) instanceof UpstreamNeedsAuthError);
});

test('a refused connection is a clear UpstreamConnectionError', { timeout: 20_000 }, async (t) => {
  const port = await freePort();
  const h = makeUpstream(`http://127.0.0.1:${port}/mcp`, { name: 'down' });
  h.store.set('down', 'tok-down-SECRET');
  t.after(() => h.upstream.close());
  const error = await rejection(h.upstream.connect());
  assert.ok(error instanceof UpstreamConnectionError, String(error));
  assert.equal(error.message, `Upstream 'down' is unreachable at http://127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
});

test('requests before connect fail without touching the upstream', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const h = makeUpstream(f.url);
  t.after(() => h.upstream.close());
  assert.match((await rejection(h.upstream.healthCheck())).message, /not connected/);
  assert.match((await rejection(h.upstream.callTool('echo', {}))).message, /not connected/);
  assert.equal(f.seen.length, 0);
  assert.equal(h.upstream.pid, null);
});
