/** The tombstone's own bounds: the tail's size, the log's line and character caps, absolute reads. */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { OutputRing } from '../../../workers/pty/outputRing.js';
import { Tombstone } from '../../../workers/pty/tombstone.js';

const SCREEN = { rows: ['$ done'], cursor_row: 0, cursor_col: 6, alt_screen: false, cols: 80, rows_count: 1 };

function source(ring: OutputRing, lines: string[]) {
  return {
    exited: { exit_code: 0, signal: null, total_written: ring.totalWritten },
    readRaw: (o: { offset?: number; limit?: number }) => ({ ...ring.read(o), total_written: ring.totalWritten }),
    readLog: (o: { limit?: number }) => {
      const n = Math.min(o.limit ?? 200, lines.length);
      return { lines: lines.slice(lines.length - n), offset: lines.length - n, total_lines: lines.length, oldest_offset: 0, partial: '' };
    },
    readScreen: () => SCREEN,
  };
}

describe('Tombstone', () => {
  test('keeps at most TOMBSTONE_LOG_CHARS of the last lines, the newest always; reads clamp to what is kept', () => {
    const ring = new OutputRing(PtyConstants.OUTPUT_RING_BYTES);
    ring.append(Buffer.alloc(300_000, 0x61));
    const lines = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(5, '0')}${'z'.repeat(9995)}`);
    const t = new Tombstone(source(ring, lines));
    const kept = Math.floor(PtyConstants.TOMBSTONE_LOG_CHARS / 10_000);
    const all = t.readLog({ offset: 0, limit: 10_000 });
    assert.equal(all.total_lines, 2000);
    assert.equal(all.oldest_offset, 2000 - kept);
    assert.equal(all.lines.length, kept);
    assert.equal(all.lines.at(-1), lines.at(-1));
    assert.deepEqual(t.readLog({ offset: 1999, limit: 5 }).lines, [lines[1999]]);
    assert.deepEqual(t.readLog({ offset: 5000 }).lines, []);
    // The tail: 64 KiB, at its absolute offset.
    const raw = t.readRaw({ offset: 0 });
    assert.deepEqual(
      [raw.start, raw.bytes.length, raw.total_written],
      [300_000 - PtyConstants.TOMBSTONE_RING_BYTES, PtyConstants.TOMBSTONE_RING_BYTES, 300_000],
    );
    assert.deepEqual(t.readRaw({ limit: 10 }).start, 299_990);
    assert.deepEqual(t.readRaw({ offset: 400_000 }).bytes.length, 0);
    assert.deepEqual(t.readScreen(), SCREEN);
    assert.ok(
      t.bytes > PtyConstants.TOMBSTONE_RING_BYTES + kept * 20_000 && t.bytes < PtyConstants.TOMBSTONE_RING_BYTES + (kept + 1) * 20_100,
      String(t.bytes),
    );

    // One line longer than the whole cap still stays: the newest line is never dropped.
    const huge = new Tombstone(source(new OutputRing(16), ['x', 'y'.repeat(PtyConstants.TOMBSTONE_LOG_CHARS + 1)]));
    assert.deepEqual(
      huge.readLog({ offset: 0 }).lines.map((l) => l.length),
      [PtyConstants.TOMBSTONE_LOG_CHARS + 1],
    );
    assert.equal(huge.readRaw({}).bytes.length, 0);
  });
});
