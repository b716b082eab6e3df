/**
 * The MCP TypeScript SDK 1.x `Client` — a client nobody here wrote — against a real tuicd over its
 * TCP listener with Basic Auth (the header through `requestInit`): initialize, tools/list, every
 * native tool's read-only actions that are registered when this runs, and the GET stream carrying
 * `notifications/tools/list_changed` when `collapse_tools` is toggled through PUT /config.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { nativeTools } from '../surfaceFixtures.js';

const USER = 'conformance';
const PASSWORD = 'sdk client password';
const AUTHORIZATION = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const WAIT_MS = 10_000;

/** The one text item of a native result (compact JSON text), parsed. */
function payload(r: CallToolResult): unknown {
  assert.equal(r.content.length, 1, `one content item: ${JSON.stringify(r.content)}`);
  const item = r.content[0]!;
  assert.equal(item.type, 'text');
  return JSON.parse((item as { text: string }).text);
}

function record(value: unknown): Record<string, unknown> {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `expected a JSON object, got ${JSON.stringify(value)}`);
  return value as Record<string, unknown>;
}

/** A read-only call this test knows for a native tool, and what its answer must show. */
interface KnownRead {
  args: Record<string, unknown>;
  /** The call is meant to fail (an unknown id): isError is asserted by `check`, not refused. */
  failing?: true;
  check: (r: CallToolResult) => void | Promise<void>;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('MCP SDK 1.x Client over TCP with Basic Auth', () => {
  let t: Tuicd;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let sessionId: string;
  /** Status of the GET /mcp the SDK opens by itself after initialize (seen through its fetch). */
  let getStream: Promise<{ status: number; contentType: string | null }> | undefined;
  const listChanged: unknown[] = [];

  before(async () => {
    // Cost 4 keeps the fixture fast; the server verifies whatever cost the hash carries.
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } } });
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh' }));
    assert.equal(created.status, 201, created.text);
    sessionId = created.json().session_id;

