/**
 * The text stage (strip, line log, redaction, output parser, watchers) runs after the bytes it reads
 * have left for the viewers, not in front of them: a session queues its batches here and every
 * session's queue is worked off once per event-loop turn, in the check phase, after the channel
 * has written the turn's `data` events. Whoever reads a session's text first makes it catch up
 * (`PendingText.drain`), so a log read never lags the data events already sent.
 */

type Drain = () => void;

/** The host's one queue of sessions with text still to process. */
class DeferredTextStage {
  private readonly due = new Set<Drain>();
  private armed = false;
  private beforeRun: (() => void) | undefined;

  /** Called before each run: the host puts the turn's channel writes on the wire first (Transport.flush). */
  setBeforeRun(fn: () => void): void {
    this.beforeRun = fn;
  }

  schedule(drain: Drain): void {
    this.due.add(drain);
    if (this.armed) return;
    this.armed = true;
    setImmediate(this.run);
  }

  cancel(drain: Drain): void {
    this.due.delete(drain);
  }

  private readonly run = (): void => {
    this.armed = false;
    this.beforeRun?.();
    // A drain may queue more (it never does today); those wait for the next turn.
    const due = [...this.due];
    this.due.clear();
    for (const drain of due) drain();
  };
}

export const deferredTextStage = new DeferredTextStage();

/** One session's batches not yet through the text stage, in order. */
export class PendingText {
  private readonly batches: Uint8Array[] = [];

  constructor(private readonly process: (bytes: Uint8Array) => void) {}

  get empty(): boolean {
    return this.batches.length === 0;
  }

  push(bytes: Uint8Array): void {
    this.batches.push(bytes);
    if (this.batches.length === 1) deferredTextStage.schedule(this.drain);
  }

  /** Runs the text stage over everything queued, now. */
  readonly drain = (): void => {
    if (this.batches.length === 0) return;
    deferredTextStage.cancel(this.drain);
    // Taken whole first: a batch that throws must not be run again by the next drain.
    const batches = this.batches.splice(0);
    for (const bytes of batches) this.process(bytes);
  };

  /** Forgets what is queued (the session was retired: nobody will read its text). */
  clear(): void {
    this.batches.length = 0;
    deferredTextStage.cancel(this.drain);
  }
}
