/**
 * A process's event-loop delay (the supervisor's and the pty host's /metrics gauges): the 99th
 * percentile over the last 5–10 s (two rotating windows), so a reader sees recent stalls, not the
 * whole uptime's.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

import type { Disposable } from './disposable.js';

export const EventLoopLagConstants = {
  WINDOW_MS: 5_000,
  /** Sampling resolution of the histogram (ms). */
  RESOLUTION_MS: 10,
} as const;

export class EventLoopLag implements Disposable {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: EventLoopLagConstants.RESOLUTION_MS });
  /** p99 of the window before the current one, ms. */
  private previousP99 = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(windowMs: number = EventLoopLagConstants.WINDOW_MS) {
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.previousP99 = this.currentP99();
      this.histogram.reset();
    }, windowMs);
    this.timer.unref();
  }

  /** The larger of this window's and the previous window's p99, ms. */
  p99Ms(): number {
    return Math.max(this.previousP99, this.currentP99());
  }

  dispose(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private currentP99(): number {
    // An empty histogram reports NaN-like extremes; only count what was sampled.
    if (this.histogram.count === 0) return 0;
    // The histogram also counts the resolution timer's own period: subtract it to get the delay.
    return Math.max(0, this.histogram.percentile(99) / 1e6 - EventLoopLagConstants.RESOLUTION_MS);
  }
}
