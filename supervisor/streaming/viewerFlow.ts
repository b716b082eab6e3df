/**
 * Flow control through the raw viewers: a session's output is acknowledged to the pty host only as
 * far as its slowest live viewer allows, so the producer slows to that viewer instead of running
 * past it by more than the ring holds (which cost the viewer a resync). Bounded: a viewer that
 * makes no progress for STALL_MS stops counting until it reads again, and then catches up from
 * the ring (or gets a resync) as before. Log-mode viewers read the line log and never count.
 */
import { addKeyed } from '../../shared/keyedSets.js';
import type { AckLimiter } from '../hosts/outputAcks.js';
import { type Disposable, toDisposable } from '../../shared/disposable.js';

export const ViewerFlowConstants = {
  /**
   * Output is acked only up to this far behind the slowest counted viewer's position (what it took
   * from the ring minus what still sits in its socket). The host stops reading a session at
   * UNACKED_OUTPUT_BYTES unacked, so it stays within UNACKED_OUTPUT_BYTES − this (1.5 MiB, plus a
   * batch in flight) of that viewer: inside the 2 MiB ring, whatever the viewer is doing.
   */
  ACK_TRAIL_BYTES: 512 * 1024,
  /**
   * A lagging viewer whose socket takes nothing for this long stops holding its session (a closed
   * laptop, a dead link the kernel has not noticed): the producer goes on at the others' pace,
   * and the viewer gets a resync if it ever reads again. Long enough for a slow link's hiccups.
   */
  STALL_MS: 5_000,
} as const;

/** What the flow needs of a viewer. */
export interface FlowViewer {
  /**
   * Absolute offset up to which this viewer's socket has taken the output (what it took from the
   * ring minus what its socket still buffers); undefined while it does not count (before its first
   * ring read, stalled, failed).
   */
  flowPosition(): number | undefined;
}

export class ViewerFlow implements AckLimiter {
  private readonly viewers = new Map<string, Set<FlowViewer>>();
  private release: (sessionId: string) => void = () => {};

  /** `fn` runs when a session's limit may have risen (a viewer moved on, left or stopped counting). */
  onRelease(fn: (sessionId: string) => void): void {
    this.release = fn;
  }

  add(sessionId: string, viewer: FlowViewer): Disposable {
    const membership = addKeyed(this.viewers, sessionId, viewer);
    return toDisposable(() => {
      membership.dispose();
      this.release(sessionId);
    });
  }

  /** A viewer of the session moved on or stopped counting. */
  moved(sessionId: string): void {
    this.release(sessionId);
  }

  ackLimit(sessionId: string): number {
    const set = this.viewers.get(sessionId);
    if (set === undefined) return Number.POSITIVE_INFINITY;
    let limit = Number.POSITIVE_INFINITY;
    for (const v of set) {
      const at = v.flowPosition();
      if (at !== undefined && at - ViewerFlowConstants.ACK_TRAIL_BYTES < limit) limit = at - ViewerFlowConstants.ACK_TRAIL_BYTES;
    }
    return limit;
  }
}
