/**
 * tuic-bridge end to end: the MCP SDK's own stdio client launches the real bridge, which talks to a
 * real tuicd over its unix socket (with server-everything as an upstream behind the hub).
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { Tuicd } from '../helpers/tuicdProcess.js';
import { everythingStdio, filesystemStdio, writeUpstreams } from '../helpers/upstreamServers.js';
import { BRIDGE_JS, bridgeEnv, textOf } from './bridgeHarness.js';

describe('tuic-bridge with the SDK stdio client', { timeout: 120_000 }, () => {
  let t: Tuicd;
  let client: Client;
  let transport: StdioClientTransport;
  let listChanged = 0;

  before(async () => {
    const { mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const configDir = mkdtempSync(join(tmpdir(), 'tuicd-bridge-'));
    writeUpstreams(configDir, [everythingStdio()]);
    t = await Tuicd.start({ configDir, env: { SHELL: '/bin/sh' } });
    transport = new StdioClientTransport({ command: process.execPath, args: [BRIDGE_JS], env: bridgeEnv(t), stderr: 'pipe' });
    client = new Client({ name: 'bridge-test', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged++;
    });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await t?.stop();
    const { rmSync } = await import('node:fs');
    if (t) rmSync(t.configDir, { recursive: true, force: true });
  });

  it('initialize reaches tuicd: its server info and instructions, tools.listChanged', () => {
    assert.equal(client.getServerVersion()?.name, 'tuicommander');
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true);
    assert.match(client.getInstructions() ?? '', /TUICommander/);
  });

  it('tools/list has the native tools and, once the hub connected it, the upstream', async () => {
    let names: string[] = [];
    for (let i = 0; i < 100 && !names.includes('everything__echo'); i++) {
      names = (await client.listTools()).tools.map((tool) => tool.name);
      if (!names.includes('everything__echo')) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(names.includes('session'), names.join(', '));
    assert.ok(names.includes('everything__echo'), names.join(', '));
  });

  it('tools/call: a native tool and an upstream tool', async () => {
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh' }));
    const id = created.json().session_id as string;
    const listed = JSON.parse(textOf(await client.callTool({ name: 'session', arguments: { action: 'list' } }))) as Array<{ session_id: string }>;
    assert.ok(listed.some((row) => row.session_id === id));
    const echoed = await client.callTool({ name: 'everything__echo', arguments: { message: 'through the bridge' } });
    assert.match(textOf(echoed), /through the bridge/);
  });

  it('a session wait longer than 10 s is answered, not cut at the ordinary 10 s deadline', async () => {
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh', args: ['-c', 'sleep 11; exit 4'] }));
    assert.equal(created.status, 201, created.text);
    const id = created.json().session_id as string;
    const started = Date.now();
    const result = await client.callTool({ name: 'session', arguments: { action: 'wait', session_id: id, until: 'exited', timeout_ms: 30_000 } }, undefined, {
      timeout: 60_000,
    });
    const waited = Date.now() - started;
    const body = JSON.parse(textOf(result)) as { met: boolean; timed_out: boolean; exit_code?: number };
    assert.equal(body.met, true, textOf(result));
    assert.equal(body.exit_code, 4);
    assert.ok(waited > 10_000, `answered after ${waited} ms`);
  });

  it('50 concurrent calls: quick ones answer before slow ones sent earlier (no head-of-line blocking)', async () => {
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh', args: ['-c', 'sleep 60'] }));
    const id = created.json().session_id as string;
    const order: string[] = [];
    const slow = Array.from({ length: 10 }, (_, i) =>
      client.callTool({ name: 'session', arguments: { action: 'wait', session_id: id, until: 'exited', timeout_ms: 1500 } }).then((r) => {
        assert.equal((JSON.parse(textOf(r)) as { timed_out: boolean }).timed_out, true);
        order.push(`slow${i}`);
      }),
    );
    const quick = Array.from({ length: 40 }, (_, i) =>
      client.callTool({ name: 'session', arguments: { action: 'list' } }).then((r) => {
        assert.ok(Array.isArray(JSON.parse(textOf(r))));
        order.push(`quick${i}`);
      }),
    );
    await Promise.all([...slow, ...quick]);
    assert.equal(order.length, 50);
    const firstSlow = order.findIndex((o) => o.startsWith('slow'));
    assert.equal(firstSlow, 40, `answer order: ${order.join(' ')}`);
  });

  it('$TUIC_SESSION as a tuicd session sets it reaches tuicd as x-tuic-session: session list marks that session is_caller', async () => {
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh' }));
    const id = created.json().session_id as string;
    // Read the variable inside the real session, as an agent running there would inherit it.
    await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data: 'echo "ts=$TUIC_SESSION="\n' }));
    let tuicSession = '';
    for (let i = 0; i < 100 && tuicSession === ''; i++) {
      const out = (await t.socket('GET', `/sessions/${id}/output?limit=65536`)).json();
      tuicSession = /ts=([0-9a-f-]{36})=/.exec(JSON.stringify(out))?.[1] ?? '';
      if (tuicSession === '') await new Promise((r) => setTimeout(r, 50));
    }
    assert.notEqual(tuicSession, '', 'the session has TUIC_SESSION');
    const inSession = new Client({ name: 'agent-in-session', version: '1' });
    await inSession.connect(
      new StdioClientTransport({ command: process.execPath, args: [BRIDGE_JS], env: { ...bridgeEnv(t), TUIC_SESSION: tuicSession }, stderr: 'pipe' }),
    );
    try {
      const rows = JSON.parse(textOf(await inSession.callTool({ name: 'session', arguments: { action: 'list' } }))) as Array<{
        session_id: string;
        is_caller: boolean;
      }>;
      assert.deepEqual(
        rows.filter((r) => r.is_caller).map((r) => r.session_id),
        [id],
      );
      const outside = JSON.parse(textOf(await client.callTool({ name: 'session', arguments: { action: 'list' } }))) as Array<{ is_caller: boolean }>;
      assert.equal(outside.filter((r) => r.is_caller).length, 0, 'a bridge without TUIC_SESSION is nobody');
    } finally {
      await inSession.close();
    }
  });

  it("tuicd's tools-changed signal on its GET /mcp stream reaches the client: an upstream added meanwhile", async () => {
    const before = listChanged;
    const current = (await t.socket('GET', '/mcp/upstreams')).json();
    const saved = await t.socket(
      'PUT',
      '/mcp/upstreams',
      JSON.stringify({ base: current, config: { servers: [...current.servers, filesystemStdio('files', tmpdir())] } }),
    );
    assert.equal(saved.status, 200, saved.text);
    for (let i = 0; listChanged === before; i++) {
      assert.ok(i < 200, 'no notifications/tools/list_changed reached the client');
      await new Promise((r) => setTimeout(r, 50));
    }
    let names: string[] = [];
    for (let i = 0; i < 100 && !names.some((n) => n.startsWith('files__')); i++) {
      names = (await client.listTools()).tools.map((tool) => tool.name);
      if (!names.some((n) => n.startsWith('files__'))) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(
      names.some((n) => n.startsWith('files__')),
      names.join(', '),
    );
  });
});
