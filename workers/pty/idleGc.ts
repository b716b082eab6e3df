/**
 * A full garbage collection once the pty host goes quiet after a large free (issue 29 item 2). Ended
 * sessions and expired tombstones leave their rings, logs and tombstones for the GC, but V8 collects
 * the old generation when allocation pushes it, and an idle host allocates nothing: measured, 6 min after
 * 80 busy sessions ended it still held 102 MB of heap and 164 MiB of buffers. So what is freed is
 * counted, and past THRESHOLD_BYTES one collection runs when the event loop has been (mostly) idle for
 * IDLE_MS: a full GC pauses the host for tens of milliseconds, which a flood of output should not see.
 */

import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const IdleGcConstants = {
  /** Freed since the last collection before one is worth its pause: a few busy sessions' worth. */
  THRESHOLD_BYTES: 16 * 1024 * 1024,
  /** The host counts as idle once its event loop was busy less than IDLE_UTILIZATION over this long. */
  IDLE_MS: 2_000,
  IDLE_UTILIZATION: 0.05,
  /** A host that never goes quiet collects anyway after this long (one pause, not memory held for hours). */
  MAX_DEFER_MS: 60_000,
} as const;

/** The timer the collector waits on; tests hand in a manual one. */
export interface IdleGcClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface IdleGcOptions {
  /** Runs a full collection (default: V8's, see exposedGc). */
  collect?: () => void;
  clock?: IdleGcClock;
  /** Event-loop utilization (0..1) since the previous call (default: perf_hooks' eventLoopUtilization). */
  utilization?: () => number;
  thresholdBytes?: number;
  idleMs?: number;
  maxDeferMs?: number;
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
  private collectFn: (() => void) | undefined;
  /** Bytes freed since the last collection. */
  private pending = 0;
  private timer: unknown;
  /** When the current wait for a quiet moment began. */
  private waitingSince = 0;
  private runs = 0;

  constructor(options: IdleGcOptions = {}) {
    this.collectFn = options.collect;
    this.clock = options.clock ?? realClock;
    this.utilization = options.utilization ?? loopUtilization();
    this.thresholdBytes = options.thresholdBytes ?? IdleGcConstants.THRESHOLD_BYTES;
    this.idleMs = options.idleMs ?? IdleGcConstants.IDLE_MS;
    this.maxDeferMs = options.maxDeferMs ?? IdleGcConstants.MAX_DEFER_MS;
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
    if (this.pending < this.thresholdBytes || this.timer !== undefined) return;
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
    if (busy && this.clock.now() - this.waitingSince < this.maxDeferMs) {
      this.arm();
      return;
    }
    this.pending = 0;
    this.runs++;
    this.collectFn ??= exposedGc();
    this.collectFn();
  }
}
