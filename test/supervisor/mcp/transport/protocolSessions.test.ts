// The protocol session store: recovery of unknown ids, the 1 h idle reaper (injected clock, and a
// short real interval), sweep hooks and removal listeners.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { McpSessionConstants, McpSessionStore } from '../../../../supervisor/mcp/protocolSessions.js';

describe('McpSessionStore', () => {
  it('uses the spec’s TTL and sweep period by default', () => {
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
});
