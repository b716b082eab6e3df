/**
 * UpstreamRegistry logic with scripted in-process clients (the real transports have their own
 * tests, and the end-to-end tests run real upstreams through the worker). Timers are real but short.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import type { UpstreamServerWire } from '../../../shared/protocol/upstreamServer.js';
import { UpstreamRegistry } from '../../../workers/mcp/registry.js';
import { UpstreamNeedsAuthError, UpstreamRpcError } from '../../../workers/mcp/upstreamClient.js';
import type { UpstreamClient, UpstreamTool } from '../../../workers/mcp/upstreamClient.js';
import { waitFor } from '../../helpers/poll.js';

class ScriptedClient implements UpstreamClient {
  pid: number | null = null;
  tools: UpstreamTool[] = [{ name: 'echo', description: 'Echo it back', inputSchema: { type: 'object' } }];
  connectError: Error | null = null;
  healthError: Error | null = null;
  callResult: unknown = { content: [{ type: 'text', text: 'hi' }] };
  callError: Error | null = null;
  connects = 0;
  closed = 0;
  calls: Array<{ name: string; args: Record<string, unknown> }> = [];
  async connect(): Promise<UpstreamTool[]> {
    this.connects++;
    if (this.connectError) throw this.connectError;
    return this.tools;
  }
  async listTools(): Promise<UpstreamTool[]> {
    return this.tools;
  }
  async callTool(name: string, args: Record<string, unknown>): Promise<unknown> {
    this.calls.push({ name, args });
    if (this.callError) throw this.callError;
    return this.callResult;
  }
  async healthCheck(): Promise<UpstreamTool[] | null> {
    if (this.healthError) throw this.healthError;
    return this.tools;
  }
  capabilities: Record<string, unknown> = {};
  async request(): Promise<unknown> {
    return {};
  }
  async notify(): Promise<void> {}
  onNotification(): void {}
  setRequestHandler(): void {}
  async close(): Promise<void> {
    this.closed++;
  }
}

function server(name: string, extra: Partial<UpstreamServerWire> = {}): UpstreamServerWire {
  return { id: `id-${name}`, name, transport: { type: 'http', url: `http://example.test/${name}` }, enabled: true, timeout_secs: 30, ...extra };
}

function harness(opts: { healthIntervalMs?: number; minRetryMs?: number; breakerBaseMs?: number } = {}) {
  const clients = new Map<string, ScriptedClient>();
  const statuses: Array<[string, string]> = [];
  let toolsChanged = 0;
  const logs: string[] = [];
  const registry = new UpstreamRegistry({
    createClient: (s) => {
      const c = clients.get(s.name) ?? new ScriptedClient();
      clients.set(s.name, c);
      return c;
    },
    events: {
      status: (name, status) => statuses.push([name, status]),
      toolsChanged: () => toolsChanged++,
      log: (_level, msg) => logs.push(msg),
    },
    healthIntervalMs: opts.healthIntervalMs ?? 60_000,
    minRetryMs: { http: opts.minRetryMs ?? 20, stdio: opts.minRetryMs ?? 20 },
    breaker: { baseMs: opts.breakerBaseMs ?? 30, maxMs: Math.max(100, opts.breakerBaseMs ?? 0) },
  });
  const settle = async () => {
    for (let i = 0; i < 100 && !registry.settled; i++) await new Promise((r) => setTimeout(r, 5));
  };
  /** One health-checker tick now (the interval is left at 60 s so ticks come only from here). */
  const healthTick = () => (registry as unknown as { runHealthChecks(): Promise<void> }).runHealthChecks();
  return { registry, clients, statuses, logs, settle, healthTick, toolsChanged: () => toolsChanged };
}

test('aggregated_tools_empty_when_no_upstreams, and settled only after the boot connects are marked complete', () => {
  const { registry } = harness();
  assert.deepEqual(registry.mergedToolsJson(), { json: '[]', count: 0 });
  assert.equal(registry.settled, false);
  registry.markInitialConnectComplete();
  assert.equal(registry.settled, true);
  void registry.dispose();
});

test('aggregated_tools_prefixes_names, merges_multiple_upstreams and preserves descriptions byte for byte', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const odd = 'Reads a file.\n\n  Keeps “quotes”, \\backslashes\\ and \u2028 separators.';
  h.clients.set(
    'fs',
    Object.assign(new ScriptedClient(), {
      tools: [{ name: 'read_file', description: odd, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }],
    }),
  );
  h.registry.connect(server('everything'), null);
  h.registry.connect(server('fs'), null);
  h.registry.markInitialConnectComplete();
  await h.settle();
  const tools = JSON.parse(h.registry.mergedToolsJson().json) as UpstreamTool[];
  assert.deepEqual(
    tools.map((x) => x.name),
    ['everything__echo', 'fs__read_file'],
  );
  assert.equal(tools[1]!['description'], odd);
  assert.deepEqual(tools[1]!['annotations'], { readOnlyHint: true }, 'fields the hub does not know pass through');
});

