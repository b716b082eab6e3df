/**
 * UpstreamRegistry's protocol-2 logic with scripted in-process clients: forwarded requests and their
 * refusals, the route an upstream's request is sent with, notifications as the clients see them,
 * the merged lists of two upstreams, the log level and client notifications. The real transports
 * against server-everything are in registry.everything.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { UpstreamServerWire } from '../../../shared/protocol/upstreamServer.js';
import { UpstreamRegistry } from '../../../workers/mcp/registry.js';
import {
  type NotificationListener,
  type ProgressListener,
  type ServerRequestHandler,
  type UpstreamClient,
  type UpstreamRequestOptions,
  UpstreamRpcError,
  type UpstreamTool,
} from '../../../workers/mcp/upstreamClient.js';
import { waitFor } from '../../helpers/poll.js';

class ScriptedClient implements UpstreamClient {
  pid: number | null = null;
  capabilities: Record<string, unknown> = { resources: { subscribe: true }, prompts: {}, logging: {} };
  lists: Record<string, unknown> = {
    'resources/list': { resources: [{ uri: 'file:///README.md', name: 'readme', mimeType: 'text/markdown' }] },
    'resources/templates/list': { resourceTemplates: [{ uriTemplate: 'item://{id}', name: 'item' }] },
    'prompts/list': { prompts: [{ name: 'greet', arguments: [{ name: 'who' }] }] },
  };
  requests: Array<{ method: string; params: Record<string, unknown> | undefined }> = [];
  notified: Array<{ method: string; params: Record<string, unknown> | undefined }> = [];
  /** Resolves a pending request by method, when set; else answers at once. */
  hold: Map<string, (answer: unknown) => void> = new Map();
  fail: Error | null = null;
  listener: NotificationListener | undefined;
  handler: ServerRequestHandler | undefined;
  progress: ProgressListener | undefined;
  async connect(): Promise<UpstreamTool[]> {
    return [{ name: 'work' }];
  }
  async listTools(): Promise<UpstreamTool[]> {
    return [{ name: 'work' }];
  }
  callTool(name: string, args: Record<string, unknown>, _c?: unknown, onProgress?: ProgressListener): Promise<unknown> {
    return this.request('tools/call', { name, arguments: args }, onProgress ? { onProgress } : {});
  }
  async healthCheck(): Promise<UpstreamTool[] | null> {
    return null;
  }
  async request(method: string, params: Record<string, unknown> | undefined, options: UpstreamRequestOptions = {}): Promise<unknown> {
    this.requests.push({ method, params });
    if (options.onProgress) this.progress = options.onProgress;
    if (this.fail) throw this.fail;
    if (method in this.lists) return this.lists[method];
    if (method === 'tools/call' || method === 'resources/read') {
      const key = method === 'tools/call' ? String(params?.['name']) : String(params?.['uri']);
      if (key.startsWith('hold')) return new Promise((resolve) => this.hold.set(key, resolve));
    }
    if (method === 'prompts/get') throw new UpstreamRpcError(-32602, 'no such prompt', { name: params?.['name'] });
    return { method };
  }
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    this.notified.push({ method, params });
  }
  onNotification(listener: NotificationListener): void {
    this.listener = listener;
  }
  setRequestHandler(handler: ServerRequestHandler): void {
    this.handler = handler;
  }
  async close(): Promise<void> {}
}

function server(name: string): UpstreamServerWire {
  return { id: `id-${name}`, name, transport: { type: 'http', url: `http://example.test/${name}` }, enabled: true, timeout_secs: 30 };
}

function harness() {
  const clients = new Map<string, ScriptedClient>();
  const notified: Array<[string, string, Record<string, unknown> | undefined, string | undefined]> = [];
  const asked: Array<[string, string, string | undefined]> = [];
  let listsChanged = 0;
  const registry = new UpstreamRegistry({
    createClient: (s) => {
      const c = clients.get(s.name) ?? new ScriptedClient();
      clients.set(s.name, c);
      return c;
    },
    events: {
      status: () => {},
      toolsChanged: () => {},
      log: () => {},
      listsChanged: () => listsChanged++,
      notification: (upstream, method, params, route) => notified.push([upstream, method, params, route]),
      clientRequest: async (upstream, method, _params, route) => {
        asked.push([upstream, method, route]);
        return { answered: route ?? null };
      },
    },
    healthIntervalMs: 60_000,
    minRetryMs: { http: 20, stdio: 20 },
  });
  const ready = (name: string) => waitFor(() => registry.statusRows().find((r) => r.name === name)?.status === 'ready', `${name} ready`);
  return { registry, clients, notified, asked, ready, listsChanged: () => listsChanged };
}

