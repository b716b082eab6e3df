/**
 * The parts of /mcp's upstream methods that need more entries or clients than a real upstream
 * offers in a test: list paging and cursors over 250 resources, subscriptions counted across
 * sessions (the upstream hears the first subscribe and the last unsubscribe, and a session that
 * goes away), the log level upstreams are set to, and the refusals of questions to clients that
 * did not declare the capability. The source records what would go to the hub; the hub end to end
 * is in test/supervisor/upstreams/hubPrimitives.test.ts and hubClientRequests.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { toDisposable } from '../../../shared/disposable.js';
import type { McpLogLevel } from '../../../shared/protocol/mcpHub.js';
import { ClientExchanges } from '../../../supervisor/mcp/clientExchanges.js';
import { LIST_PAGE_SIZE, PrimitiveMethods } from '../../../supervisor/mcp/primitiveMethods.js';
import { McpSessionStore } from '../../../supervisor/mcp/protocolSessions.js';
import { EMPTY_LISTS, type HubLists, type RpcOutcome, type UpstreamPrimitiveSource } from '../../../supervisor/mcp/upstreamPrimitives.js';

class RecordingSource implements UpstreamPrimitiveSource {
  readonly sent: Array<{ upstream: string; method: string; params: unknown }> = [];
  readonly levels: McpLogLevel[] = [];
  constructor(private readonly merged: HubLists) {}
  lists(): HubLists {
    return this.merged;
  }
  onListsChanged() {
    return toDisposable(() => {});
  }
  async request(upstream: string, method: string, paramsJson: string): Promise<RpcOutcome> {
    this.sent.push({ upstream, method, params: JSON.parse(paramsJson) });
    return { resultJson: method === 'resources/read' ? JSON.stringify({ contents: [{ uri: 'x://1', text: 'one' }] }) : '{}' };
  }
  async setLogLevel(level: McpLogLevel): Promise<void> {
    this.levels.push(level);
  }
  async notifyUpstreams(): Promise<void> {}
  onNotification() {
    return toDisposable(() => {});
  }
  setClientRequestHandler(): void {}
}

const resources = Array.from({ length: 250 }, (_, i) => ({ uri: `tuic://${i % 2 ? 'odd' : 'even'}/x://${i}`, name: `r${i}` }));

function setup() {
  const sessions = new McpSessionStore({ sweepIntervalMs: 3_600_000 });
  const source = new RecordingSource({ ...EMPTY_LISTS, resources });
  return { sessions, source, methods: new PrimitiveMethods(source, sessions) };
}

describe('upstream methods on /mcp', () => {
  it('pages a long list in order with opaque cursors, and refuses a cursor it did not hand out', async () => {
    const { methods, sessions } = setup();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const outcome = await methods.handle('resources/list', cursor === undefined ? {} : { cursor }, { meta: null, allowlist: null });
      const page = JSON.parse(outcome.resultJson!) as { resources: Array<{ uri: string }>; nextCursor?: string };
      assert.ok(page.resources.length <= LIST_PAGE_SIZE);
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    assert.equal(pages, 3);
    assert.deepEqual(
      seen,
      resources.map((r) => r.uri),
    );
    for (const bad of ['nonsense', Buffer.from('prompts:0').toString('base64url'), 7]) {
      const refused = await methods.handle('resources/list', { cursor: bad }, { meta: null, allowlist: null });
      assert.equal(refused.error?.code, -32602, JSON.stringify(bad));
    }
    sessions.dispose();
  });

  it('a project allowlist narrows the list and refuses reads of other upstreams', async () => {
    const { methods, sessions, source } = setup();
    const odd = await methods.handle('resources/list', {}, { meta: null, allowlist: new Set(['odd']) });
    const listed = (JSON.parse(odd.resultJson!) as { resources: Array<{ uri: string }> }).resources;
    assert.equal(listed.length, LIST_PAGE_SIZE);
    assert.ok(listed.every((r) => r.uri.startsWith('tuic://odd/')));
    const refused = await methods.handle('resources/read', { uri: 'tuic://even/x://0' }, { meta: null, allowlist: new Set(['odd']) });
    assert.match(refused.error?.message ?? '', /not enabled for this project/);
    assert.deepEqual(source.sent, []);
    sessions.dispose();
  });

  it('reads route to the owner with its own URI and come back namespaced', async () => {
    const { methods, sessions, source } = setup();
    const read = await methods.handle('resources/read', { uri: 'tuic://odd/x://1', _meta: { progressToken: 5 } }, { meta: null, allowlist: null });
    assert.deepEqual(source.sent, [{ upstream: 'odd', method: 'resources/read', params: { uri: 'x://1' } }]);
    assert.deepEqual(JSON.parse(read.resultJson!), { contents: [{ uri: 'tuic://odd/x://1', text: 'one' }] });
    sessions.dispose();
  });

  it('subscriptions are counted per URI: the upstream hears the first subscribe and the last unsubscribe, or the last subscriber going away', async () => {
    const { methods, sessions, source } = setup();
    const one = sessions.create('one');
    const two = sessions.create('two');
    const uri = 'tuic://odd/x://1';
    await methods.handle('resources/subscribe', { uri }, { meta: one, allowlist: null });
    await methods.handle('resources/subscribe', { uri }, { meta: two, allowlist: null });
    assert.deepEqual([...methods.subscribersOf(uri)], ['one', 'two']);
    await methods.handle('resources/unsubscribe', { uri }, { meta: one, allowlist: null });
    assert.deepEqual(
      source.sent.map((s) => s.method),
      ['resources/subscribe'],
    );
    methods.dropSession('two');
    assert.deepEqual(
      source.sent.map((s) => s.method),
      ['resources/subscribe', 'resources/unsubscribe'],
    );
    assert.deepEqual([...methods.subscribersOf(uri)], []);
    sessions.dispose();
  });

  it('upstreams log at the lowest level any live client asked for; an unknown level is refused', async () => {
    const { methods, sessions, source } = setup();
    const quiet = sessions.create('quiet');
    const chatty = sessions.create('chatty');
    await methods.handle('logging/setLevel', { level: 'error' }, { meta: quiet, allowlist: null });
    await methods.handle('logging/setLevel', { level: 'debug' }, { meta: chatty, allowlist: null });
    await methods.handle('logging/setLevel', { level: 'warning' }, { meta: quiet, allowlist: null });
    assert.deepEqual(source.levels, ['error', 'debug', 'debug']);
    sessions.delete('chatty');
    methods.dropSession('chatty');
    assert.equal(source.levels.at(-1), 'warning');
    assert.equal((await methods.handle('logging/setLevel', { level: 'loud' }, { meta: quiet, allowlist: null })).error?.code, -32602);
    sessions.dispose();
  });
});

describe('questions from upstreams to clients', () => {
  it('a client is asked only for what it declared; its answer settles the question and only its own session can answer', async () => {
    const sessions = new McpSessionStore({ sweepIntervalMs: 3_600_000 });
    const pushed: Array<{ session: string; json: string }> = [];
    const exchanges = new ClientExchanges({ sessions, push: (session, json) => (pushed.push({ session, json }), true) });
    const plain = sessions.create('plain');
    const able = sessions.create('able', { sampling: true, form_elicitation: true, roots: true });
    assert.equal((await exchanges.ask('u', 'sampling/createMessage', `${plain.id} 0`, '{}')).error?.code, -32601);
    assert.equal((await exchanges.ask('u', 'elicitation/create', `${able.id} 0`, '{"mode":"url"}')).error?.code, -32602);
    assert.equal((await exchanges.ask('u', 'ping', `${able.id} 0`, '{}')).error?.code, -32601);
    assert.equal((await exchanges.ask('u', 'roots/list', undefined, '{}')).error?.code, -32603);

    const asked = exchanges.ask('u', 'roots/list', `${able.id} 0`, '{}');
    assert.equal(pushed.length, 1);
    const request = JSON.parse(pushed[0]!.json) as { id: string; method: string };
    assert.equal(pushed[0]!.session, 'able');
    assert.equal(request.method, 'roots/list');
    assert.equal(exchanges.answer('plain', { kind: 'response', id: request.id, result: { roots: [] } }), false, 'another session cannot answer');
    assert.equal(exchanges.answer('able', { kind: 'response', id: request.id, result: { roots: [{ uri: 'file:///r' }] } }), true);
    assert.deepEqual(JSON.parse((await asked).resultJson!), { roots: [{ uri: 'file:///r' }] });

    const dropped = exchanges.ask('u', 'sampling/createMessage', `${able.id} 1`, '{}');
    exchanges.dropSession('able');
    assert.match((await dropped).error?.message ?? '', /session ended/);
    sessions.dispose();
  });
});
