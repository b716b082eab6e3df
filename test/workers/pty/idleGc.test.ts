/**
 * The pty host's idle collection (issue 29 item 2) on an injected clock: a collection once the frees
 * pass the threshold and the event loop has gone quiet, deferred while it is busy (up to a bound), and
 * fed by real sessions that end and tombstones that expire (`forget`, what the supervisor sends when a
 * closed session's time is up) in a PtyService with real PTYs.
 */

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, test } from 'node:test';

import { getHeapSpaceStatistics } from 'node:v8';

import { exposedGc, IdleGc, type IdleGcClock, reducingGc } from '../../../shared/idleGc.js';
import { PtyService } from '../../../workers/pty/ptyService.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

/** Timers that fire only when the test moves time on. */
class ManualClock implements IdleGcClock {
  private t = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  get pending(): number {
    return this.timers.size;
  }
  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = until;
  }
}

function collector(options: { threshold?: number; busy?: () => boolean } = {}) {
  const clock = new ManualClock();
  let collections = 0;
  const gc = new IdleGc({
    collect: () => collections++,
    clock,
    utilization: () => (options.busy?.() === true ? 0.9 : 0.01),
    thresholdBytes: options.threshold ?? 1_000,
    idleMs: 2_000,
    maxDeferMs: 60_000,
  });
  return { gc, clock, collections: () => collections };
}

describe('IdleGc', () => {
  test('frees under the threshold arm nothing; past it, one collection once the host was idle for IDLE_MS', () => {
    const { gc, clock, collections } = collector();
    gc.freed(400);
    gc.freed(500);
    assert.equal(clock.pending, 0, 'under the threshold: no timer');
    gc.freed(200);
    assert.equal(clock.pending, 1);
    clock.advance(1_999);
    assert.equal(collections(), 0);
    clock.advance(1);
    assert.equal(collections(), 1);
    assert.equal(gc.pendingBytes, 0);
    // More frees while the timer runs do not add timers; the next batch arms a new one.
    gc.freed(5_000);
    gc.freed(5_000);
    assert.equal(clock.pending, 1);
    clock.advance(2_000);
    assert.equal(collections(), 2);
    clock.advance(60_000);
    assert.equal(collections(), 2, 'nothing freed since: no more collections');
  });

  test('a busy host defers the collection, and collects anyway after MAX_DEFER_MS', () => {
    let busy = true;
    const { gc, clock, collections } = collector({ busy: () => busy });
    gc.freed(10_000);
    clock.advance(20_000);
    assert.equal(collections(), 0, 'busy: deferred');
    busy = false;
    clock.advance(2_000);
    assert.equal(collections(), 1, 'quiet: collected');
    busy = true;
    gc.freed(10_000);
    clock.advance(59_999);
    assert.equal(collections(), 1);
    clock.advance(2_000);
    assert.equal(collections(), 2, 'never quiet: collected after the bound');
  });

  test('a touch alone never forces a collection on a busy process; it waits for a quiet moment', () => {
    let busy = true;
    const { gc, clock, collections } = collector({ busy: () => busy });
    gc.touched();
    clock.advance(300_000);
    assert.equal(collections(), 0, 'busy for five minutes after a burst of creates: no pause');
    busy = false;
    clock.advance(2_000);
    assert.equal(collections(), 1, 'quiet: collected');
  });

  test('nothing freed, zero or negative: nothing armed; dispose cancels a waiting collection', () => {
    const { gc, clock, collections } = collector({ threshold: 1 });
    gc.freed(0);
    gc.freed(-5);
    gc.freed(Number.NaN);
    assert.equal(clock.pending, 0);
    gc.freed(10);
    gc.dispose();
    clock.advance(10_000);
    assert.equal(collections(), 0);
  });

  test('touched: at the next quiet moment, one collection if the heap grew by the growth bound since the last; nothing armed otherwise', () => {
    const clock = new ManualClock();
    let heap = 10_000_000;
    let collections = 0;
    const gc = new IdleGc({
      collect: (done) => {
        collections++;
        heap = 5_000_000; // what the collection left
        done();
      },
      clock,
      utilization: () => 0.01,
      idleMs: 2_000,
      heapBytes: () => heap,
      growthBytes: 1_000_000,
    });
    assert.equal(clock.pending, 0, 'nothing touched: no timer');
    gc.touched();
    gc.touched();
    assert.equal(clock.pending, 1, 'a burst arms one wait');
    clock.advance(2_000);
    assert.equal(collections, 1, 'the first quiet moment after a touch collects');
    heap += 900_000;
    gc.touched();
    clock.advance(2_000);
    assert.equal(collections, 1, 'grown less than the bound since the last collection: none');
    assert.equal(clock.pending, 0);
    heap += 200_000;
    gc.touched();
    clock.advance(2_000);
    assert.equal(collections, 2, 'past the bound: collected');
  });

  test('the reducing collector gives back the young generation a burst grew (gc() keeps it)', async () => {
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
    const grow = () => {
      let keep: object[] = [];
      for (let i = 0; i < 2_000_000; i++) {
        keep.push({ i, s: `x${i}` });
        if (keep.length > 1_000) keep = [];
      }
    };
    grow();
    const grown = newSpace();
    await new Promise<void>((resolve) => reducingGc()(resolve));
    assert.ok(newSpace() < grown, `young generation ${grown} -> ${newSpace()}`);
  });

  test('the default collector runs V8 collections in this process (exposed on demand)', () => {
    const collect = exposedGc();
    const holder = { buffers: Array.from({ length: 32 }, () => Buffer.alloc(1024 * 1024, 1)) };
    const before = process.memoryUsage().arrayBuffers;
    holder.buffers = [];
    collect();
    assert.ok(process.memoryUsage().arrayBuffers <= before - 30 * 1024 * 1024, 'the dead buffers are freed');
  });
});

