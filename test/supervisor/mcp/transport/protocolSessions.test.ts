// The protocol session store: recovery of unknown ids, the 1 h idle reaper (injected clock, and a
// short real interval), sweep hooks and removal listeners, and the session cap: least recently used
// idle sessions evicted, busy ones (open stream, call in flight) stepped over, the cap read live,
// and eviction O(1) at any size.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { McpSessionConstants, McpSessionStore } from '../../../../supervisor/mcp/protocolSessions.js';

describe('McpSessionStore', () => {
  it('keeps an idle protocol session an hour and sweeps every minute by default', () => {
    assert.equal(McpSessionConstants.TTL_MS, 3_600_000);
    assert.equal(McpSessionConstants.SWEEP_INTERVAL_MS, 60_000);
  });

  it('touch refreshes a held id and silently recreates an unknown one', () => {
    let now = 1_000;
    const store = new McpSessionStore({ now: () => now });
    try {
      store.create('a', { client_name: 'c', tuic_session: 'x' });
      now = 2_000;
      const held = store.touch('a');
      assert.equal(held.recovered, false);
      assert.equal(held.meta.last_activity_ms, 2_000);
      assert.equal(held.meta.client_name, 'c');
      const fresh = store.touch('b');
      assert.equal(fresh.recovered, true);
      assert.equal(fresh.meta.client_name, null);
      assert.equal(fresh.meta.has_sse_stream, false);
      assert.equal(store.size, 2);
    } finally {
      store.dispose();
    }
  });

  it('reaps sessions idle for the TTL, keeps active ones, then runs the sweep hooks', () => {
    let now = 0;
    const swept: number[] = [];
    const removed: string[] = [];
    const store = new McpSessionStore({ now: () => now, ttlMs: 1_000, onSweep: (ms) => swept.push(ms) });
    try {
      store.onRemoved((meta, reason) => removed.push(`${meta.id}:${reason}`));
      store.create('idle');
      store.create('busy');
      now = 900;
      store.touch('busy');
      now = 1_000;
      assert.deepEqual(store.sweep(), ['idle']);
      assert.equal(store.has('busy'), true);
      assert.deepEqual(swept, [1_000]);
      now = 1_899;
      assert.deepEqual(store.sweep(), [], 'busy was refreshed at 900');
      now = 1_900;
      assert.deepEqual(store.sweep(), ['busy']);
      assert.deepEqual(removed, ['idle:reaped', 'busy:reaped']);
      assert.equal(store.delete('busy'), false, 'already gone');
    } finally {
      store.dispose();
    }
  });

  it('sweeps on its own timer, and a failing hook stops neither the reaper nor other hooks', async () => {
    const store = new McpSessionStore({ ttlMs: 1, sweepIntervalMs: 10 });
    try {
      store.onSweep(() => {
        throw new Error('hook failed');
      });
      let ran = 0;
      const hook = store.onSweep(() => ran++);
      store.create('short-lived');
      const deadline = Date.now() + 5_000;
      while ((store.has('short-lived') || ran === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.equal(store.has('short-lived'), false);
      assert.ok(ran > 0);
      hook.dispose();
      const seen = ran;
      store.sweep();
      assert.equal(ran, seen, 'a disposed hook is not called');
    } finally {
      store.dispose();
    }
  });

  it('delete removes a session and tells removal listeners', () => {
    const store = new McpSessionStore();
    try {
      const removed: string[] = [];
      store.onRemoved((meta, reason) => removed.push(`${meta.id}:${reason}`));
      store.create('d');
      assert.equal(store.delete('d'), true);
      assert.equal(store.has('d'), false);
      assert.deepEqual(removed, ['d:deleted']);
    } finally {
      store.dispose();
    }
  });

  describe('the cap (max_mcp_sessions)', () => {
    const ids = (store: McpSessionStore) => [...store.values()].map((m) => m.id);

    it('evicts the least recently used session past the cap; touch and initialize-style create count as use, get does not', () => {
      let cap = 3;
      const store = new McpSessionStore({ maxSessions: () => cap });
      try {
        const removed: string[] = [];
        store.onRemoved((meta, reason) => removed.push(`${meta.id}:${reason}`));
        store.create('a');
        store.create('b');
        store.create('c');
        store.touch('a');
        store.get('b');
        assert.deepEqual(ids(store), ['b', 'c', 'a']);
        store.create('d');
        assert.deepEqual(removed, ['b:evicted']);
        assert.deepEqual(ids(store), ['c', 'a', 'd']);
        // A presented unknown id is recreated, and counts against the cap like any other.
        assert.equal(store.touch('e').recovered, true);
        assert.deepEqual(removed, ['b:evicted', 'c:evicted']);
        assert.equal(store.size, 3);
        // Read live: lowering the cap evicts down to it at the next insert.
        cap = 1;
        store.create('f');
        assert.deepEqual(ids(store), ['f']);
        assert.deepEqual(removed.slice(2), ['a:evicted', 'd:evicted', 'e:evicted']);
      } finally {
        store.dispose();
      }
    });

    it('steps over sessions with an open GET stream or a call in flight, and never evicts the one it just created', () => {
      const store = new McpSessionStore({ maxSessions: () => 2 });
      try {
        const streaming = store.create('streaming');
        streaming.has_sse_stream = true;
        const calling = store.create('calling');
        calling.in_flight = 1;
        store.create('idle-1');
        assert.deepEqual(ids(store).sort(), ['calling', 'idle-1', 'streaming'], 'every older one is busy: over the cap by the busy ones');
        store.create('idle-2');
        assert.equal(store.has('idle-1'), false, 'the idle one goes, the busy ones stay');
        assert.equal(store.has('streaming') && store.has('calling') && store.has('idle-2'), true);
        calling.in_flight = 0;
        store.create('idle-3');
        assert.equal(store.has('calling'), false, 'once its call ended it is idle again');
        assert.equal(store.has('streaming'), true);
        assert.equal(store.size, 2);
      } finally {
        store.dispose();
      }
    });

    it('steps over at most EVICTION_SCAN_LIMIT busy sessions per insert, and later inserts evict the overshoot', () => {
      const limit = McpSessionConstants.EVICTION_SCAN_LIMIT;
      let cap = 10_000;
      const store = new McpSessionStore({ maxSessions: () => cap });
      try {
        for (let i = 0; i < 3 * limit; i++) store.create(`busy-${i}`).has_sse_stream = true;
        for (let i = 0; i < 10; i++) store.create(`idle-${i}`);
        cap = 3 * limit;
        store.create('new-1');
        // 64 busy ones stepped over, then the insert goes through: 10 idle + 1 new over the cap.
        assert.equal(store.size, 3 * limit + 11);
        store.create('new-2');
        assert.equal(store.size, 3 * limit + 12, 'the next 64 busy ones stepped over');
        store.create('new-3');
        // The third got past the busy run: every idle session before the last busy stretch it stepped over went.
        assert.deepEqual(
          ids(store).filter((id) => !id.startsWith('busy-')),
          ['new-2', 'new-3'],
        );
        assert.equal(store.size, cap + 2);
        // Streams closed: the next insert evicts down to the cap exactly, least recently used first.
        for (const meta of store.values()) meta.has_sse_stream = false;
        store.create('new-4');
        assert.equal(store.size, cap);
        assert.equal(store.has('new-4') && store.has('new-3'), true);
      } finally {
        store.dispose();
      }
    });

    it('evicts in O(1): inserting past the cap never iterates a Map', () => {
      // Finding the oldest entry through a Map's own order takes a fresh iterator, which in V8 walks
      // every deleted slot still in the table (~150 µs per eviction at 100,000 sessions). Timing is
      // too noisy on a loaded machine to show it; counting iterations is not.
      const store = new McpSessionStore({ maxSessions: () => 1_000 });
      const proto = Map.prototype as unknown as Record<string | symbol, (...args: unknown[]) => unknown>;
      const names: Array<string | symbol> = ['values', 'keys', 'entries', 'forEach', Symbol.iterator];
      const saved = names.map((name) => proto[name]!);
      let iterations = 0;
      try {
        for (let i = 0; i < 1_000; i++) store.create(`fill-${i}`);
        names.forEach((name, i) => {
          const original = saved[i]!;
          proto[name] = function (this: unknown, ...args: unknown[]) {
            iterations++;
            return original.apply(this, args);
          };
        });
        for (let i = 0; i < 10_000; i++) {
          store.create(`s-${i}`);
          if (i % 3 === 0) store.touch(`s-${i >> 1}`);
        }
      } finally {
        for (const [i, name] of names.entries()) proto[name] = saved[i]!;
        store.dispose();
      }
      assert.equal(iterations, 0);
      assert.equal(store.size, 1_000);
    });

    it('without a cap getter the store is unbounded, as before', () => {
      const store = new McpSessionStore();
      try {
        for (let i = 0; i < 1_000; i++) store.create(`u-${i}`);
        assert.equal(store.size, 1_000);
      } finally {
        store.dispose();
      }
    });
  });
});
