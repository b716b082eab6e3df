/**
 * An orchestrator's payload-free wake, per identity: one pending wake covers every later unread
 * message; an ambiguous (typed, unacknowledged) wake expires after five seconds and may be retried
 * once; a second ambiguous result silences wakes for that unread group until an inbox or wait read
 * acknowledges it; a wake refused before its first byte is not retried in the same lifecycle, and
 * the next busy→idle edge re-arms it.
 */
export const WakeConstants = {
  /** An ambiguous wake is outstanding this long before a retry may be typed. */
  UNCERTAIN_EXPIRY_MS: 5_000,
  /** Ambiguous results a group may have: the first is retried once, the second ends its budget. */
  MAX_UNCERTAIN: 2,
} as const;

export type WakeOutcome = 'acknowledged' | 'uncertain' | 'not_started';

export class WakeBudget {
  /** A wake is queued or being typed: later mail coalesces into it. */
  pending = false;
  /** Ambiguous results for the current unread group. */
  private uncertain = 0;
  /** An ambiguous wake counts as outstanding until then. */
  private ambiguousUntil = 0;
  /** This lifecycle refused a wake before any byte was written. */
  private refused = false;
  /** Unread mail up to this logical ms was announced by an acknowledged wake. */
  announcedThrough = 0;
  /** The 5 s expiry of an ambiguous wake. */
  timer: NodeJS.Timeout | null = null;

  /** Whether a new wake may be queued now. */
  canWake(now: number): boolean {
    return !this.pending && !this.refused && this.uncertain < WakeConstants.MAX_UNCERTAIN && now >= this.ambiguousUntil;
  }

  /** The budget is spent until a read acknowledges the group (two ambiguous results). */
  get exhausted(): boolean {
    return this.uncertain >= WakeConstants.MAX_UNCERTAIN;
  }

  /** A new busy→idle edge: the lifecycle that refused is not the one being retried. */
  rearm(): void {
    this.refused = false;
  }

  /** An inbox or successful wait read the group: the budget starts over. */
  acknowledge(): void {
    this.uncertain = 0;
    this.ambiguousUntil = 0;
  }

  /** A wake's write ended; `through` is the newest unread message it announced. */
  settle(outcome: WakeOutcome, through: number, now: number): void {
    this.pending = false;
    if (outcome === 'acknowledged') {
      this.uncertain = 0;
      this.announcedThrough = Math.max(this.announcedThrough, through);
    } else if (outcome === 'uncertain') {
      this.uncertain++;
      this.ambiguousUntil = now + WakeConstants.UNCERTAIN_EXPIRY_MS;
    } else {
      this.refused = true;
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
