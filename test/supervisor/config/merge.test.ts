import assert from 'node:assert/strict';
import { test } from 'node:test';

import { changedPaths, deepMerge, jsonEqual, jsonMergeDelta } from '../../../supervisor/config/merge.js';

test('deepMerge: objects merge key by key, arrays and scalars replace, null deletes', () => {
  const base = { a: 1, list: [1, 2, 3], obj: { x: 1, y: { z: 2 } }, gone: 'bye' };
  const merged = deepMerge(base, { list: [9], obj: { y: { w: 3 } }, gone: null, fresh: { k: [] } });
  assert.deepEqual(merged, { a: 1, list: [9], obj: { x: 1, y: { z: 2, w: 3 } }, fresh: { k: [] } });
});

test('deepMerge: an object replaces a scalar, a scalar replaces an object, inputs are not mutated', () => {
  const base = { s: 'str', o: { deep: true } };
  const partial = { s: { now: 'object' }, o: 5 };
  const snapshot = JSON.stringify([base, partial]);
  assert.deepEqual(deepMerge(base, partial), { s: { now: 'object' }, o: 5 });
  assert.equal(JSON.stringify([base, partial]), snapshot);
  const merged = deepMerge(base, { o: { added: 1 } }) as { o: Record<string, unknown> };
  merged.o['added'] = 2;
  assert.deepEqual(base.o, { deep: true });
});

test('jsonMergeDelta: removed keys become null, unchanged keys are omitted, arrays travel whole', () => {
  const base = { keep: 1, change: 2, drop: 3, nested: { a: 1, b: [1, 2] }, same: [1] };
  const desired = { keep: 1, change: 20, nested: { a: 1, b: [1, 2, 3] }, same: [1], added: true };
  assert.deepEqual(jsonMergeDelta(base, desired), { change: 20, drop: null, nested: { b: [1, 2, 3] }, added: true });
  assert.equal(jsonMergeDelta(base, structuredClone(base)), undefined);
  // Applying the delta to base reproduces desired.
  assert.deepEqual(deepMerge(base, jsonMergeDelta(base, desired)), desired);
});

test('changedPaths and jsonEqual', () => {
  assert.deepEqual(changedPaths({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: 1, c: 3 }, d: [1, 2], e: 0 }), ['a.c', 'd', 'e']);
  assert.deepEqual(changedPaths({ a: 1 }, { a: 1 }), []);
  assert.equal(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 }), true);
  assert.equal(jsonEqual([1, 2], [2, 1]), false);
  assert.equal(jsonEqual({ a: undefined }, {}), false);
});