test('connect_disabled_upstream_stays_disabled and lists nothing', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.registry.connect(server('off', { enabled: false }), null);
  h.registry.markInitialConnectComplete();
  assert.equal(h.registry.settled, true);
  assert.equal(h.registry.statusRows()[0]!.status, 'disabled');
  assert.equal(h.clients.size, 0, 'no client is even created');
  const out = await h.registry.call('off', 'echo', {});
  assert.match(out.json, /Upstream 'off' is disabled/);
});

test('connect_duplicate_returns_err and connect_self_referential_rejected', (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.registry.connect(server('a'), 9876);
  assert.throws(() => h.registry.connect(server('a'), 9876), /Upstream 'a' already registered/);
  assert.throws(
    () => h.registry.connect({ ...server('loop'), transport: { type: 'http', url: 'http://127.0.0.1:9876/mcp' } }, 9876),
    /Upstream 'loop' points to TUIC itself — circular proxy/,
  );
  h.registry.connect({ ...server('other'), transport: { type: 'http', url: 'http://127.0.0.1:9877/mcp' } }, 9876);
});

test('aggregated_tools_applies_deny_filter and proxy_tool_call_rejects_denied_tool_by_name', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.clients.set('gh', Object.assign(new ScriptedClient(), { tools: [{ name: 'delete_repo' }, { name: 'list_repos' }] }));
  h.registry.connect(server('gh', { tool_filter: { mode: 'deny', patterns: ['delete_*'] } }), null);
  h.registry.markInitialConnectComplete();
  await h.settle();
  assert.deepEqual(
    JSON.parse(h.registry.mergedToolsJson().json).map((x: UpstreamTool) => x.name),
    ['gh__list_repos'],
  );
  const out = await h.registry.call('gh', 'delete_repo', {});
  assert.match(out.json, /Tool 'delete_repo' on upstream 'gh' is blocked by its allow\/deny filter/);
  assert.equal(h.clients.get('gh')!.calls.length, 0, 'the call never reached the upstream');
});

test('a qualified name over 64 characters is reported and skipped', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const long = 'x'.repeat(61); // 'up__' + 61 = 65 characters
  h.clients.set('up', Object.assign(new ScriptedClient(), { tools: [{ name: long }, { name: 'ok' }] }));
  h.registry.connect(server('up'), null);
  h.registry.markInitialConnectComplete();
  await h.settle();
  assert.deepEqual(
    JSON.parse(h.registry.mergedToolsJson().json).map((x: UpstreamTool) => x.name),
    ['up__ok'],
  );
  assert.ok(
    h.logs.some((m) => m.includes(`up__${long}`) && m.includes('64')),
    h.logs.join('\n'),
  );
});

test('valid_upstream_call_tool_result_passes_through_unchanged; malformed_upstream_result_uses_compact_text_fallback', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const result = { content: [{ type: 'text', text: 'x' }], isError: true, structuredContent: { a: 1 }, _meta: { trace: 'z' }, extension: [1, 2] };
  h.clients.set('up', Object.assign(new ScriptedClient(), { callResult: result }));
  h.registry.connect(server('up'), null);
  await h.settle();
  const pass = await h.registry.call('up', 'echo', { message: 'hi' });
  assert.deepEqual(JSON.parse(pass.json), result);
  assert.equal(pass.upstreamError, false);
  assert.deepEqual(h.clients.get('up')!.calls, [{ name: 'echo', args: { message: 'hi' } }]);

  h.clients.get('up')!.callResult = { answer: 42 };
  const wrapped = JSON.parse((await h.registry.call('up', 'echo', {})).json);
  assert.deepEqual(wrapped, { content: [{ type: 'text', text: '{"answer":42}' }], isError: false });
});

test('a JSON-RPC error answer is an isError result and does not trip the breaker', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.clients.set('up', Object.assign(new ScriptedClient(), { callError: new UpstreamRpcError(-32602, 'bad args') }));
  h.registry.connect(server('up'), null);
  await h.settle();
  for (let i = 0; i < 5; i++) {
    const out = await h.registry.call('up', 'echo', {});
    assert.match(JSON.parse(out.json).content[0].text, /bad args/);
  }
  const row = h.registry.statusRows()[0]!;
  assert.equal(row.status, 'ready');
  assert.deepEqual([row.metrics.call_count, row.metrics.error_count], [5, 5]);
});

