/**
 * The liveness check the supervisor runs on each worker it starts (the pty host, the MCP hub): a
 * ping every interval, one at a time, and the first one unanswered in time reports the worker as
 * wedged, once. A worker that is busy for a while but answers within the timeout is left alone.
 */
import type { Disposable } from '../../shared/disposable.js';

export interface HeartbeatOptions {
  intervalMs: number;
  timeoutMs: number;
  /** Sends one ping that rejects if not answered within `timeoutMs`. */
  ping: (timeoutMs: number) => Promise<unknown>;
  /** False while the worker is not (or no longer) the one to check: starting, replaced, stopping. */
  active: () => boolean;
  /** The ping went unanswered; called once, and the heartbeat has stopped. */
  onMissed: (err: unknown) => void;
}

export class Heartbeat implements Disposable {
  private readonly timer: NodeJS.Timeout;
  /** One ping at a time: a wedged worker is reported once, not once per interval that passed meanwhile. */
  private inFlight = false;
  private stopped = false;

  constructor(private readonly opts: HeartbeatOptions) {
    this.timer = setInterval(this.beat, opts.intervalMs);
    this.timer.unref();
  }

  dispose(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private readonly beat = (): void => {
    if (this.stopped || this.inFlight || !this.opts.active()) return;
    this.inFlight = true;
    this.opts.ping(this.opts.timeoutMs).then(
      () => {
        this.inFlight = false;
      },
      (err: unknown) => {
        this.inFlight = false;
        // Gone or replaced meanwhile: the exit or stop path has it.
        if (this.stopped || !this.opts.active()) return;
        this.dispose();
        this.opts.onMissed(err);
      },
    );
  };
}
