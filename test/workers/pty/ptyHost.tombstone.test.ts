/**
 * Closed sessions' memory (issue 26 item 5) on a real pty host: an exited session keeps only a
 * tombstone (final screen, exit status, the last 64 KiB of output, the last 1,000 log lines), reads
 * stay absolute over the kept tail, and all tombstones share a byte budget that drops the oldest.
 */

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { ErrorCode } from '../../../shared/errors.js';
import { PtyConstants } from '../../../shared/protocol/pty.js';
import { type PtyHostHandle, startPtyHost, waitFor } from './ptyHostHarness.js';

const TAIL = PtyConstants.TOMBSTONE_RING_BYTES;

/** `lines` lines of 100 bytes each ("row 00001 xxx…"), then the final screen's words, then `exit code`. */
function printer(lines: number, code: number, last: string): string {
  return `i=1; while [ $i -le ${lines} ]; do printf 'row %05d %s\\n' $i ${'x'.repeat(89)}; i=$((i+1)); done; printf '${last}'; exit ${code}`;
}

describe('pty host: tombstones of exited sessions', () => {
  const hosts: PtyHostHandle[] = [];
  after(async () => {
    for (const h of hosts) await h.stop();
  });

  test('a session that printed well over 64 KiB keeps its last 64 KiB, its last 1,000 lines and its final screen', async () => {
    const host = await startPtyHost();
    hosts.push(host);
    // 3,000 lines of 100 bytes (plus the terminal's CR): about 300 KiB, far past the kept tail.
    const { id } = await host.spawnSession({ args: ['-c', printer(3000, 7, 'final words')], cols: 120 });
    const exit = await host.waitForExit(id, 30_000);
    assert.equal(exit.exit_code, 7);
    const printed = host.record(id).bytes;
    assert.equal(exit.total_written, printed.length);
    assert.ok(printed.length > 4 * TAIL, `printed ${printed.length} bytes`);

    // The whole tail: the last 64 KiB exactly, at their absolute offset.
    const all = await host.client.requestWithPayload('readRaw', { session_id: id });
    assert.equal(all.result.total_written, printed.length);
    assert.equal(all.result.start, printed.length - TAIL);
    assert.deepEqual(Buffer.from(all.payload!), printed.subarray(printed.length - TAIL));
    // A read from before the kept tail answers from its oldest byte; one inside it, from there.
    const early = await host.client.requestWithPayload('readRaw', { session_id: id, offset: 0, limit: 100 });
    assert.equal(early.result.start, printed.length - TAIL);
    assert.deepEqual(Buffer.from(early.payload!), printed.subarray(printed.length - TAIL, printed.length - TAIL + 100));
    const inside = await host.client.requestWithPayload('readRaw', { session_id: id, offset: printed.length - 50 });
    assert.equal(inside.result.start, printed.length - 50);
    assert.deepEqual(Buffer.from(inside.payload!), printed.subarray(printed.length - 50));
    const lastBytes = await host.client.requestWithPayload('readRaw', { session_id: id, limit: 11 });
    assert.equal(Buffer.from(lastBytes.payload!).toString(), 'final words');

    // The log: 3,001 lines ever (the unfinished last one completed at exit), the last 1,000 kept.
    const log = await host.client.request('readLog', { session_id: id, offset: 0, limit: 5000 });
    assert.equal(log.total_lines, 3001);
    assert.equal(log.oldest_offset, 3001 - PtyConstants.TOMBSTONE_LOG_LINES);
    assert.equal(log.offset, log.oldest_offset);
    assert.equal(log.lines.length, PtyConstants.TOMBSTONE_LOG_LINES);
    assert.equal(log.lines[0], `row 02002 ${'x'.repeat(89)}`);
    assert.equal(log.lines.at(-2), `row 03000 ${'x'.repeat(89)}`);
    assert.equal(log.lines.at(-1), 'final words');
    const page = await host.client.request('readLog', { session_id: id, offset: 2990, limit: 3 });
    assert.deepEqual([page.offset, page.lines], [2990, [`row 02991 ${'x'.repeat(89)}`, `row 02992 ${'x'.repeat(89)}`, `row 02993 ${'x'.repeat(89)}`]]);
    const tail = await host.client.request('readLog', { session_id: id, limit: 2 });
    assert.deepEqual([tail.offset, tail.lines], [2999, [`row 03000 ${'x'.repeat(89)}`, 'final words']]);

    // The final screen: the last rows printed, the cursor after the unfinished line.
    const screen = await host.client.request('readScreen', { session_id: id });
    assert.equal(screen.rows_count, 24);
    assert.equal(screen.rows[23], 'final words');
    assert.equal(screen.rows[22], `row 03000 ${'x'.repeat(89)}`);
    assert.equal(screen.cursor_row, 23);

    // What the host keeps for it: the tail and the lines, not the 2 MiB ring and its 3,000 lines.
    const held = await host.client.request('tombstones', {});
    assert.equal(held.count, 1);
    assert.ok(held.bytes > TAIL && held.bytes < TAIL + 300 * 1024, `tombstone holds ${held.bytes} bytes`);
    assert.equal(held.budget_bytes, PtyConstants.TOMBSTONE_BUDGET_BYTES);
    // Operations on the terminal are dropped, as for an exited session; forget frees the tombstone.
    await host.client.request('resize', { session_id: id, rows: 30, cols: 90 });
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('ignored\n') });
    await host.client.request('forget', { session_id: id });
    assert.deepEqual(await host.client.request('tombstones', {}), { count: 0, bytes: 0, budget_bytes: PtyConstants.TOMBSTONE_BUDGET_BYTES });
    await assert.rejects(host.client.request('readScreen', { session_id: id }), (err: { code?: string }) => err.code === ErrorCode.PTY_NOT_FOUND);
  });

  test('a churn past the budget drops the oldest tombstones and says so; the newest stay readable', async () => {
    const budget = 600 * 1024;
    const host = await startPtyHost({ env: { TUIC_PTY_TOMBSTONE_BUDGET_BYTES: String(budget) } });
    hosts.push(host);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      // 1,500 lines of 100 bytes each: a tombstone of 64 KiB of output and 1,000 lines (~270 KB).
      const { id } = await host.spawnSession({ args: ['-c', printer(1500, i, `done ${i}`)] });
      ids.push(id);
      await host.waitForExit(id, 30_000);
      const held = await host.client.request('tombstones', {});
      assert.ok(held.bytes <= budget, `after session ${i}: ${held.bytes} bytes held, over the ${budget} budget`);
      assert.equal(held.budget_bytes, budget);
    }
    const held = await host.client.request('tombstones', {});
    assert.ok(held.count >= 1 && held.count < 4, `${held.count} tombstones kept`);
    await waitFor(
      () => host.dropped.length === ids.length - held.count,
      5_000,
      () => `dropped ${JSON.stringify(host.dropped)}`,
    );
    // Oldest first, each once.
    assert.deepEqual(host.dropped, ids.slice(0, ids.length - held.count));
    for (const id of host.dropped) {
      await assert.rejects(host.client.request('readLog', { session_id: id }), (err: { code?: string }) => err.code === ErrorCode.PTY_NOT_FOUND);
    }
    const newest = ids.at(-1)!;
    const screen = await host.client.request('readScreen', { session_id: newest });
    assert.equal(screen.rows[23], 'done 11');
    const raw = await host.client.requestWithPayload('readRaw', { session_id: newest, limit: 7 });
    assert.equal(Buffer.from(raw.payload!).toString(), 'done 11');
  });
});
