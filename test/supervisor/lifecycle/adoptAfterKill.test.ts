/**
 * Sessions outlive a SIGKILLed tuicd: the detached pty host keeps three counting shells and an
 * agent session running, and the next tuicd adopts them (same ids, pids, aliases, agent type); a raw
 * viewer resumes from its byte offset and a log viewer from its line cursor with nothing missing
 * and nothing twice. `tuicd stop` then ends the sessions and the host.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { WsViewer } from '../../helpers/wsViewer.js';
import { fakeAgent, removeFakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BRIDGE_JS, bridgeEnv, textOf } from '../../bridge/bridgeHarness.js';
import { assertConsecutive, counts, createCounter, hostPid, isAlive, killAll } from './keepHelpers.js';

interface Row {
  session_id: string;
  pid: number;
  alias: string;
  display_name: string;
  total_written: number;
  state: Record<string, unknown>;
}

test('SIGKILLed tuicd: the next one adopts the sessions, viewers resume without a hole or a repeat', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-adopt-'));
  const pids: number[] = [];
  let tuicd = await Tuicd.start({ configDir: dir });
  t.after(async () => {
    await tuicd.stop();
    killAll(dir, pids);
    rmSync(dir, { recursive: true, force: true });
  });

  const shells = [];
  for (let i = 0; i < 3; i++) shells.push(await createCounter(tuicd, dir, { display_name: `counter ${i}` }));
  // The scripted stand-in for a paid agent, run under the agent's name: detected as claude by its foreground.
  const fake = fakeAgent('claude', [{ out: 'ready\r\n' }, { read: 'never typed' }]);
  t.after(() => removeFakeAgent(fake));
  const agentCreated = await tuicd.socket(
    'POST',
    '/sessions',
    JSON.stringify({ cwd: dir, shell: join(fake.binDir, 'claude'), args: fake.args, display_name: 'agent' }),
    {
      'content-type': 'application/json',
    },
  );
  assert.equal(agentCreated.status, 201, agentCreated.text);
  const agent = agentCreated.json<{ session_id: string; pid: number }>();
  pids.push(...shells.map((s) => s.pid), agent.pid);
  const host = hostPid(dir);
  assert.ok(host !== null && isAlive(host), 'the detached pty host is running');

  // The agent's MCP client, through its own tuic-bridge, with the session's identity.
  const mcp = new Client({ name: 'claude-code', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({ command: process.execPath, args: [BRIDGE_JS], env: bridgeEnv(tuicd, { TUIC_SESSION: agent.session_id }), stderr: 'pipe' }),
  );
  t.after(() => mcp.close());
  const listCall = () => mcp.callTool({ name: 'session', arguments: { action: 'list' } });
  const first = await listCall();
  assert.notEqual(first.isError, true, textOf(first));

  const sessionsNow = async () => (await tuicd.socket('GET', '/sessions')).json<Row[]>();
  await waitFor(
    async () => (await sessionsNow()).find((r) => r.session_id === agent.session_id)?.state['agent_state'] === 'idle',
    'the agent to be idle',
    30_000,
  );
  const before = await sessionsNow();
  const watched = shells[0]!.session_id;
  const raw = await WsViewer.open(WsViewer.socketUrl(tuicd.socketPath, `/sessions/${watched}/stream?encoding=binary&offset=0`));
  const log = await WsViewer.open(WsViewer.socketUrl(tuicd.socketPath, `/sessions/${watched}/stream?format=log&offset=0`));
  await raw.waitFor(() => counts(raw.text()).length >= 20, 20_000, 'twenty counts on the raw viewer');
  await log.waitFor(() => log.frames.some((f) => f.type === 'log' && (f['lines'] as unknown[]).length > 0), 20_000, 'log lines');

  tuicd.child.kill('SIGKILL');
  await tuicd.exited;
  await raw.waitFor(() => raw.closed, 10_000, 'the raw viewer to see tuicd gone');
  await log.waitFor(() => log.closed, 10_000, 'the log viewer to see tuicd gone');
  const rawBefore = Buffer.concat(raw.bytes);
  const logLines = log.frames.filter((f) => f.type === 'log').flatMap((f) => (f['lines'] as Array<{ text: string }>).map((l) => l.text));
  const lastLog = log.frames.filter((f) => f.type === 'log').at(-1)!;
  const logCursor = (lastLog['offset'] as number) + (lastLog['lines'] as unknown[]).length;

  // Nobody attached: the shells count on in the detached host.
  assert.ok(isAlive(host!), 'the pty host outlives tuicd');
  for (const pid of pids) assert.ok(isAlive(pid), `session pid ${pid} outlives tuicd`);

  tuicd = await Tuicd.start({ configDir: dir });
  assert.equal(hostPid(dir), host, 'the same pty host, adopted');
  const after = (await tuicd.socket('GET', '/sessions')).json<Row[]>();
  for (const b of before) {
    const a = after.find((r) => r.session_id === b.session_id);
    assert.ok(a, `session ${b.session_id} adopted`);
    assert.equal(a.pid, b.pid);
    assert.equal(a.alias, b.alias);
    assert.equal(a.display_name, b.display_name);
    assert.ok(a.total_written >= b.total_written, 'its output went on');
  }
  const agentAfter = after.find((r) => r.session_id === agent.session_id)?.state;
  assert.equal(agentAfter?.['agent_type'], 'claude', JSON.stringify(agentAfter));
  assert.equal(agentAfter?.['agent_state'], 'idle', JSON.stringify(agentAfter));

  const raw2 = await WsViewer.open(WsViewer.socketUrl(tuicd.socketPath, `/sessions/${watched}/stream?encoding=binary&offset=${rawBefore.length}`));
  const log2 = await WsViewer.open(WsViewer.socketUrl(tuicd.socketPath, `/sessions/${watched}/stream?format=log&offset=${logCursor}`));
  const lastBefore = counts(rawBefore.toString('utf8')).at(-1)!;
  await raw2.waitFor(() => (counts(Buffer.concat([rawBefore, ...raw2.bytes]).toString('utf8')).at(-1) ?? 0) > lastBefore + 20, 30_000, 'counting on');
  const all = counts(Buffer.concat([rawBefore, ...raw2.bytes]).toString('utf8'));
  assert.equal(all[0], 1);
  assertConsecutive(all);
  const linesAfter = () => log2.frames.filter((f) => f.type === 'log').flatMap((f) => (f['lines'] as Array<{ text: string }>).map((l) => l.text));
  await log2.waitFor(() => linesAfter().length > 20, 30_000, 'log lines after adoption');
  const logAll = [...logLines, ...linesAfter()];
  assertConsecutive(logAll.filter((l) => /^c\d+$/.test(l)).map((l) => Number(l.slice(1))));
  raw2.ws.close();
  log2.ws.close();

  // The bridge notices tuicd is back and replays its initialize: the next call works, and lists the adopted sessions.
  let answer = '';
  await waitFor(
    async () => {
      const r = await listCall();
      answer = textOf(r);
      return r.isError !== true;
    },
    'the MCP client to be served again',
    30_000,
  );
  for (const b of before) assert.ok(answer.includes(b.session_id), answer);

  const stopped = await Tuicd.runToExit(['stop', '--config-dir', dir]);
  assert.equal(stopped.code, 0, stopped.stderr);
  await tuicd.exited;
  await waitFor(() => !isAlive(host!) && pids.every((p) => !isAlive(p)), 'the pty host and every session to be gone', 10_000);
});