    client = new Client({ name: 'tuicd-conformance-sdk', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void listChanged.push(n));
    transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`), {
      requestInit: { headers: { Authorization: AUTHORIZATION } },
      // The real fetch; only watched, to learn when the SDK's own GET stream is answered.
      fetch: (url, init) => {
        const answer = fetch(url, init);
        if (init?.method === 'GET') getStream ??= answer.then((r) => ({ status: r.status, contentType: r.headers.get('content-type') }));
        return answer;
      },
    });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await t?.stop();
  });

  it('initializes: tuicommander, tools.listChanged, instructions, a protocol session id', () => {
    assert.equal(client.getServerVersion()?.name, 'tuicommander');
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true);
    const instructions = client.getInstructions();
    assert.ok(instructions?.includes('TUICommander'), `instructions: ${instructions?.slice(0, 200)}`);
    assert.match(transport.sessionId ?? '', /^[0-9a-f-]{36}$/);
  });

  it('lists every registered, enabled native tool with an object input schema', async () => {
    const { tools } = await client.listTools();
    const listed = new Set(tools.map((tool) => tool.name));
    const config = (await t.socket('GET', '/config')).json();
    const registered = nativeTools().map((tool) => tool.definition.name);
    const hidden = new Set<string>([
      ...(config.disabled_native_tools as string[]),
      ...(config.progress_tracking ? [] : ['progress']),
      ...(config.ai_terminal_mcp_enabled ? [] : registered.filter((name) => name.startsWith('ai_terminal_'))),
    ]);
    assert.ok(registered.length > 0, 'createNativeTools registers no tool yet');
    for (const name of registered) {
      if (hidden.has(name)) assert.ok(!listed.has(name), `${name} is disabled but listed`);
      else assert.ok(listed.has(name), `${name} is registered and enabled but missing from tools/list (${[...listed].join(', ')})`);
    }
    for (const tool of tools) assert.equal(tool.inputSchema.type, 'object', `${tool.name} inputSchema`);
  });

  it("calls every listed native tool's read-only actions it knows", async () => {
    // A marker the shell computes, so the output read below is the shell's, not the echoed command.
    assert.equal((await t.socket('POST', `/sessions/${sessionId}/write`, JSON.stringify({ data: 'echo $((6*7))\n' }))).status, 200);
    const known: Record<string, KnownRead[]> = {
      session: [
        { args: { action: 'list' }, check: (r) => assert.ok((payload(r) as Array<{ session_id: string }>).some((row) => row.session_id === sessionId)) },
        { args: { action: 'status', session_id: sessionId }, check: (r) => assert.equal(record(payload(r))['session_id'], sessionId) },
        {
          args: { action: 'output', session_id: sessionId },
          check: async () => {
            await until('the shell to print 42 in session output', async () => {
              const r = (await client.callTool({ name: 'session', arguments: { action: 'output', session_id: sessionId } })) as CallToolResult;
              assert.notEqual(r.isError, true, JSON.stringify(r.content));
              return /^42$/m.test(String(record(payload(r))['data'])) ? true : undefined;
            });
          },
        },
        {
          args: { action: 'status', session_id: 'no-such-session' },
          failing: true,
          check: (r) => {
            assert.equal(r.isError, true);
            assert.match(String(record(payload(r))['error']), /not found/i);
          },
        },
      ],
      task: [
        {
          args: { action: 'get', task_id: 'no-such-task' },
          failing: true,
          check: (r) => {
            assert.equal(r.isError, true);
            assert.match(String(record(payload(r))['error']), /unknown or expired task_id/);
          },
        },
      ],
      ui: [{ args: { action: 'toast', title: 'conformance', message: 'from the SDK client' }, check: (r) => assert.deepEqual(payload(r), { ok: true }) }],
      plugin_dev_guide: [{ args: {}, check: (r) => assert.ok(String(record(payload(r))['content']).length > 100) }],
    };
    const { tools } = await client.listTools();
    const called: string[] = [];
    for (const tool of tools) {
      for (const read of known[tool.name] ?? []) {
        const r = (await client.callTool({ name: tool.name, arguments: read.args })) as CallToolResult;
        if (!read.failing) assert.notEqual(r.isError, true, `${tool.name} ${JSON.stringify(read.args)}: ${JSON.stringify(r.content)}`);
        await read.check(r);
      }
      if (known[tool.name]) called.push(tool.name);
    }
    // A tool this test knows that is registered must have been listed, hence called.
    const registered = new Set(nativeTools().map((tool) => tool.definition.name));
    for (const name of Object.keys(known)) if (registered.has(name)) assert.ok(called.includes(name), `${name} is registered but was not listed`);
    assert.ok(called.length > 0, 'no known tool was listed');
  });

  it('opens the GET stream by itself and receives notifications/tools/list_changed when collapse_tools is toggled', async () => {
    assert.ok(getStream, 'the SDK never opened GET /mcp after initialize');
    const stream = await getStream;
    assert.equal(stream.status, 200);
    assert.match(stream.contentType ?? '', /^text\/event-stream/);

    const before = listChanged.length;
    assert.equal((await t.socket('PUT', '/config', JSON.stringify({ collapse_tools: true }))).status, 200);
    await until('notifications/tools/list_changed after collapse_tools on', async () => (listChanged.length > before ? true : undefined));
    const collapsed = (await client.listTools()).tools.map((tool) => tool.name);
    for (const meta of ['search_tools', 'get_tool_schema', 'call_tool'])
      assert.ok(collapsed.includes(meta), `${meta} missing from the collapsed list: ${collapsed.join(', ')}`);
    assert.ok(!collapsed.includes('session'), 'session is still listed directly in collapsed mode');
    const found = record(payload((await client.callTool({ name: 'search_tools', arguments: { query: 'terminal session' } })) as CallToolResult));
    assert.ok(
      (found['results'] as Array<{ name: string }>).some((r) => r.name === 'session'),
      JSON.stringify(found),
    );

    const collapsedCount = listChanged.length;
    assert.equal((await t.socket('PUT', '/config', JSON.stringify({ collapse_tools: false }))).status, 200);
    await until('notifications/tools/list_changed after collapse_tools off', async () => (listChanged.length > collapsedCount ? true : undefined));
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'session'));
  });

  it('refuses the same client without credentials: 401 at initialize, surfaced by the SDK', async () => {
    const anonymous = new Client({ name: 'tuicd-conformance-anonymous', version: '1.0.0' });
    await assert.rejects(anonymous.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`))), /401|Unauthorized|Basic Auth/i);
  });
});