test('the merged lists: each upstream namespaced, in registration order, capabilities aggregated; a failed list keeps the last one', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const b = new ScriptedClient();
  b.capabilities = { completions: {} };
  h.clients.set('b', b);
  h.registry.connect(server('a'), null);
  h.registry.connect(server('b'), null);
  await h.ready('a');
  await h.ready('b');
  await waitFor(() => h.registry.mergedListsJson().prompts !== '[]', 'the lists fetched');
  const merged = h.registry.mergedListsJson();
  assert.deepEqual(JSON.parse(merged.resources), [{ uri: 'tuic://a/file:///README.md', name: 'readme', mimeType: 'text/markdown' }]);
  assert.deepEqual(JSON.parse(merged.resourceTemplates), [{ uriTemplate: 'tuic://a/item://{id}', name: 'item' }]);
  assert.deepEqual(JSON.parse(merged.prompts), [{ name: 'a__greet', arguments: [{ name: 'who' }] }]);
  assert.deepEqual(merged.capabilities, { resources: true, subscribe: true, prompts: true, completions: true, logging: true });
  assert.ok(h.listsChanged() > 0);
  assert.ok(!b.requests.some((r) => r.method.endsWith('/list')), 'b declares neither resources nor prompts: nothing asked');

  // list_changed from a: fetched again; a failure keeps what was listed.
  const a = h.clients.get('a')!;
  a.fail = new Error('boom');
  const before = a.requests.length;
  a.listener!('notifications/prompts/list_changed', undefined);
  await waitFor(() => a.requests.length >= before + 3, 'the lists fetched again');
  assert.equal(h.registry.mergedListsJson().prompts, merged.prompts);
  a.fail = null;
  a.lists['prompts/list'] = { prompts: [{ name: 'bye' }] };
  a.listener!('notifications/resources/list_changed', undefined);
  await waitFor(() => h.registry.mergedListsJson().prompts === '[{"name":"a__bye"}]', 'the new prompt list');

  // Leaving ready unlists it.
  h.registry.disconnect('a');
  assert.equal(h.registry.mergedListsJson().resources, '[]');
  assert.deepEqual(h.registry.mergedListsJson().capabilities, { resources: false, subscribe: false, prompts: false, completions: true, logging: false });
});

test('forward: refusals as JSON-RPC errors, the upstream error as it answered, the result raw', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const a = new ScriptedClient();
  a.capabilities = { resources: {}, prompts: {} };
  h.clients.set('a', a);
  h.registry.connect(server('a'), null);
  await h.ready('a');
  assert.deepEqual(await h.registry.forward('a', 'resources/read', { uri: 'file:///x' }), { json: '{"method":"resources/read"}' });
  assert.deepEqual(await h.registry.forward('a', 'prompts/get', { name: 'nope' }), {
    error: { code: -32602, message: 'no such prompt', data: { name: 'nope' } },
  });
  assert.deepEqual(await h.registry.forward('a', 'resources/subscribe', { uri: 'file:///x' }), {
    error: { code: -32601, message: "Upstream 'a' does not support resources/subscribe (no 'resources.subscribe' capability)" },
  });
  assert.deepEqual(await h.registry.forward('a', 'completion/complete', {}), {
    error: { code: -32601, message: "Upstream 'a' does not support completion/complete (no 'completions' capability)" },
  });
  assert.deepEqual(await h.registry.forward('zz', 'resources/read', {}), { error: { code: -32602, message: "Unknown upstream 'zz'" } });
  h.registry.setAuthStatus('a', 'needs_auth', null);
  const auth = await h.registry.forward('a', 'resources/read', { uri: 'file:///x' });
  assert.ok('error' in auth && auth.error.code === -32603 && /awaiting OAuth authentication/.test(auth.error.message), JSON.stringify(auth));
  h.registry.setAuthStatus('a', 'ready', null);
  // Transport failures count toward the breaker; the third opens the circuit and the fourth is refused.
  a.fail = new Error('connection reset');
  for (let i = 0; i < 3; i++) {
    const failed = await h.registry.forward('a', 'resources/read', { uri: 'file:///x' });
    assert.ok('error' in failed && failed.error.code === -32603 && /connection reset/.test(failed.error.message), JSON.stringify(failed));
  }
  const open = await h.registry.forward('a', 'resources/read', { uri: 'file:///x' });
  assert.ok('error' in open && open.error.code === -32603 && /Circuit open/.test(open.error.message), JSON.stringify(open));
});

