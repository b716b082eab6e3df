// Closed sessions' memory (issue 26 item 5) end to end: a real tuicd and pty host whose budget for
// closed sessions is lowered, sessions that print well over the kept tail and exit, REST reads of
// what their tombstones keep, /stats, and the oldest tombstones forgotten by both processes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const BUDGET = 600 * 1024;
const TAIL = PtyConstants.TOMBSTONE_RING_BYTES;

/** `lines` lines of 100 bytes, then `last` without a newline, then `exit code`. */
function printer(lines: number, code: number, last: string): string {
  return `i=1; while [ $i -le ${lines} ]; do printf 'row %05d %s\\n' $i ${'x'.repeat(89)}; i=$((i+1)); done; printf '${last}'; exit ${code}`;
}

async function waitUntil<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('closed sessions: tombstones with a bounded tail and a global budget', () => {
  let t: Tuicd;
  const work = mkdtempSync(join(tmpdir(), 'tuicd-closed-'));
  before(async () => {
    t = await Tuicd.start({ env: { SHELL: '/bin/sh', TUIC_PTY_TOMBSTONE_BUDGET_BYTES: String(BUDGET) } });
  });
  after(async () => {
    await t?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const create = async (script: string): Promise<string> => {
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh', args: ['-c', script], cols: 120 }));
    assert.equal(r.status, 201, r.text);
    return (r.json() as { session_id: string }).session_id;
  };
  const output = (id: string, query: string) => t.socket('GET', `/sessions/${id}/output?${query}`);
  const exited = (id: string) =>
    waitUntil(
      async () => (await output(id, 'limit=1')).json() as { exit_code?: number },
      (o) => o.exit_code !== undefined,
      30_000,
      `exit of ${id}`,
    );

  it('an exited session answers its last 64 KiB, its last 1,000 lines and its final screen, at absolute offsets', async () => {
    const id = await create(printer(3000, 5, 'the end'));
    assert.equal((await exited(id)).exit_code, 5);
    const raw = (await output(id, `offset=0&limit=${2 * TAIL}`)).json();
    assert.equal(raw.exit_code, 5);
    assert.equal(raw.offset, raw.total_written - TAIL, 'a read from 0 starts at the oldest kept byte');
    assert.equal(raw.data_length, TAIL);
    assert.ok(raw.data.endsWith(`row 03000 ${'x'.repeat(89)}\r\nthe end`));
    const log = (await output(id, 'format=log&offset=0&limit=10000')).json();
    assert.equal(log.total_lines, 3001);
    assert.equal(log.oldest_offset, 3001 - PtyConstants.TOMBSTONE_LOG_LINES);
    assert.equal(log.lines.length, PtyConstants.TOMBSTONE_LOG_LINES);
    assert.equal(log.lines.at(-1).text, 'the end');
    assert.equal(log.screen.at(-1).text, 'the end');
    const text = (await output(id, 'format=text')).json();
    assert.ok(text.data.endsWith(`row 03000 ${'x'.repeat(89)}\nthe end`));

    const stats = (await t.socket('GET', '/stats')).json();
    assert.equal(stats.closed_sessions, 1);
    assert.equal(stats.active_sessions, 0);
    assert.equal(stats.closed_budget_bytes, BUDGET);
    assert.ok(stats.closed_bytes > TAIL && stats.closed_bytes <= BUDGET, `closed_bytes ${stats.closed_bytes}`);
  });

  it('a churn past the budget: the oldest tombstones are forgotten by tuicd too (404), the newest stay readable', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const id = await create(printer(1500, i, `done ${i}`));
      ids.push(id);
      await exited(id);
    }
    // The host drops them as the budget fills; tuicd hears it on the channel just after.
    const stats = await waitUntil(
      async () => (await t.socket('GET', '/stats')).json(),
      (s) => s.closed_sessions < 4,
      10_000,
      'tombstones dropped',
    );
    assert.ok(stats.closed_bytes <= BUDGET && stats.closed_bytes > 0, `closed_bytes ${stats.closed_bytes}`);
    const kept = stats.closed_sessions as number;
    assert.ok(kept >= 1);
    for (const id of ids.slice(0, ids.length - kept)) {
      const r = await output(id, 'limit=10');
      assert.equal(r.status, 404, `dropped ${id}: ${r.text}`);
      assert.equal(r.json().code, 'not_found');
      assert.equal((await t.socket('GET', `/sessions/${id}/shell-state`)).status, 404);
    }
    const newest = ids.at(-1)!;
    const last = (await output(newest, 'limit=6')).json();
    assert.equal(last.data, 'done 7');
    assert.equal(last.exit_code, 7);
  });
});
