/** The supervisor's bookkeeping of watcher sets: seq, LRU, heartbeats and expiry, on a clock the test moves. */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { OutputWatcherRegistry, type QualifiedWatcher, WatcherLimits } from '../../../supervisor/plugins/outputWatcherRegistry.js';

function setup() {
  let now = 1_000_000;
  const published: QualifiedWatcher[][] = [];
  const registry = new OutputWatcherRegistry(
    (all) => published.push(all),
    () => now,
  );
  return { registry, published, advance: (ms: number) => (now += ms) };
}

test('a re-post (even a stale one) is a heartbeat; a set not posted for IDLE_MS is dropped and the host told', () => {
  const { registry, published, advance } = setup();
  registry.apply('a', 1, [{ id: 'w', pattern: 'x' }]);
  registry.apply('b', 1, [{ id: 'w', pattern: 'y' }]);
  advance(WatcherLimits.IDLE_MS - 1000);
  assert.equal(registry.apply('a', 1, [{ id: 'w', pattern: 'x' }]).applied, false, 'same seq: not applied');
  advance(2000);
  assert.equal(registry.expire(), true);
  assert.deepEqual(registry.clientIds(), ['a'], 'b stopped posting; a posted 2 s ago');
  assert.deepEqual(published.at(-1), [{ id: 'a/w', pattern: 'x', flags: '' }]);
  assert.equal(registry.expire(), false, 'nothing more to drop: the host is not told again');
  advance(WatcherLimits.IDLE_MS + 1);
  registry.expire();
  assert.deepEqual(registry.clientIds(), []);
  assert.deepEqual(published.at(-1), []);
});

test('the ninth client evicts the least recently posted; a newer seq replaces a set', () => {
  const { registry } = setup();
  for (let i = 0; i < WatcherLimits.CLIENTS; i++) registry.apply(`c${i}`, 1, []);
  registry.apply('c0', 2, [{ id: 'w', pattern: 'z', flags: 'i' }]);
  registry.apply('c8', 1, []);
  assert.deepEqual(registry.clientIds(), ['c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c0', 'c8']);
  assert.deepEqual(registry.all(), [{ id: 'c0/w', pattern: 'z', flags: 'i' }]);
});