test('three transport failures open the circuit (unlisted, calls refused), a later success closes it', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const client = Object.assign(new ScriptedClient(), { callError: new Error('socket hang up') as Error | null });
  h.clients.set('up', client);
  h.registry.connect(server('up'), null);
  h.registry.markInitialConnectComplete();
  await h.settle();
  for (let i = 0; i < 3; i++) assert.match((await h.registry.call('up', 'echo', {})).json, /socket hang up/);
  assert.equal(h.registry.statusRows()[0]!.status, 'circuit_open');
  assert.equal(h.registry.mergedToolsJson().count, 0, 'only ready upstreams are listed');
  assert.match((await h.registry.call('up', 'echo', {})).json, /Circuit open for upstream 'up' \(backoff active, will retry\)/);
  client.callError = null;
  // The breaker's own probe runs once the (30 ms) backoff expires and finds the upstream healthy.
  for (let i = 0; i < 100 && h.registry.statusRows()[0]!.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(h.registry.statusRows()[0]!.status, 'ready');
  assert.equal(h.registry.mergedToolsJson().count, 1);
  assert.ok(h.statuses.some(([n, s]) => n === 'up' && s === 'circuit_open'));
});

test('a connect that keeps failing retries, opens the circuit, and is failed after the retries run out; reconnect recovers', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const client = Object.assign(new ScriptedClient(), { connectError: new Error('ECONNREFUSED') as Error | null });
  h.clients.set('down', client);
  h.registry.connect(server('down'), null);
  h.registry.markInitialConnectComplete();
  for (let i = 0; i < 400 && h.registry.statusRows()[0]!.status !== 'failed'; i++) await new Promise((r) => setTimeout(r, 10));
  const row = h.registry.statusRows()[0]!;
  assert.equal(row.status, 'failed');
  assert.equal(row.last_error, 'ECONNREFUSED');
  assert.equal(client.connects, 33, '3 handshakes per open, 11 opens');
  assert.match((await h.registry.call('down', 'echo', {})).json, /Upstream 'down' has failed — restart the server or reconnect/);
  client.connectError = null;
  h.registry.reconnect('down');
  await h.settle();
  assert.equal(h.registry.statusRows()[0]!.status, 'ready');
  assert.ok(client.closed >= 1, 'the old client was shut down');
});

/*
 * A failed health check of a ready upstream records `last_error`, opens the circuit or marks the
 * upstream failed, and emits status and tools-changed; tools/list lists only ready upstreams (the
 * others are silently omitted). The breaker itself opens on 3 consecutive failures, so a call is
 * still let through until then, and a successful tool call or health check resets the failure count
 * and closes the circuit. The recovery probe re-runs the
 * handshake (a dead stdio child is respawned, an HTTP session opened again).
 */
test('health_check_failure_records_last_error: the upstream leaves ready at once (unlisted, status + tools-changed), then the recovery probe re-runs the handshake', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const client = new ScriptedClient();
  h.clients.set('up', client);
  h.registry.connect(server('up'), null);
  h.registry.markInitialConnectComplete();
  await h.settle();
  assert.equal(h.registry.mergedToolsJson().count, 1);

  // The recovery handshake is held until the test has looked at the state in between.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let recoveryHandshakes = 0;
  const connect = client.connect.bind(client);
  client.connect = async () => {
    recoveryHandshakes++;
    await held;
    return connect();
  };
  client.healthError = new Error('child exited');
  client.tools = [{ name: 'echo' }, { name: 'added_after_respawn' }];
  const changesBefore = h.toolsChanged();
  void h.healthTick();

  await waitFor(
    () => h.registry.statusRows()[0]!.status === 'circuit_open',
    'a failed health check takes the upstream out of ready before any new handshake',
    2_000,
  );
  const row = h.registry.statusRows()[0]!;
  assert.equal(row.last_error, 'child exited');
  assert.equal(h.registry.mergedToolsJson().count, 0, 'tools/list no longer lists it');
  assert.deepEqual(h.statuses.at(-1), ['up', 'circuit_open']);
  assert.ok(h.toolsChanged() > changesBefore, 'tools-changed fired');

  await waitFor(() => recoveryHandshakes === 1, 'the recovery probe re-runs the handshake', 2_000);
  release();
  await waitFor(() => h.registry.statusRows()[0]!.status === 'ready', 'the recovered upstream is ready again', 2_000);
  const after = h.registry.statusRows()[0]!;
  assert.deepEqual(after.tools, ['echo', 'added_after_respawn'], 'the handshake re-listed the tools');
  assert.equal(after.last_error, null);
  assert.equal(h.registry.mergedToolsJson().count, 2);
  assert.equal(client.connects, 2, 'one recovery handshake');
});