test("an upstream's request goes with the most recent routed request still in flight, else the last route used; other methods are refused", async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.registry.connect(server('a'), null);
  await h.ready('a');
  const a = h.clients.get('a')!;
  assert.deepEqual(await a.handler!('roots/list', undefined), { answered: null }, 'no route yet: asked without one');
  const first = h.registry.call('a', 'hold-1', {}, undefined, { route: 'r1' });
  const second = h.registry.forward('a', 'resources/read', { uri: 'hold-2' }, { route: 'r2' });
  const unrouted = h.registry.call('a', 'hold-3', {});
  await waitFor(() => a.hold.size === 3, 'three requests in flight');
  assert.deepEqual(await a.handler!('sampling/createMessage', {}), { answered: 'r2' });
  a.hold.get('hold-2')!({ contents: [] });
  await second;
  assert.deepEqual(await a.handler!('elicitation/create', {}), { answered: 'r1' }, 'r2 is over: r1 is still open');
  a.hold.get('hold-1')!({ content: [] });
  await first;
  assert.deepEqual(await a.handler!('roots/list', {}), { answered: 'r2' }, 'none open: the last route used');
  a.hold.get('hold-3')!({ content: [] });
  await unrouted;
  await assert.rejects(a.handler!('tools/list', {}), (err: unknown) => err instanceof UpstreamRpcError && err.code === -32601);
  assert.deepEqual(
    h.asked.map((x) => x[2]),
    [undefined, 'r2', 'r1', 'r2'],
  );
});

test('notifications: progress with the client token on its route, log messages and resource updates without one, updates namespaced', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  h.registry.connect(server('a'), null);
  await h.ready('a');
  const a = h.clients.get('a')!;
  const call = h.registry.call('a', 'hold-p', {}, undefined, { route: 'r9', progressToken: 'tok' });
  await waitFor(() => a.hold.size === 1, 'the call in flight');
  a.progress!({ progressToken: 'tuicd-1', progress: 1, total: 3 });
  a.hold.get('hold-p')!({ content: [] });
  await call;
  a.listener!('notifications/message', { level: 'info', data: 'hello' });
  a.listener!('notifications/resources/updated', { uri: 'file:///README.md' });
  a.listener!('notifications/cancelled', { requestId: 1 });
  assert.deepEqual(h.notified, [
    ['a', 'notifications/progress', { progressToken: 'tok', progress: 1, total: 3 }, 'r9'],
    ['a', 'notifications/message', { level: 'info', data: 'hello' }, undefined],
    ['a', 'notifications/resources/updated', { uri: 'tuic://a/file:///README.md' }, undefined],
  ]);
  // Without a route or token, no progress is asked for.
  await h.registry.call('a', 'plain', {});
  assert.equal(a.requests.at(-1)!.method, 'tools/call');
});

test('setLogLevel reaches the ready upstreams that declare logging, and later ones after their handshake; notifyUpstreams every ready one', async (t) => {
  const h = harness();
  t.after(() => h.registry.dispose());
  const quiet = new ScriptedClient();
  quiet.capabilities = {};
  h.clients.set('quiet', quiet);
  h.registry.connect(server('a'), null);
  h.registry.connect(server('quiet'), null);
  await h.ready('a');
  await h.ready('quiet');
  h.registry.setLogLevel('notice');
  const a = h.clients.get('a')!;
  await waitFor(() => a.requests.some((r) => r.method === 'logging/setLevel'), 'setLevel sent');
  assert.deepEqual(a.requests.find((r) => r.method === 'logging/setLevel')!.params, { level: 'notice' });
  assert.ok(!quiet.requests.some((r) => r.method === 'logging/setLevel'));
  h.registry.connect(server('late'), null);
  await h.ready('late');
  await waitFor(() => h.clients.get('late')!.requests.some((r) => r.method === 'logging/setLevel'), 'setLevel sent after the handshake');
  h.registry.notifyUpstreams('notifications/roots/list_changed', undefined);
  await waitFor(() => [a, quiet, h.clients.get('late')!].every((c) => c.notified.length === 1), 'every ready upstream notified');
  assert.deepEqual(a.notified, [{ method: 'notifications/roots/list_changed', params: undefined }]);
});
