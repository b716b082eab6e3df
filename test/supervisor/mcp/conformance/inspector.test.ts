/**
 * MCP Inspector 2.12.0's CLI (Node 22, its own HOME) against a real tuicd over the TCP listener with
 * Basic Auth passed as `--header`: tools/list and tools/call session action=list, asserted on the
 * JSON it prints; a bad action and missing credentials show the errors a user would see.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { runInspector } from './thirdPartyCli.js';

const USER = 'inspector';
const PASSWORD = 'inspector password';
const AUTH_HEADER = `Authorization: Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
/** The Inspector CLI's exit code when a tool answers isError:true. */
const EXIT_TOOL_IS_ERROR = 5;
/** …and when the server asks for credentials it was not given. */
const EXIT_AUTH_REQUIRED = 3;

describe('MCP Inspector 2.12 CLI over TCP with Basic Auth', () => {
  let t: Tuicd;
  let url: string;
  let sessionId: string;

  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } } });
    url = `http://127.0.0.1:${t.tcpPort}/mcp`;
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh' }));
    assert.equal(created.status, 201, created.text);
    sessionId = created.json().session_id;
  });
  after(() => t?.stop());

  it('tools/list prints the native tools with object schemas', async () => {
    const r = await runInspector(url, ['--method', 'tools/list', '--header', AUTH_HEADER]);
    assert.equal(r.code, 0, r.stderr);
    const { tools } = JSON.parse(r.stdout) as { tools: Array<{ name: string; description: string; inputSchema: { type: string } }> };
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes('session'), names.join(', '));
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.ok(tool.description.length > 0, tool.name);
      assert.ok(!tool.name.includes('__'), `native ${tool.name} contains the upstream separator`);
    }
  });

  it('tools/call session action=list prints a text result listing the live session', async () => {
    const r = await runInspector(url, ['--method', 'tools/call', '--tool-name', 'session', '--tool-arg', 'action=list', '--header', AUTH_HEADER]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { content: Array<{ type: string; text: string }>; isError: boolean };
    assert.equal(result.isError, false);
    assert.equal(result.content.length, 1);
    assert.equal(result.content[0]!.type, 'text');
    const rows = JSON.parse(result.content[0]!.text) as Array<{ session_id: string }>;
    assert.ok(
      rows.some((row) => row.session_id === sessionId),
      result.content[0]!.text,
    );
  });

  it('an unknown action comes back as isError with the available actions (exit 5)', async () => {
    const r = await runInspector(url, ['--method', 'tools/call', '--tool-name', 'session', '--tool-arg', 'action=frobnicate', '--header', AUTH_HEADER]);
    assert.equal(r.code, EXIT_TOOL_IS_ERROR, r.stderr);
    const result = JSON.parse(r.stdout) as { content: Array<{ text: string }>; isError: boolean };
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /Unknown action 'frobnicate' for tool 'session'\. Available: .*list/);
  });

  it("without the header the Inspector stops at tuicd's 401 and shows its body (exit 3)", async () => {
    // --stored-auth-only: on a 401 the Inspector would otherwise start an interactive OAuth flow.
    const r = await runInspector(url, ['--method', 'tools/list', '--stored-auth-only']);
    assert.equal(r.code, EXIT_AUTH_REQUIRED, r.stdout + r.stderr);
    const { error } = JSON.parse(r.stderr.trim()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'auth_required');
    assert.match(error.message, /Scan the QR code or authenticate with Basic Auth/);
  });
});
