/**
 * Upstream stdio MCP servers restart with the supervisor (they hold nothing tuicd needs back): after
 * a SIGKILL the old server ends with its pipes, the next tuicd starts it again and logs it, and a
 * bridge-connected client hears tools/list_changed and calls the upstream's tool again.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { BRIDGE_JS, bridgeEnv, textOf } from '../../bridge/bridgeHarness.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { stdioServer, writeUpstreams } from '../../helpers/upstreamServers.js';
import { isAlive, killAll } from './keepHelpers.js';

const MOCK_JS = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;

test('stdio upstreams restart with tuicd after a SIGKILL: logged, tools/list_changed, the tool works', { timeout: 90_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-upkill-'));
  const spawnLog = join(dir, 'spawns.log');
  writeUpstreams(dir, [
    stdioServer('mock', [MOCK_JS, 'normal'], {
      transport: { type: 'stdio', command: process.execPath, args: [MOCK_JS, 'normal'], env: { MOCK_SPAWN_LOG: spawnLog } },
    }),
  ]);
  let tuicd = await Tuicd.start({ configDir: dir });
  const spawned = (): number[] => (existsSync(spawnLog) ? readFileSync(spawnLog, 'utf8').split('\n').filter(Boolean).map(Number) : []);
  t.after(async () => {
    await tuicd.stop();
    for (const pid of spawned()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    killAll(dir, []);
    rmSync(dir, { recursive: true, force: true });
  });
  const changes: number[] = [];
  const mcp = new Client({ name: 'claude-code', version: '1.0.0' });
  mcp.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes.push(Date.now());
  });
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [BRIDGE_JS], env: bridgeEnv(tuicd), stderr: 'pipe' }));
  t.after(() => mcp.close());
  const echo = () => mcp.callTool({ name: 'mock__echo', arguments: { text: 'hi' } });
  await waitFor(async () => (await echo()).isError !== true, 'the upstream tool to answer', 20_000);
  await waitFor(() => spawned().length === 1, 'the upstream to be spawned once');
  const first = spawned()[0]!;

  tuicd.child.kill('SIGKILL');
  await tuicd.exited;
  // Its pipes closed with tuicd: nothing is left that no command can reach.
  await waitFor(() => !isAlive(first), 'the old upstream server to end with tuicd', 10_000);

  const before = changes.length;
  tuicd = await Tuicd.start({ configDir: dir });
  await waitFor(() => changes.length > before, 'tools/list_changed after the restart', 20_000);
  await waitFor(async () => (await echo()).isError !== true, 'the upstream tool to answer again', 20_000);
  assert.match(textOf(await echo()), /hi/);
  assert.equal(spawned().length, 2, 'started again by the new tuicd');
  await tuicd.waitForStderr(/"upstream":"mock","status":"ready".*upstream status changed/);
});
