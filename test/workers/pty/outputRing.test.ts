/** OutputRing against a reference model: absolute offsets, wrap-around, clamping, oversized chunks. */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { OutputRing, OutputRingConstants } from '../../../workers/pty/outputRing.js';

/** A tiny deterministic generator, so a failure replays the same way. */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

function bytes(from: number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (from + i) % 251));
}

describe('OutputRing', () => {
  test('keeps everything until full; offsets are absolute', () => {
    const ring = new OutputRing(16);
    assert.equal(ring.append(bytes(0, 5)), 0);
    assert.equal(ring.append(bytes(5, 6)), 5);
    assert.equal(ring.totalWritten, 11);
    assert.equal(ring.oldestOffset, 0);
    assert.deepEqual(ring.read(), { start: 0, bytes: bytes(0, 11) });
    assert.deepEqual(ring.read({ offset: 3, limit: 4 }), { start: 3, bytes: bytes(3, 4) });
    assert.deepEqual(ring.read({ limit: 2 }), { start: 9, bytes: bytes(9, 2) });
  });

  test('wraps and clamps reads to the oldest byte kept and to the end', () => {
    const ring = new OutputRing(10);
    ring.append(bytes(0, 7));
    ring.append(bytes(7, 8)); // 15 written, 5..14 kept, storage wrapped
    assert.equal(ring.oldestOffset, 5);
    assert.deepEqual(ring.read({ offset: 0 }), { start: 5, bytes: bytes(5, 10) });
    assert.deepEqual(ring.read({ offset: 0, limit: 3 }), { start: 5, bytes: bytes(5, 3) });
    assert.deepEqual(ring.read({ offset: 99 }), { start: 15, bytes: Buffer.alloc(0) });
    assert.deepEqual(ring.read({ limit: 0 }), { start: 15, bytes: Buffer.alloc(0) });
    assert.deepEqual(ring.read({ limit: 50 }), { start: 5, bytes: bytes(5, 10) });
  });

  test('a chunk larger than the ring keeps only its tail, at the right offsets', () => {
    const ring = new OutputRing(8);
    ring.append(bytes(0, 3));
    assert.equal(ring.append(bytes(3, 20)), 3);
    assert.equal(ring.totalWritten, 23);
    assert.deepEqual(ring.read(), { start: 15, bytes: bytes(15, 8) });
    ring.append(bytes(23, 5));
    assert.deepEqual(ring.read(), { start: 20, bytes: bytes(20, 8) });
  });

  test('reads return copies: later appends do not change them', () => {
    const ring = new OutputRing(4);
    ring.append(Buffer.from('abcd'));
    const { bytes: copy } = ring.read();
    ring.append(Buffer.from('wxyz'));
    assert.equal(copy.toString(), 'abcd');
  });

  test('matches a reference model over 2,000 random appends and reads', () => {
    const random = lcg(42);
    const capacity = 97;
    const ring = new OutputRing(capacity);
    let all = Buffer.alloc(0);
    for (let i = 0; i < 2_000; i++) {
      const chunk = bytes(all.length, Math.floor(random() * 150));
      assert.equal(ring.append(chunk), all.length);
      all = Buffer.concat([all, chunk]);
      const oldest = Math.max(0, all.length - capacity);
      const offset = random() < 0.3 ? undefined : Math.floor(random() * (all.length + 20));
      const limit = random() < 0.3 ? undefined : Math.floor(random() * 120);
      const got = ring.read({ offset, limit });
      let start: number;
      let end = all.length;
      if (offset === undefined) start = limit === undefined ? oldest : Math.max(oldest, end - limit);
      else {
        start = Math.min(Math.max(offset, oldest), end);
        if (limit !== undefined) end = Math.min(end, start + limit);
      }
      assert.equal(got.start, start, `step ${i}`);
      assert.ok(got.bytes.equals(all.subarray(start, end)), `step ${i}: bytes differ`);
    }
  });

  test('storage follows the output: 256 bytes for a prompt, the first chunk doubling, then whole chunks', () => {
    const { CHUNK_BYTES, FIRST_CHUNK_BYTES } = OutputRingConstants;
    const ring = new OutputRing(2 * 1024 * 1024);
    assert.equal(ring.heldBytes, 0);
    // What bash prints at a prompt: bracketed paste on, a coloured PS1.
    ring.append(Buffer.from('\x1b[?2004h\x1b[1;32muser@host\x1b[0m:\x1b[1;34m~/src/project\x1b[0m$ '));
    assert.equal(ring.heldBytes, 256); // an idle session's ring, of which a host holds hundreds
    assert.equal(ring.heldBytes, FIRST_CHUNK_BYTES);
    ring.append(bytes(0, FIRST_CHUNK_BYTES)); // past the first size: doubled
    assert.equal(ring.heldBytes, 2 * FIRST_CHUNK_BYTES);
    ring.append(bytes(0, 5 * FIRST_CHUNK_BYTES)); // a jump doubles as often as it needs
    assert.equal(ring.heldBytes, 8 * FIRST_CHUNK_BYTES);
    ring.append(bytes(0, CHUNK_BYTES - ring.totalWritten)); // the first chunk is whole, and no more
    assert.equal(ring.heldBytes, CHUNK_BYTES);
    ring.append(bytes(0, 10));
    assert.equal(ring.heldBytes, 2 * CHUNK_BYTES); // the second chunk comes whole
  });

  test('a first write larger than the ring starts past its first chunk and keeps its tail', () => {
    const capacity = 3 * OutputRingConstants.CHUNK_BYTES + 1000;
    const ring = new OutputRing(capacity);
    const first = bytes(3, capacity + OutputRingConstants.CHUNK_BYTES + 17); // its tail starts in the second chunk
    ring.append(first);
    const got = ring.read();
    assert.equal(got.start, first.length - capacity);
    assert.ok(got.bytes.equals(first.subarray(first.length - capacity)));
    ring.append(bytes(5, 100));
    assert.ok(ring.read({ limit: 100 }).bytes.equals(bytes(5, 100)));
  });

  test('keeps every byte across the first chunk growing and the ring wrapping (2,000 random appends)', () => {
    const random = lcg(7);
    const capacity = 3 * OutputRingConstants.CHUNK_BYTES + 1000; // a short last chunk too
    const ring = new OutputRing(capacity);
    let total = 0;
    let kept = Buffer.alloc(0); // the last `capacity` bytes written
    for (let i = 0; i < 2_000; i++) {
      // Mostly small writes (the first chunk grows through every size), some larger than it.
      const length = random() < 0.9 ? Math.floor(random() * 700) : Math.floor(random() * 20_000);
      const chunk = bytes(total, length);
      assert.equal(ring.append(chunk), total);
      total += length;
      kept = Buffer.concat([kept, chunk]);
      if (kept.length > capacity) kept = kept.subarray(kept.length - capacity);
      const got = ring.read();
      assert.equal(got.start, total - kept.length, `step ${i}`);
      assert.ok(got.bytes.equals(kept), `step ${i}: bytes differ`);
      assert.ok(ring.heldBytes <= capacity, `step ${i}: ${ring.heldBytes} bytes held`);
    }
    assert.ok(total > 2 * capacity, 'the ring wrapped');
    assert.equal(ring.heldBytes, capacity);
  });

  test('refuses a capacity that is not a positive integer', () => {
    assert.throws(() => new OutputRing(0), RangeError);
    assert.throws(() => new OutputRing(1.5), RangeError);
  });
});
