/** Periodic work over every session in slices: each call continues where the last one stopped. */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RotatingSlice } from '../../shared/rotatingSlice.js';

test('slices continue where the last one stopped and wrap around: every entry once per round', () => {
  const map = new Map(Array.from({ length: 10 }, (_, i) => [i, i]));
  const slice = new RotatingSlice(map);
  assert.deepEqual(slice.takeShare(4), [0, 1, 2]);
  assert.deepEqual(slice.takeShare(4), [3, 4, 5]);
  assert.deepEqual(slice.takeShare(4), [6, 7, 8]);
  assert.deepEqual(slice.takeShare(4), [9, 0, 1], 'wraps to the start');
});

test('a slice never holds an entry twice, whatever count is asked for', () => {
  const map = new Map([
    ['a', 1],
    ['b', 2],
  ]);
  const slice = new RotatingSlice(map);
  assert.deepEqual(slice.take(1), [1]);
  assert.deepEqual(slice.take(5), [2, 1]);
  assert.deepEqual(new RotatingSlice(new Map()).take(3), []);
});

test('entries removed meanwhile are skipped, entries added are reached', () => {
  const map = new Map(Array.from({ length: 6 }, (_, i) => [i, i]));
  const slice = new RotatingSlice(map);
  assert.deepEqual(slice.take(2), [0, 1]);
  map.delete(2);
  map.set(6, 6);
  assert.deepEqual(slice.take(3), [3, 4, 5]);
  assert.deepEqual(slice.take(3), [6, 0, 1]);
  map.clear();
  assert.deepEqual(slice.take(3), []);
});
