/**
 * A full garbage collection once a process goes quiet after a large free or a burst of work (issue 29
 * item 2), used by the pty host and the supervisor. Ended sessions and expired tombstones leave their
 * rings, logs and tombstones for the GC, but V8 collects the old generation when allocation pushes
 * it, and an idle process allocates nothing: measured, 6 min after 80 busy sessions ended the host
 * still held 102 MB of heap and 164 MiB of buffers. Nor does V8 give back the young generation a
 * burst grew: the supervisor came out of its start with 32 MiB of it committed (RSS 141 MB, 109 MB
 * after one memory-reducing collection), and a burst of session creates left both processes 20-30 KiB
 * per session above what they hold once collected. So what is freed is counted (`freed`), a burst says
 * it happened (`touched`), and one collection runs when the event loop has been (mostly) idle for
 * IDLE_MS: past THRESHOLD_BYTES freed, or once the V8 heap grew by GROWTH_BYTES since the last
 * collection. A full GC pauses the process for tens of milliseconds, which a flood should not see.
 */

import { Session } from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const IdleGcConstants = {
  /** Freed since the last collection before one is worth its pause: a few busy sessions' worth. */
  THRESHOLD_BYTES: 16 * 1024 * 1024,
  /** The host counts as idle once its event loop was busy less than IDLE_UTILIZATION over this long. */
  IDLE_MS: 2_000,
  IDLE_UTILIZATION: 0.05,
  /** A host that never goes quiet collects what it freed anyway after this long (one pause, not memory held for hours); a touch alone never forces one. */
  MAX_DEFER_MS: 60_000,
  /** After `touched`: the V8 heap (committed) grew this much since the last collection before one is worth its pause. */
  GROWTH_BYTES: 1024 * 1024,
} as const;

/** The timer the collector waits on; tests hand in a manual one. */
export interface IdleGcClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface IdleGcOptions {
  /** Runs a full collection and calls `done` once it has (default: reducingGc). */
  collect?: (done: () => void) => void;
  clock?: IdleGcClock;
  /** Event-loop utilization (0..1) since the previous call (default: perf_hooks' eventLoopUtilization). */
  utilization?: () => number;
  thresholdBytes?: number;
  idleMs?: number;
  maxDeferMs?: number;
  /** The heap `touched` compares (default: V8's committed heap, total_heap_size). */
  heapBytes?: () => number;
  growthBytes?: number;
}

const realClock: IdleGcClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref(); // never what keeps the host alive
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Two full collections with V8's `gc()` (the global one when the host was started with --expose-gc,
 * else exposed now): the first finds the dead buffers, the second frees their memory (measured: 160 MB
 * of dead Buffers still counted in `arrayBuffers` after one, none after two).
 */
export function exposedGc(): () => void {
  let gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  const collect = gc;
  return () => {
    collect();
    collect();
  };
}

/**
 * A memory-reducing collection (V8's LowMemoryNotification, reached through the in-process inspector's
 * HeapProfiler.collectGarbage): full collections until nothing more is freed, and the young generation
 * shrunk back to its minimum, which `gc()` leaves at whatever a burst grew it to (measured on the
 * supervisor: 32 MiB committed before, 1 MiB after). Asynchronous: V8 runs it as a task once the stack
 * is empty. Without an inspector (a node built without one), exposedGc's two collections.
 */
export function reducingGc(): (done?: () => void) => void {
  try {
    const probe = new Session();
    probe.connect();
    probe.disconnect();
  } catch {
    const collect = exposedGc();
    return (done) => {
      collect();
      done?.();
    };
  }
  return (done) => {
    const session = new Session();
    session.connect();
    session.post('HeapProfiler.collectGarbage', () => {
      // Not from inside the inspector's callback: disconnecting there hangs the process (Node 20).
      setImmediate(() => {
        session.disconnect();
        done?.();
      });
    });
  };
}

function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

export class IdleGc {
  private readonly clock: IdleGcClock;
  private readonly utilization: () => number;
  private readonly thresholdBytes: number;
  private readonly idleMs: number;
  private readonly maxDeferMs: number;
  private collectFn: ((done: () => void) => void) | undefined;
  /** Bytes freed since the last collection. */
  private pending = 0;
  private timer: unknown;
  /** When the current wait for a quiet moment began. */
  private waitingSince = 0;
  private runs = 0;
  private readonly heapBytes: () => number;
  private readonly growthBytes: number;
  /** The heap right after the last collection (0 before any: the first quiet moment after a touch collects). */
  private heapAfterCollect = 0;

  constructor(options: IdleGcOptions = {}) {
    this.collectFn = options.collect;
    this.clock = options.clock ?? realClock;
    this.utilization = options.utilization ?? loopUtilization();
    this.thresholdBytes = options.thresholdBytes ?? IdleGcConstants.THRESHOLD_BYTES;
    this.idleMs = options.idleMs ?? IdleGcConstants.IDLE_MS;
    this.maxDeferMs = options.maxDeferMs ?? IdleGcConstants.MAX_DEFER_MS;
    this.heapBytes = options.heapBytes ?? (() => getHeapStatistics().total_heap_size);
    this.growthBytes = options.growthBytes ?? IdleGcConstants.GROWTH_BYTES;
  }

  /** Collections run so far. */
  get collections(): number {
    return this.runs;
  }

  /** Bytes freed and not yet collected. */
  get pendingBytes(): number {
    return this.pending;
  }

  /** `bytes` became garbage (a session's buffers, a tombstone): past the threshold, a collection is due. */
  freed(bytes: number): void {
    if (!(bytes > 0)) return;
    this.pending += bytes;
    if (this.pending < this.thresholdBytes) return;
    this.wait();
  }

  /**
   * A burst of work left garbage (sessions created, a start-up): at the next quiet moment, one
   * collection if the heap grew by growthBytes since the last. Nothing runs while nothing is touched.
   */
  touched(): void {
    this.wait();
  }

  private wait(): void {
    if (this.timer !== undefined) return;
    this.waitingSince = this.clock.now();
    this.utilization(); // utilization is measured from here on
    this.arm();
  }

  dispose(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.timer = this.clock.setTimeout(() => this.check(), this.idleMs);
  }

  private check(): void {
    this.timer = undefined;
    const busy = this.utilization() >= IdleGcConstants.IDLE_UTILIZATION;
    // Only memory held (freed past the threshold) is worth a pause on a loop that never goes quiet.
    // A touch-only wait (a burst of creates) keeps waiting: on a busy process its memory-reducing
    // collection is several full pauses, then a young generation shrunk to 1 MiB to grow back.
    const forced = this.pending >= this.thresholdBytes && this.clock.now() - this.waitingSince >= this.maxDeferMs;
    if (busy && !forced) {
      this.arm();
      return;
    }
    if (this.pending < this.thresholdBytes && this.heapBytes() - this.heapAfterCollect < this.growthBytes) return;
    this.pending = 0;
    this.runs++;
    this.collectFn ??= reducingGc();
    this.collectFn(() => {
      this.heapAfterCollect = this.heapBytes();
    });
  }
}
