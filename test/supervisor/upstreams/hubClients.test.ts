/**
 * Clients nobody here wrote against proxied tools: the SDK 1.x Client and the MCP Inspector CLI over
 * TCP with Basic Auth, compared with the same server-everything reached directly over stdio.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { Tuicd } from '../../helpers/tuicdProcess.js';
import { EVERYTHING_JS, everythingStdio, writeUpstreams } from '../../helpers/upstreamServers.js';
import { runInspector } from '../mcp/conformance/thirdPartyCli.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function waitForReady(t: Tuicd, name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = (await t.socket('GET', '/mcp/upstream-status')).json<{ upstreams: Array<{ name: string; status: string }> }>().upstreams;
    if (rows.some((r) => r.name === name && r.status === 'ready')) return;
    if (Date.now() > deadline) throw new Error(`upstream ${name} never became ready: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const USER = 'hub';
const PASSWORD = 'hub client password';
const AUTHORIZATION = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
/** Planted in tuicd's environment: the upstream child must never see it. */
const PLANTED_SECRET = 'sk-ant-planted-secret-for-the-env-allowlist-test';

describe('SDK Client and Inspector CLI against proxied upstream tools', () => {
  let t: Tuicd;
  let dir: string;
  let proxied: Client;
  let direct: Client;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-hub-clients-'));
    writeUpstreams(dir, [
      everythingStdio('everything', {
        transport: { type: 'stdio', command: process.execPath, args: [EVERYTHING_JS, 'stdio'], env: { UPSTREAM_ONLY: 'from-config' } },
      }),
    ]);
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      configDir: dir,
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } },
      env: { ANTHROPIC_API_KEY: PLANTED_SECRET },
    });
    // The settle gate holds the first tools/list for at most 3 s; a loaded machine can take longer to start
    // server-everything, and this file is not about the gate (hubSettleGate.test.ts is).
    await waitForReady(t, 'everything');
    proxied = new Client({ name: 'sdk-hub-test', version: '1' });
    await proxied.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`), { requestInit: { headers: { Authorization: AUTHORIZATION } } }),
    );
    direct = new Client({ name: 'sdk-direct-test', version: '1' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_JS, 'stdio'], stderr: 'ignore' }));
  });

  after(async () => {
    await proxied?.close();
    await direct?.close();
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every upstream tool namespaced, with descriptions and schemas exactly as the upstream sent them', async () => {
    const upstream = (await direct.listTools()).tools;
    const viaHub = new Map((await proxied.listTools()).tools.map((tool) => [tool.name, tool]));
    assert.ok(upstream.length > 5);
    for (const tool of upstream) {
      const mirrored = viaHub.get(`everything__${tool.name}`);
      assert.ok(mirrored, `everything__${tool.name} is listed in ${[...viaHub.keys()].join(',')}`);
      assert.deepEqual({ ...mirrored, name: tool.name }, tool);
    }
  });

  it('tools/call results equal a direct call (content, structuredContent)', async () => {
    for (const [name, args] of [
      ['echo', { message: 'same both ways' }],
      ['get-sum', { a: 2, b: 40 }],
      ['get-structured-content', { location: 'New York' }],
    ] as const) {
      const want = await direct.callTool({ name, arguments: args });
      const got = await proxied.callTool({ name: `everything__${name}`, arguments: args });
      assert.deepEqual(got, want, name);
    }
  });

  it('the upstream child runs with a cleared environment: the allowlist and its own env only', async () => {
    const result = await proxied.callTool({ name: 'everything__get-env', arguments: {} });
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    assert.ok(!text.includes(PLANTED_SECRET), 'a secret in tuicd’s environment leaked to the upstream');
    assert.ok(!text.includes('ANTHROPIC_API_KEY'));
    const env = JSON.parse(text) as Record<string, string>;
    assert.equal(env['UPSTREAM_ONLY'], 'from-config');
    assert.equal(env['HOME'], t.home, 'HOME is passed on from tuicd’s environment');
    const allowed = new Set(['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TEMP', 'TMP', 'SHELL', 'TERM', 'UPSTREAM_ONLY']);
    // Node itself may add nothing; anything else came from our environment and should not have.
    const extra = Object.keys(env).filter((k) => !allowed.has(k));
    assert.deepEqual(extra, []);
  });

  it('the Inspector CLI calls a proxied tool and prints its result', async () => {
    const url = `http://127.0.0.1:${t.tcpPort}/mcp`;
    const r = await runInspector(url, [
      '--method',
      'tools/call',
      '--tool-name',
      'everything__echo',
      '--tool-arg',
      'message=from the inspector',
      '--header',
      `Authorization: ${AUTHORIZATION}`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).content, [{ type: 'text', text: 'Echo: from the inspector' }]);
    const listed = await runInspector(url, ['--method', 'tools/list', '--header', `Authorization: ${AUTHORIZATION}`]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok((JSON.parse(listed.stdout).tools as Array<{ name: string }>).some((x) => x.name === 'everything__echo'));
  });
});