describe('PtyService: ended sessions and expired tombstones feed the idle collection', () => {
  test('real sessions print 300 KB and exit, their tombstones expire: one collection after each quiet moment', async () => {
    const clock = new ManualClock();
    let collections = 0;
    const idleGc = new IdleGc({ collect: () => collections++, clock, utilization: () => 0, thresholdBytes: 1_500_000, idleMs: 2_000 });
    const exits = new Map<string, () => void>();
    const service: PtyService = new PtyService(
      {
        emit: (event, data, options) => {
          const id = (data as { session_id: string }).session_id;
          if (event === 'data') service.ack(id, options?.payload?.length ?? 0);
          if (event === 'exit') exits.get(id)?.();
        },
      },
      { createTextLog: () => new TextPipeline(), idleGc },
    );
    try {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv(), LANG: 'C.UTF-8', TERM: 'xterm-256color' };
      const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
      await Promise.all(
        ids.map(
          (id) =>
            new Promise<void>((resolve) => {
              exits.set(id, resolve);
              // 3,000 lines of 100 bytes: each session holds ~300 KB of ring and ~300 KB of log.
              const script = `i=0; while [ $i -lt 3000 ]; do echo ${'z'.repeat(90)} $i; i=$((i+1)); done`;
              service.spawn({ session_id: id, shell: '/bin/sh', args: ['-c', script], cwd: tmpdir(), env, rows: 24, cols: 100 });
            }),
        ),
      );
      // Six sessions' rings and logs (~600 KB each) became garbage when they turned into tombstones.
      assert.ok(idleGc.pendingBytes >= 6 * 500_000, `pending ${idleGc.pendingBytes}`);
      assert.equal(collections, 0, 'not before the host was quiet for IDLE_MS');
      clock.advance(2_000);
      assert.equal(collections, 1, 'collected once the ended sessions were let go');
      const kept = service.tombstones();
      assert.equal(kept.count, 6);
      // The supervisor's TTL is up: it forgets each tombstone; their bytes are the next batch.
      for (const id of ids) service.forget({ session_id: id });
      assert.equal(service.tombstones().bytes, 0);
      assert.equal(idleGc.pendingBytes, kept.bytes, 'every tombstone byte counted as freed');
      assert.ok(kept.bytes >= 1_500_000, `tombstones held ${kept.bytes}`);
      clock.advance(10_000);
      assert.equal(collections, 2);
    } finally {
      service.dispose();
      idleGc.dispose();
    }
  });
});
