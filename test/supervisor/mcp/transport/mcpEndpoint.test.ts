// POST/GET/DELETE /mcp on a real tuicd over the unix socket: negotiation, session ids and their log
// records, sessionless calls, stale-id recovery, every JSON-RPC error, streams and their generation
// guard, Grok's session-local surface, and the mcp_server_enabled switch.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { initialize, JSON_HEADERS, McpStream, rpc, waitForStatus } from './mcpHttp.js';

const LIST_CHANGED = 'notifications/tools/list_changed';

describe('/mcp over the unix socket', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start();
  });
  after(() => t.stop());

  const openStream = (sessionId: string) => McpStream.open({ socketPath: t.socketPath, headers: { 'Mcp-Session-Id': sessionId, Accept: 'text/event-stream' } });
  const post = (body: string, headers: Record<string, string> = {}) => t.socket('POST', '/mcp', body, { ...JSON_HEADERS, ...headers });

  describe('initialize', () => {
    for (const version of ['2026-07-28', '2025-11-25', '2025-03-26']) {
      it(`echoes protocol version ${version}`, async () => {
        const { answer } = await initialize(t, { protocolVersion: version });
        assert.equal(answer.status, 200);
        assert.match(String(answer.headers['content-type']), /^application\/json/);
        assert.equal(answer.json().result.protocolVersion, version);
      });
    }

    it('answers 2025-11-25 for an unknown version and for none', async () => {
      assert.equal((await initialize(t, { protocolVersion: '2024-11-05' })).answer.json().result.protocolVersion, '2025-11-25');
      const none = await rpc(t, 'initialize', { clientInfo: { name: 'no-version' } });
      assert.equal(none.json().result.protocolVersion, '2025-11-25');
      const noParams = await rpc(t, 'initialize');
      assert.equal(noParams.json().result.protocolVersion, '2025-11-25');
    });

    it('declares tools.listChanged and claude/channel, names the server and carries the instructions', async () => {
      const { answer } = await initialize(t);
      const body = answer.json();
      assert.equal(body.jsonrpc, '2.0');
      assert.deepEqual(body.result.capabilities, { tools: { listChanged: true }, experimental: { 'claude/channel': {} } });
      assert.equal(body.result.serverInfo.name, 'tuicommander');
      assert.equal(typeof body.result.serverInfo.version, 'string');
      assert.match(body.result.instructions, /^# TUICommander v/);
      assert.match(body.result.instructions, /Submit:/);
    });

    it('mints a fresh id, resumes a held one, and replaces an unknown one — logging each arrival', async () => {
      const fresh = await initialize(t, { clientInfo: { name: 'log-probe-fresh' } });
      await t.waitForStderr(new RegExp(`"source":"mcp_initialize","event":"fresh","session_id":"${fresh.id}"`));

      const resumed = await initialize(t, { clientInfo: { name: 'log-probe-resumed' } }, { 'Mcp-Session-Id': fresh.id });
      assert.equal(resumed.id, fresh.id, 'a held id is kept');
      await t.waitForStderr(new RegExp(`"event":"resumed","session_id":"${fresh.id}"`));

      const stale = 'f0f0f0f0-dead-4bad-8bad-000000000001';
      const reconnected = await initialize(t, {}, { 'Mcp-Session-Id': stale });
      assert.notEqual(reconnected.id, stale, 'an unknown id is replaced by a new one');
      assert.match(reconnected.id, /^[0-9a-f-]{36}$/);
      await t.waitForStderr(new RegExp(`"event":"reconnected","session_id":"${reconnected.id}"[^\\n]*"presented_session":"${stale}"`));
    });
  });

  it('answers notifications with 202 and no body, with or without a session', async () => {
    const { id } = await initialize(t);
    const withSession = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'Mcp-Session-Id': id });
    assert.equal(withSession.status, 202);
    assert.equal(withSession.text, '');
    const without = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }));
    assert.equal(without.status, 202);
    assert.equal(without.text, '');
  });

  it('answers ping with {} with or without a session, echoing a presented id', async () => {
    const bare = await rpc(t, 'ping');
    assert.equal(bare.status, 200);
    assert.deepEqual(bare.json().result, {});
    assert.equal(bare.headers['mcp-session-id'], undefined);
    const { id } = await initialize(t);
    const withSession = await rpc(t, 'ping', undefined, { 'Mcp-Session-Id': id });
    assert.deepEqual(withSession.json().result, {});
    assert.equal(withSession.headers['mcp-session-id'], id);
  });

  it('serves tools/list and tools/call to a caller with no session (plain curl)', async () => {
    const list = await rpc(t, 'tools/list');
    assert.equal(list.status, 200);
    const names = list.json().result.tools.map((tool: { name: string }) => tool.name);
    assert.ok(names.includes('session'), `classic surface lists the native tools: ${names}`);
    assert.ok(!names.includes('config') && !names.includes('debug'), 'config and debug are disabled by default');
    assert.ok(!names.includes('search_tools'), 'classic lists no meta-tools');

    const call = await rpc(t, 'tools/call', { name: 'session', arguments: { action: 'list' } });
    assert.equal(call.status, 200);
    const result = call.json().result;
    assert.equal(result.isError, false);
    assert.ok(Array.isArray(JSON.parse(result.content[0].text)));
  });

  it('answers tool failures as isError results, never as JSON-RPC errors', async () => {
    const unknown = (await rpc(t, 'tools/call', { name: 'no_such_tool' })).json().result;
    assert.equal(unknown.isError, true);
    assert.match(JSON.parse(unknown.content[0].text).error, /^Unknown tool 'no_such_tool'\. Available: session, /);

    const disabled = (await rpc(t, 'tools/call', { name: 'debug', arguments: { action: 'help' } })).json().result;
    assert.equal(disabled.isError, true);
    assert.deepEqual(JSON.parse(disabled.content[0].text), { error: "Tool 'debug' is disabled by configuration", code: 'forbidden' });

    const upstream = (await rpc(t, 'tools/call', { name: 'github__create_issue', arguments: {} })).json().result;
    assert.equal(upstream.isError, true);
    // The hub's own answer (it has the upstream list), passed through as it is.
    assert.deepEqual(JSON.parse(upstream.content[0].text), { error: "Unknown upstream 'github'", code: 'not_found' });

    // No arguments at all: defaults to {}, so the tool itself says what is missing.
    const noArgs = (await rpc(t, 'tools/call', { name: 'session' })).json().result;
    assert.equal(noArgs.isError, true);
    assert.match(JSON.parse(noArgs.content[0].text).error, /Missing required 'action' for tool 'session'/);
    assert.equal(JSON.parse(noArgs.content[0].text).code, 'invalid_input');

    // A wrong-typed argument: refused by the tool's input schema before its handler runs.
    const mistyped = (await rpc(t, 'tools/call', { name: 'session', arguments: { action: 'output', session_id: 'x', limit: 'all' } })).json().result;
    assert.equal(mistyped.isError, true);
    assert.deepEqual(JSON.parse(mistyped.content[0].text), { error: '\'limit\' must be an integer >= 1, got "all"', code: 'invalid_input', field: 'limit' });
  });

  it('recovers a stale session id on tools/call and tools/list silently, echoing it', async () => {
    const stale = 'stale-session-from-before-a-restart';
    const call = await rpc(t, 'tools/call', { name: 'session', arguments: { action: 'list' } }, { 'Mcp-Session-Id': stale });
    assert.equal(call.status, 200);
    assert.equal(call.json().result.isError, false);
    assert.equal(call.headers['mcp-session-id'], stale);
    const list = await rpc(t, 'tools/list', undefined, { 'Mcp-Session-Id': stale });
    assert.equal(list.status, 200);
    assert.equal(list.headers['mcp-session-id'], stale);
    // Now held: presenting it at initialize resumes it.
    assert.equal((await initialize(t, {}, { 'Mcp-Session-Id': stale })).id, stale);
  });

  describe('JSON-RPC errors', () => {
    it('-32700 for malformed JSON (400, id null)', async () => {
      const r = await post('{"jsonrpc":"2.0","id":1,');
      assert.equal(r.status, 400);
      const body = r.json();
      assert.equal(body.error.code, -32700);
      assert.equal(body.id, null);
    });

    it('-32600 for an empty batch, a non-object, a wrong jsonrpc and a bad method, echoing usable ids (400)', async () => {
      const cases: Array<[string, unknown]> = [
        ['[]', null],
        ['"ping"', null],
        [JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'ping' }), 7],
        [JSON.stringify({ id: 'abc', method: 'ping' }), 'abc'],
        [JSON.stringify({ jsonrpc: '2.0', id: 8, method: 42 }), 8],
        [JSON.stringify({ jsonrpc: '2.0', id: { nested: true }, method: 'ping' }), null],
      ];
      for (const [body, id] of cases) {
        const r = await post(body);
        assert.equal(r.status, 400, body);
        assert.equal(r.json().error.code, -32600, body);
        assert.deepEqual(r.json().error.data, { code: 'invalid_input' }, body);
        assert.equal(r.json().id, id, body);
        assert.match(r.json().error.message, /^Invalid Request: /);
      }
    });

    it('-32601 for server/discover and any unknown method (200, id echoed)', async () => {
      for (const method of ['server/discover', 'sampling/createMessage', 'no/such']) {
        const r = await post(JSON.stringify({ jsonrpc: '2.0', id: `m-${method}`, method }));
        assert.equal(r.status, 200);
        assert.deepEqual(r.json(), {
          jsonrpc: '2.0',
          id: `m-${method}`,
          error: { code: -32601, message: `Method not found: ${method}`, data: { code: 'not_found' } },
        });
      }
    });

    it('-32602 for tools/call without a string name, with non-object arguments, and for positional params (200, id echoed)', async () => {
      const cases: object[] = [
        { jsonrpc: '2.0', id: 21, method: 'tools/call', params: {} },
        { jsonrpc: '2.0', id: 22, method: 'tools/call', params: { name: 5 } },
        { jsonrpc: '2.0', id: 23, method: 'tools/call', params: { name: 'session', arguments: ['list'] } },
        { jsonrpc: '2.0', id: 24, method: 'tools/call', params: { name: 'session', arguments: 'list' } },
        { jsonrpc: '2.0', id: 25, method: 'tools/call' },
        { jsonrpc: '2.0', id: 26, method: 'tools/list', params: [1] },
      ];
      for (const c of cases) {
        const r = await post(JSON.stringify(c));
        assert.equal(r.status, 200, JSON.stringify(c));
        assert.equal(r.json().error.code, -32602, JSON.stringify(c));
        assert.deepEqual(r.json().error.data, { code: 'invalid_input' }, JSON.stringify(c));
        assert.equal(r.json().id, (c as { id: number }).id);
      }
    });

    it('refuses a malformed Mcp-Session-Id with 400', async () => {
      const r = await rpc(t, 'ping', undefined, { 'Mcp-Session-Id': 'x'.repeat(300) });
      assert.equal(r.status, 400);
      assert.equal(r.json().error.code, -32000);
      assert.deepEqual(r.json().error.data, { code: 'invalid_input' });
    });
  });

  it('always answers JSON whatever the Accept header lists', async () => {
    const r = await t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
    });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
  });

  describe('GET /mcp streams', () => {
    it('answers 400 without Mcp-Session-Id (a 401 would need WWW-Authenticate; nothing here is about credentials)', async () => {
      const r = await t.socket('GET', '/mcp', undefined, { Accept: 'text/event-stream' });
      assert.equal(r.status, 400);
      assert.equal(r.headers['www-authenticate'], undefined);
      assert.match(String(r.headers['content-type']), /^application\/json/);
      assert.deepEqual(r.json(), {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: 'Bad Request: GET /mcp requires an Mcp-Session-Id header (call initialize first)',
          data: { code: 'invalid_input' },
        },
      });
    });

    it('streams list_changed to every open stream when PUT /config changes a surface', async () => {
      const a = await initialize(t);
      const b = await initialize(t);
      const sa = await openStream(a.id);
      const sb = await openStream(b.id);
      try {
        assert.equal(sa.status, 200);
        assert.match(String(sa.headers['content-type']), /^text\/event-stream/);
        assert.equal(sa.headers['content-encoding'], undefined);
        assert.equal(sa.headers['mcp-session-id'], a.id);
        await waitForStatus(t, (s) => s.sse_streams >= 2);
        assert.equal((await t.socket('PUT', '/config', JSON.stringify({ collapse_tools: true }))).status, 200);
        await sa.waitForMethod(LIST_CHANGED);
        await sb.waitForMethod(LIST_CHANGED);
        assert.deepEqual(JSON.parse(sa.messages[0]!.data), { jsonrpc: '2.0', method: LIST_CHANGED });
        assert.equal(sa.messages[0]!.event, 'message');
        const collapsed = (await rpc(t, 'tools/list')).json().result.tools.map((tool: { name: string }) => tool.name);
        assert.deepEqual(collapsed, ['search_tools', 'get_tool_schema', 'call_tool', 'progress']);

        // A save that leaves every surface as it was sends nothing.
        await t.socket('PUT', '/config', JSON.stringify({ font_size: 15 }));
        assert.equal((await t.socket('PUT', '/config', JSON.stringify({ progress_tracking: false }))).status, 200);
        await sa.waitForMethod(LIST_CHANGED, 2);
        assert.equal(sa.messages.length, 2, 'font_size changed no surface and sent no notification');
        const noProgress = (await rpc(t, 'tools/list')).json().result.tools.map((tool: { name: string }) => tool.name);
        assert.deepEqual(noProgress, ['search_tools', 'get_tool_schema', 'call_tool']);

        await t.socket('PUT', '/config', JSON.stringify({ disabled_native_tools: ['config', 'debug', 'ui'], collapse_tools: false, progress_tracking: true }));
        await sb.waitForMethod(LIST_CHANGED, 3);
        const classic = (await rpc(t, 'tools/list')).json().result.tools.map((tool: { name: string }) => tool.name);
        assert.ok(!classic.includes('ui') && classic.includes('session') && classic.includes('progress'), classic.join());
        const refused = (await rpc(t, 'tools/call', { name: 'ui', arguments: {} })).json().result;
        assert.deepEqual(JSON.parse(refused.content[0].text), { error: "Tool 'ui' is disabled by configuration", code: 'forbidden' });
      } finally {
        sa.close();
        sb.close();
        await t.socket('PUT', '/config', JSON.stringify({ disabled_native_tools: ['config', 'debug'], collapse_tools: false, progress_tracking: true }));
      }
    });

    it('recreates an unknown session id for a stream', async () => {
      const s = await openStream('never-initialized-stream-id');
      try {
        assert.equal(s.status, 200);
        assert.equal(s.headers['mcp-session-id'], 'never-initialized-stream-id');
      } finally {
        s.close();
      }
    });

    it('generation guard: after DELETE and a reconnect on the same id, the old stream closing leaves the new one alive', async () => {
      const { id } = await initialize(t);
      const before = (await t.socket('GET', '/mcp/status')).json().sse_streams as number;
      const old = await openStream(id);
      await waitForStatus(t, (s) => s.sse_streams === before + 1);
      assert.equal((await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': id })).status, 200);
      const replacement = await openStream(id);
      await waitForStatus(t, (s) => s.sse_streams === before + 2);
      old.close();
      await waitForStatus(t, (s) => s.sse_streams === before + 1);
      try {
        assert.equal(replacement.ended, false, 'the replacement stream was not torn down');
        await t.socket('PUT', '/config', JSON.stringify({ collapse_tools: true }));
        await replacement.waitForMethod(LIST_CHANGED);
        assert.equal(replacement.ended, false);
      } finally {
        replacement.close();
        await t.socket('PUT', '/config', JSON.stringify({ collapse_tools: false }));
      }
    });

    it('generation guard: a superseded stream closing keeps the session’s stream; the newest closing releases the older', async () => {
      const { id } = await initialize(t);
      const before = (await t.socket('GET', '/mcp/status')).json().sse_streams as number;
      const first = await openStream(id);
      const second = await openStream(id);
      const third = await openStream(id);
      await waitForStatus(t, (s) => s.sse_streams === before + 3);
      first.close();
      await waitForStatus(t, (s) => s.sse_streams === before + 2);
      assert.equal(third.ended, false);
      assert.equal(second.ended, false, 'a superseded stream closing does not release the channel');
      // The newest stream holds the generation: its teardown releases the channel and ends the older one.
      third.close();
      await second.until(() => second.ended, 'the server ending the superseded stream');
      await waitForStatus(t, (s) => s.sse_streams === before);
    });
  });

  it('DELETE /mcp ends the protocol session and needs the header', async () => {
    const { id } = await initialize(t);
    const missing = await t.socket('DELETE', '/mcp');
    assert.equal(missing.status, 400);
    assert.match(missing.json().error.message, /requires an Mcp-Session-Id header/);
    assert.equal((await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': id })).status, 200);
    // Gone: initialize presenting it is a reconnect with a new id.
    const again = await initialize(t, {}, { 'Mcp-Session-Id': id });
    assert.notEqual(again.id, id);
    assert.equal((await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': id })).status, 404, 'an ended session is not found');
  });

  it('gives a Grok session the collapsed surface while another session keeps the classic one', async () => {
    const grok = await initialize(t, { clientInfo: { name: 'grok-shell-1234', version: '1' } });
    const other = await initialize(t, { clientInfo: { name: 'claude-code', version: '2' } });
    const grokTools = (await rpc(t, 'tools/list', undefined, { 'Mcp-Session-Id': grok.id })).json().result.tools.map((x: { name: string }) => x.name);
    assert.deepEqual(grokTools, ['search_tools', 'get_tool_schema', 'call_tool', 'progress']);
    assert.match(grok.answer.json().result.instructions, /search_tools/);
    const otherTools = (await rpc(t, 'tools/list', undefined, { 'Mcp-Session-Id': other.id })).json().result.tools.map((x: { name: string }) => x.name);
    assert.ok(otherTools.includes('session') && !otherTools.includes('search_tools'), otherTools.join());
    // The meta-tools dispatch for real through the catalog.
    const viaMeta = (
      await rpc(t, 'tools/call', { name: 'call_tool', arguments: { tool_name: 'session', arguments: { action: 'list' } } }, { 'Mcp-Session-Id': grok.id })
    ).json().result;
    assert.equal(viaMeta.isError, false);
  });

  describe('caller identity', () => {
    let work: string;
    before(() => {
      work = realpathSync(mkdtempSync(join(tmpdir(), 'tuicd-mcp-identity-')));
    });
    after(() => rmSync(work, { recursive: true, force: true }));

    const latestProgress = async () => (await t.socket('GET', '/progress/list?limit=1')).json().entries[0];
    const report = async (id: string, text: string) => {
      const r = (await rpc(t, 'tools/call', { name: 'progress', arguments: { type: 'done', text } }, { 'Mcp-Session-Id': id })).json().result;
      assert.equal(r.isError, false, JSON.stringify(r));
    };

    it('binds a valid x-tuic-session to the live PTY running it (progress sees agent, session and project)', async () => {
      const tuic = randomUUID();
      const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', tuic_session: tuic }));
      assert.equal(created.status, 201, created.text);
      const ptyId = created.json().session_id as string;
      try {
        const { id } = await initialize(t, { clientInfo: { name: 'bound-agent', version: '1' } }, { 'x-tuic-session': tuic });
        await report(id, 'bound report');
        const entry = await latestProgress();
        assert.equal(entry.text, 'bound report');
        assert.equal(entry.agent, tuic);
        assert.equal(entry.session_id, ptyId);
        assert.equal(entry.project, work);
      } finally {
        await t.socket('DELETE', `/sessions/${ptyId}`);
      }
    });

    it('ignores an invalid x-tuic-session and takes the project from initialize roots', async () => {
      const { id } = await initialize(
        t,
        { clientInfo: { name: 'rooted-agent', version: '1' }, roots: [{ uri: `file://${work}` }] },
        { 'x-tuic-session': 'not-a-uuid' },
      );
      await report(id, 'rooted report');
      const entry = await latestProgress();
      assert.equal(entry.agent, 'rooted-agent', 'the invalid identity was ignored');
      assert.equal(entry.session_id, undefined);
      assert.equal(entry.project, work);
    });
  });

  it('mcp_server_enabled: false answers 404 on every /mcp protocol route while the rest keeps working, live', async () => {
    const { id } = await initialize(t);
    assert.equal((await t.socket('PUT', '/config', JSON.stringify({ mcp_server_enabled: false }))).status, 200);
    try {
      const p = await rpc(t, 'ping');
      assert.equal(p.status, 404);
      assert.deepEqual(p.json(), { error: 'no such endpoint: /mcp', code: 'not_found' });
      const stream = await t.socket('GET', '/mcp', undefined, { 'Mcp-Session-Id': id });
      assert.equal(stream.status, 404);
      assert.deepEqual(stream.json(), { error: 'no such endpoint: /mcp', code: 'not_found' });
      const del = await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': id });
      assert.equal(del.status, 404);
      assert.deepEqual(del.json(), { error: 'no such endpoint: /mcp', code: 'not_found' });
      assert.equal((await t.socket('GET', '/health')).status, 200);
      assert.equal((await t.socket('GET', '/sessions')).status, 200);
      assert.equal((await t.socket('GET', '/mcp/status')).json().enabled, false);
    } finally {
      assert.equal((await t.socket('PUT', '/config', JSON.stringify({ mcp_server_enabled: true }))).status, 200);
    }
    assert.equal((await rpc(t, 'ping')).status, 200);
  });
});
