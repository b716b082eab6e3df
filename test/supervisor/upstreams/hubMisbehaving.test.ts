/**
 * Misbehaving stdio upstreams behind a real tuicd, next to a healthy one: one that never answers,
 * one that floods stdout, one that prints a 20 MB line, one that exits mid-call, one that stops
 * reading stdin. None may wedge the hub, grow tuicd's memory without bound, or disturb the healthy
 * upstream or /health; the breaker and statuses must show what happened.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { stdioServer, writeUpstreams } from '../../helpers/upstreamServers.js';
import { rpc } from '../mcp/transport/mcpHttp.js';

const MOCK_JS = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;
/** tuicd's whole RSS (supervisor and hub thread with its pumps) may not pass this while upstreams misbehave. */
const RSS_BOUND_BYTES = 600 * 1024 * 1024;

interface CallResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}

async function call(t: Tuicd, name: string, args: object = {}): Promise<CallResult> {
  const answer = await rpc(t, 'tools/call', { name, arguments: args });
  assert.equal(answer.status, 200, answer.text);
  return answer.json().result;
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

async function statuses(t: Tuicd): Promise<Record<string, { status: string; last_error: string | null; pid: number | null }>> {
  const rows = (await t.socket('GET', '/mcp/upstream-status')).json<{
    upstreams: Array<{ name: string; status: string; last_error: string | null; pid: number | null }>;
  }>().upstreams;
  return Object.fromEntries(rows.map((r) => [r.name, r]));
}

async function healthy(t: Tuicd): Promise<void> {
  const health = await t.socket('GET', '/health');
  assert.equal(health.status, 200);
}

describe('misbehaving upstreams cannot wedge the hub', { timeout: 120_000 }, () => {
  let t: Tuicd;
  let dir: string;
  let events: SseClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-misbehaving-'));
    const mock = (name: string, mode: string, timeout_secs: number, env: Record<string, string> = {}) =>
      stdioServer(name, [MOCK_JS, mode], { timeout_secs, transport: { type: 'stdio', command: process.execPath, args: [MOCK_JS, mode], env } });
    writeUpstreams(dir, [
      mock('good', 'normal', 10),
      mock('silent', 'silent', 1),
      mock('flood', 'flood', 10),
      mock('huge', 'hugeLine', 2, { MOCK_MARKER: join(dir, 'huge-line-sent') }),
      mock('exits', 'exitMidCall', 10),
      mock('deaf', 'noStdinRead', 1),
    ]);
    t = await Tuicd.start({ configDir: dir });
    events = await SseClient.open({ socketPath: t.socketPath, path: '/events?types=upstream-status-changed' });
    const deadline = Date.now() + 30_000;
    while (!Object.values(await statuses(t)).every((s) => s.status === 'ready')) {
      if (Date.now() > deadline) throw new Error(`upstreams never all ready: ${JSON.stringify(await statuses(t))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  after(async () => {
    events?.close();
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a silent upstream: each call fails on its deadline, /health and the good upstream answer meanwhile, the third failure opens the circuit', async () => {
    for (let i = 0; i < 3; i++) {
      const pending = call(t, 'silent__echo', { text: 'anyone?' });
      await healthy(t);
      assert.deepEqual((await call(t, 'good__echo', { text: 'still here' })).isError ?? false, false);
      const result = await pending;
      assert.equal(result.isError, true);
      assert.match(result.content[0]!.text, /silent/);
    }
    assert.equal((await statuses(t))['silent']!.status, 'circuit_open');
    await events.until(
      () => events.events.some((e) => JSON.parse(e.data).name === 'silent' && JSON.parse(e.data).status === 'circuit_open'),
      'circuit_open event',
    );
    const refused = await call(t, 'silent__echo', { text: 'again' });
    assert.match(refused.content[0]!.text, /Circuit open for upstream 'silent' \(backoff active, will retry\)/);
    const names = (await rpc(t, 'tools/list')).json().result.tools.map((x: { name: string }) => x.name);
    assert.ok(!names.includes('silent__echo'), 'an open circuit is not listed');
    assert.ok(names.includes('good__echo'));
  });

  test('a flooding upstream still answers every call correctly, concurrently, and memory stays bounded', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => call(t, 'flood__echo', { text: `flood ${i}` })));
    results.forEach((r, i) => {
      assert.equal(r.isError ?? false, false, r.content[0]?.text);
      assert.match(r.content[0]!.text, new RegExp(`flood ${i}\\b`));
    });
    await healthy(t);
    assert.ok(rssBytes(t.child.pid!) < RSS_BOUND_BYTES, `tuicd RSS ${rssBytes(t.child.pid!)} B`);
  });

  test('a 20 MB reply line is discarded whole: the call fails on its deadline, tuicd stays small, the respawned upstream answers', async () => {
    const first = await call(t, 'huge__echo', { text: 'big one' });
    assert.equal(first.isError, true);
    await healthy(t);
    assert.ok(rssBytes(t.child.pid!) < RSS_BOUND_BYTES, `tuicd RSS ${rssBytes(t.child.pid!)} B`);
    assert.equal((await call(t, 'good__echo', { text: 'unaffected' })).isError ?? false, false);
    // The pump tore the child down; a later call respawns it (no sooner than 5 s after the last spawn).
    let answered: CallResult | undefined;
    for (let i = 0; i < 40 && !(answered && !answered.isError); i++) {
      await new Promise((r) => setTimeout(r, 500));
      answered = await call(t, 'huge__echo', { text: 'after respawn' });
    }
    assert.equal(answered?.isError ?? false, false, answered?.content[0]?.text);
    assert.match(answered!.content[0]!.text, /after respawn/);
  });

  test('an upstream that exits mid-call fails that call at once with the exit, not a timeout', async () => {
    const before = (await statuses(t))['exits']!.pid;
    const result = await call(t, 'exits__echo', { text: 'bye' });
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /exit/i);
    assert.doesNotMatch(result.content[0]!.text, /timed out|deadline/i);
    await healthy(t);
    assert.equal((await call(t, 'good__echo', { text: 'unaffected' })).isError ?? false, false);
    assert.ok(before !== null);
  });

  test('an upstream that stops reading stdin: a 1.5 MB request (far past the 64 KiB pipe buffer, under the 2 MiB body limit) fails on its deadline instead of wedging', async () => {
    const big = 'x'.repeat(1536 * 1024);
    const pending = call(t, 'deaf__echo', { text: big });
    await healthy(t);
    assert.equal((await call(t, 'good__echo', { text: 'unaffected' })).isError ?? false, false);
    const result = await pending;
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /deaf/);
    assert.ok(rssBytes(t.child.pid!) < RSS_BOUND_BYTES);
  });
});
