/**
 * The settle gate through a real tuicd: the first tools/list waits for boot connects (a slow
 * handshake is listed), waits at most 3 s for one that never finishes, then never waits again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';
import { stdioServer, writeUpstreams } from '../../helpers/upstreamServers.js';
import { rpc } from '../mcp/transport/mcpHttp.js';

const SLOW_JS = new URL('../../fixtures/upstreams/slowHandshake.js', import.meta.url).pathname;
/** HubConstants.SETTLE_TIMEOUT_MS; a lower bound with margin for timer slack. */
const SETTLE_TIMEOUT_MS = 3_000;

async function startWith(servers: ReturnType<typeof stdioServer>[], env: Record<string, string> = {}): Promise<{ t: Tuicd; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-settle-'));
  writeUpstreams(dir, servers);
  return { t: await Tuicd.start({ configDir: dir, env }), dir };
}

async function listNames(t: Tuicd): Promise<string[]> {
  const answer = await rpc(t, 'tools/list');
  assert.equal(answer.status, 200, answer.text);
  return answer.json().result.tools.map((x: { name: string }) => x.name);
}

test('await_initial_settle: the first tools/list right after start includes an upstream whose handshake is slow', async (t) => {
  // A long gate (test knob): on a loaded box, starting the hub thread and the upstream alone can take over 3 s.
  const { t: tuicd, dir } = await startWith([stdioServer('slow', [SLOW_JS, '1000'])], { TUIC_SETTLE_TIMEOUT_MS: '30000' });
  t.after(async () => {
    await tuicd.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.ok((await listNames(tuicd)).includes('slow__ping'), 'a client that lists once during its handshake still sees the upstream');
});

test('await_initial_settle_times_out_then_latches: a handshake that never ends holds the first list ≤ 3 s, later lists not at all', async (t) => {
  const { t: tuicd, dir } = await startWith([stdioServer('quick', [SLOW_JS, '0']), stdioServer('stuck', [SLOW_JS, '-1'], { timeout_secs: 60 })]);
  t.after(async () => {
    await tuicd.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const started = Date.now();
  const first = await listNames(tuicd);
  const waited = Date.now() - started;
  assert.ok(waited >= SETTLE_TIMEOUT_MS - 100, `the first list waited ${waited} ms for the stuck handshake`);
  assert.ok(!first.includes('stuck__ping'));
  await tuicd.waitForStderr(/did not settle in time/);
  // Latched: the stuck upstream is still connecting, yet the next list answers without the gate.
  const again = Date.now();
  await listNames(tuicd);
  assert.ok(Date.now() - again < SETTLE_TIMEOUT_MS - 100, 'the gate is latched open');
  // The upstream that did answer is listed (at once if it beat the timeout; a loaded machine may need longer).
  for (let i = 0; i < 200 && !(await listNames(tuicd)).includes('quick__ping'); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok((await listNames(tuicd)).includes('quick__ping'));
});

test('with no upstreams configured tools/list never waits and lists the natives only', async (t) => {
  const { t: tuicd, dir } = await startWith([]);
  t.after(async () => {
    await tuicd.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const started = Date.now();
  const names = await listNames(tuicd);
  assert.ok(names.includes('session') && !names.some((n) => n.includes('__')));
  assert.ok(Date.now() - started < SETTLE_TIMEOUT_MS - 100);
});
