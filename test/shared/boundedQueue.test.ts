/** The lossy bounded queue: three limits, drop-oldest, oversize items discarded whole, counters. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BoundedQueue } from '../../shared/boundedQueue.js';

const byLength = (s: string): number => s.length;

test('count limit drops the oldest items first', () => {
  const q = new BoundedQueue<string>({ maxItems: 3, maxBytes: 1000, sizeOf: byLength });
  for (const s of ['a', 'b', 'c', 'd', 'e']) assert.equal(q.push(s), 'queued');
  assert.equal(q.length, 3);
  assert.equal(q.dropped, 2);
  assert.equal(q.droppedBytes, 2);
  assert.deepEqual(q.drain(), ['c', 'd', 'e']);
  assert.equal(q.length, 0);
  assert.equal(q.bytes, 0);
});

test('byte limit evicts as many oldest items as it takes', () => {
  const q = new BoundedQueue<string>({ maxItems: 100, maxBytes: 10, sizeOf: byLength });
  q.push('aaaa');
  q.push('bbbb');
  assert.equal(q.bytes, 8);
  q.push('cccccc'); // 8 + 6 > 10: 'aaaa' goes (4 + 6 = 10 fits)
  assert.deepEqual([q.length, q.bytes, q.dropped, q.droppedBytes], [2, 10, 1, 4]);
  q.push('dddddddd'); // both older items go
  assert.deepEqual(q.drain(), ['dddddddd']);
  assert.deepEqual([q.dropped, q.droppedBytes], [3, 14]);
});

test('an item over the single-item limit is discarded whole and counted; the rest stays', () => {
  const q = new BoundedQueue<string>({ maxItems: 10, maxBytes: 100, maxItemBytes: 5, sizeOf: byLength });
  q.push('ok');
  assert.equal(q.push('toolong'), 'oversize');
  assert.deepEqual([q.length, q.bytes, q.dropped, q.oversize, q.droppedBytes], [1, 2, 1, 1, 7]);
  assert.equal(q.push('12345'), 'queued'); // exactly at the limit is fine
  assert.deepEqual(q.drain(), ['ok', '12345']);
});

test('the stdio queue limits: a line above the total but within the per-line limit is kept alone', () => {
  const MiB = 1024 * 1024;
  const q = new BoundedQueue<Uint8Array>({ maxItems: 256, maxBytes: 8 * MiB, maxItemBytes: 16 * MiB, sizeOf: (b) => b.length });
  q.push(new Uint8Array(MiB));
  q.push(new Uint8Array(12 * MiB));
  assert.deepEqual([q.length, q.bytes, q.dropped], [1, 12 * MiB, 1]);
  assert.equal(q.push(new Uint8Array(17 * MiB)), 'oversize');
  assert.equal(q.length, 1);
  q.push(new Uint8Array(10));
  assert.deepEqual([q.length, q.bytes], [1, 10], 'the big line made room for the next one');
});

test('shift and peek keep FIFO order across compaction', () => {
  const q = new BoundedQueue<number>({ maxItems: 5000, maxBytes: 1e9, sizeOf: () => 8 });
  const out: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    q.push(i);
    if (i % 3 === 0) out.push(q.shift()!);
  }
  assert.equal(q.peek(), out.length > 0 ? q.peek() : undefined);
  while (q.length > 0) out.push(q.shift()!);
  for (let i = 1; i < out.length; i++) assert.ok(out[i]! > out[i - 1]!, 'strictly increasing: oldest first, drops only at the front');
  assert.equal(out.length + q.dropped, 20_000);
  assert.equal(q.shift(), undefined);
  assert.equal(q.bytes, 0);
});

test('bad limits are refused', () => {
  assert.throws(() => new BoundedQueue<string>({ maxItems: 0, maxBytes: 10, sizeOf: byLength }), RangeError);
});