test('after one failed health check the breaker is not open yet: a call goes through, its success restores ready, and no handshake is re-run on the proven connection', async (t) => {
  const h = harness({ minRetryMs: 40 });
  t.after(() => h.registry.dispose());
  const client = new ScriptedClient();
  h.clients.set('up', client);
  h.registry.connect(server('up'), null);
  await h.settle();
  client.healthError = new Error('timed out');
  await h.healthTick();
  assert.equal(h.registry.statusRows()[0]!.status, 'circuit_open');

  client.healthError = null;
  const out = await h.registry.call('up', 'echo', {});
  assert.equal(JSON.parse(out.json).content[0].text, 'hi', 'one failure does not refuse calls (the breaker opens on the third)');
  assert.equal(h.registry.statusRows()[0]!.status, 'ready');
  assert.equal(h.registry.mergedToolsJson().count, 1);
  // The recovery probe was due in 40 ms; the call proved the connection, so it is a plain health check now.
  await new Promise((r) => setTimeout(r, 80));
  await h.healthTick();
  assert.equal(client.connects, 1, 'a working connection is not torn down by a handshake (a stdio respawn would kill the child)');
  assert.equal(h.registry.statusRows()[0]!.status, 'ready');
});

test('a ready upstream that stays dead: the failed health check and two failed recovery handshakes are the three failures that open the breaker', async (t) => {
  const h = harness({ breakerBaseMs: 10_000 });
  t.after(() => h.registry.dispose());
  const client = new ScriptedClient();
  h.clients.set('up', client);
  h.registry.connect(server('up'), null);
  await h.settle();
  client.healthError = new Error('child exited');
  client.connectError = new Error('spawn failed');
  client.callError = new Error('dead');
  await h.healthTick();
  assert.equal(h.registry.statusRows()[0]!.status, 'circuit_open');
  await waitFor(() => client.connects === 3, 'two recovery handshakes after the first one', 2_000);
  await new Promise((r) => setTimeout(r, 50));
  assert.match((await h.registry.call('up', 'echo', {})).json, /Circuit open for upstream 'up' \(backoff active, will retry\)/);
  assert.equal(client.calls.length, 0, 'the breaker refused the call without reaching the upstream');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(client.connects, 3, 'nothing more until the 10 s backoff expires');
  const row = h.registry.statusRows()[0]!;
  assert.equal(row.status, 'circuit_open');
  assert.equal(row.last_error, 'spawn failed');
});

test('needs_auth does not trip the breaker and calls get the -32001 error string', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.clients.set('oauth', Object.assign(new ScriptedClient(), { connectError: new UpstreamNeedsAuthError('401 resource_metadata') }));
  h.registry.connect(server('oauth'), null);
  h.registry.markInitialConnectComplete();
  await h.settle();
  assert.equal(h.registry.statusRows()[0]!.status, 'needs_auth');
  const text = JSON.parse((await h.registry.call('oauth', 'x', {})).json).content[0].text;
  assert.deepEqual(JSON.parse(JSON.parse(text).error), {
    code: -32001,
    message:
      'Upstream \'oauth\' is awaiting OAuth authentication: authorize it with POST /mcp/upstreams/oauth/start {"name":"oauth"} and open the authorization_url it answers',
  });
  assert.equal(h.clients.get('oauth')!.connects, 1, 'no retry loop');
});

test('disconnect_emits_tools_changed_signal, unknown upstream and not-found errors', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.registry.connect(server('up'), null);
  await h.settle();
  const before = h.toolsChanged();
  h.registry.disconnect('up');
  assert.ok(h.toolsChanged() > before);
  assert.deepEqual(h.statuses.at(-1), ['up', 'disconnected']);
  assert.equal(h.clients.get('up')!.closed, 1);
  const notFound = (name: string) => (err: unknown) =>
    err instanceof SupervisorError && err.code === ErrorCode.UPSTREAM_NOT_FOUND && err.message === `Upstream '${name}' not found`;
  assert.throws(() => h.registry.disconnect('up'), notFound('up'));
  assert.throws(() => h.registry.reconnect('nope'), notFound('nope'));
  assert.match((await h.registry.call('nope', 'x', {})).json, /Unknown upstream 'nope'/);
});

test('a call during the first handshake waits for it instead of failing', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const client = new ScriptedClient();
  const connect = client.connect.bind(client);
  client.connect = async () => {
    await gate;
    return connect();
  };
  h.clients.set('slow', client);
  h.registry.connect(server('slow'), null);
  const pending = h.registry.call('slow', 'echo', {});
  setTimeout(release, 20);
  assert.equal(JSON.parse((await pending).json).content[0].text, 'hi');
});
