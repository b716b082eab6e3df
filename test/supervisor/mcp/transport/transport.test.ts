// McpTransport on its real collaborators (session store, catalog), fed request contexts directly:
// what initialize records about a client, that tools/call never needs a session, and that a call in
// flight keeps its session from the cap.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import type { RequestContext } from '../../../../supervisor/http/types.js';
import { McpSessionStore } from '../../../../supervisor/mcp/protocolSessions.js';
import { ToolCatalog } from '../../../../supervisor/mcp/toolCatalog.js';
import { defineTool } from '../../../../supervisor/mcp/tools/nativeTool.js';
import type { CallerContext } from '../../../../supervisor/mcp/tools/nativeTool.js';
import { McpTransport } from '../../../../supervisor/mcp/transport.js';

const TUIC = '0b9c4a52-6f1e-4a57-9b1a-1c2d3e4f5a6b';

describe('McpTransport', () => {
  const sessions = new McpSessionStore();
  let lastCaller: CallerContext | null = null;
  const whoami = defineTool({
    name: 'whoami',
    summary: 'Echoes the caller.',
    properties: {},
    handler: (_args, caller) => ((lastCaller = caller), { ok: true }),
  });
  const catalog = new ToolCatalog({ nativeTools: [whoami], settings: () => ({ collapseTools: false, disabledNativeTools: [], progressTracking: true }) });
  const logs: Array<Record<string, unknown>> = [];
  const transport = new McpTransport({
    sessions,
    catalog,
    log: { info: (obj) => logs.push(obj as Record<string, unknown>) },
    version: '9.9.9',
    instructions: (surface) => `instructions for ${surface}`,
    boundSessionFor: (tuic) => (tuic === TUIC ? 'pty-1' : null),
  });
  after(() => sessions.dispose());

  const ctx = (body: object, headers: Record<string, string> = {}): RequestContext => ({
    method: 'POST',
    path: '/mcp',
    query: new URLSearchParams(),
    headers,
    params: {},
    listener: 'tcp',
    tls: false,
    remoteAddress: '10.1.2.3',
    isLoopback: false,
    body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, ...body })),
    signal: new AbortController().signal,
  });
  const init = async (params: object, headers: Record<string, string> = {}) => {
    const reply = await transport.handlePost(ctx({ method: 'initialize', params }, headers));
    const id = reply.headers!['Mcp-Session-Id']!;
    return { reply, meta: sessions.get(id)! };
  };

  it('records client name, Claude Code, Grok, repo root and a valid TUIC identity', async () => {
    const { meta, reply } = await init({ clientInfo: { name: 'claude-code' }, roots: [{ uri: 'file:///home/u/my%20repo' }] }, { 'x-tuic-session': TUIC });
    assert.equal(JSON.parse(String(reply.body)).result.instructions, 'instructions for classic');
    assert.equal(meta.client_name, 'claude-code');
    assert.equal(meta.is_claude_code, true);
    assert.equal(meta.requires_meta_tools, false);
    assert.equal(meta.repo_path, '/home/u/my repo');
    assert.equal(meta.tuic_session, TUIC);

    const grok = (await init({ clientInfo: { name: 'grok-shell-77' } }, { 'x-tuic-session': 'nope' })).meta;
    assert.equal(grok.requires_meta_tools, true);
    assert.equal(grok.is_claude_code, false);
    assert.equal(grok.tuic_session, null, 'an invalid identity is ignored');
    assert.equal(grok.repo_path, null);

    const bridged = (await init({ clientInfo: { name: 'some-client' } }, { 'user-agent': 'tuic-bridge/1.2' })).meta;
    assert.equal(bridged.is_claude_code, true, 'the User-Agent marks a bridge');
    const plain = (await init({})).meta;
    assert.equal(plain.client_name, null);
    assert.equal(plain.is_claude_code, false);
  });

  it('logs one mcp_initialize record per handshake', async () => {
    logs.length = 0;
    const { meta } = await init({ clientInfo: { name: 'logged' } });
    assert.equal(logs.length, 1);
    assert.deepEqual(logs[0], {
      source: 'mcp_initialize',
      event: 'fresh',
      session_id: meta.id,
      protocol_version: '2025-11-25',
      listener: 'tcp',
      client_name: 'logged',
    });
  });

  it('builds the caller from the request and the session: loopback, listener, identity and bound PTY', async () => {
    const { meta } = await init({ clientInfo: { name: 'caller-probe' } }, { 'x-tuic-session': TUIC });
    await transport.handlePost(ctx({ method: 'tools/call', params: { name: 'whoami' } }, { 'mcp-session-id': meta.id }));
    assert.ok(lastCaller);
    assert.equal(lastCaller.isLoopback, false);
    assert.equal(lastCaller.listener, 'tcp');
    assert.equal(lastCaller.mcpSessionId, meta.id);
    assert.equal(lastCaller.tuicSession, TUIC);
    assert.equal(lastCaller.boundSessionId, 'pty-1');
    assert.equal(lastCaller.clientName, 'caller-probe');

    await transport.handlePost(ctx({ method: 'tools/call', params: { name: 'whoami', arguments: null } }));
    assert.equal(lastCaller.mcpSessionId, null);
    assert.equal(lastCaller.tuicSession, null);
    assert.equal(lastCaller.boundSessionId, null);
  });
});

describe('McpTransport and the session cap', () => {
  it('a session with a tools/call in flight is not evicted; once the call returns it is idle again', async () => {
    const sessions = new McpSessionStore({ maxSessions: () => 1 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const hold = defineTool({ name: 'hold', summary: 'Waits for the test.', properties: {}, handler: async () => (await held, { ok: true }) });
    const catalog = new ToolCatalog({ nativeTools: [hold], settings: () => ({ collapseTools: false, disabledNativeTools: [], progressTracking: true }) });
    const transport = new McpTransport({ sessions, catalog, log: { info: () => {} }, version: '1', instructions: () => '', boundSessionFor: () => null });
    const post = (body: object, headers: Record<string, string> = {}) =>
      transport.handlePost({
        method: 'POST',
        path: '/mcp',
        query: new URLSearchParams(),
        headers,
        params: {},
        listener: 'socket',
        tls: false,
        remoteAddress: '',
        isLoopback: true,
        body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, ...body })),
        signal: new AbortController().signal,
      });
    const init = async () => (await post({ method: 'initialize', params: {} })).headers!['Mcp-Session-Id']!;
    try {
      const busy = await init();
      const call = post({ method: 'tools/call', params: { name: 'hold' } }, { 'mcp-session-id': busy });
      assert.equal(sessions.get(busy)!.in_flight, 1);
      const other = await init();
      assert.equal(sessions.has(busy), true, 'the session with a call in flight survived the cap');
      assert.equal(sessions.has(other), true);
      release();
      assert.equal(JSON.parse(String((await call).body)).result.isError, false);
      assert.equal(sessions.get(busy)!.in_flight, 0);
      const third = await init();
      assert.deepEqual(
        [...sessions.values()].map((m) => m.id),
        [third],
        'idle again: both older ones evicted down to the cap',
      );
    } finally {
      sessions.dispose();
    }
  });
});
