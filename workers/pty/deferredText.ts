/**
 * The text stage (strip, line log, redaction, output parser, watchers) runs after the bytes it reads
 * have left for the viewers, not in front of them: a session queues its batches here and the queues
 * are worked off in the check phase, after the channel has written the turn's `data` events. Whoever
 * reads a session's text first makes it catch up (`PendingText.drain`), so a log read never lags the
 * data events already sent.
 *
 * One pass does at most TURN_BUDGET_MS of text, sessions in turn, then yields to the next turn: with
 * 500 busy sessions, working off every queue at once made single turns of 70–100 ms (after a GC
 * pause, every session had a backlog), and PTY reads, channel writes and the supervisor's requests
 * waited behind them. A session whose queue passes MAX_QUEUED_BYTES is worked off in the data path
 * instead, so a text stage slower than the output cannot hold an unbounded backlog.
 */

import { performance } from 'node:perf_hooks';

export const DeferredTextConstants = {
  /** Text-stage time one pass may take before it yields to the event loop. */
  TURN_BUDGET_MS: 2,
  /** Queued bytes of one session past which its text is processed at once (the backlog bound). */
  MAX_QUEUED_BYTES: 512 * 1024,
} as const;

export interface DeferredTextStageOptions {
  budgetMs?: number;
  /** Milliseconds, monotonic (default performance.now). */
  now?: () => number;
  /** Runs a pass on a later turn (default setImmediate: the check phase, after I/O). */
  defer?: (fn: () => void) => void;
}

/** One session's queue as the stage sees it: `step` processes one batch, false when nothing is left. */
interface Queue {
  step(): boolean;
}

/** The host's queue of sessions with text still to process. */
export class DeferredTextStage {
  /** In turn order: a session left unfinished by a pass goes to the back. */
  private readonly due = new Set<Queue>();
  private armed = false;
  private beforeRun: (() => void) | undefined;
  private readonly budgetMs: number;
  private readonly now: () => number;
  private readonly defer: (fn: () => void) => void;
  private passes = 0;

  constructor(options: DeferredTextStageOptions = {}) {
    this.budgetMs = options.budgetMs ?? DeferredTextConstants.TURN_BUDGET_MS;
    this.now = options.now ?? (() => performance.now());
    this.defer = options.defer ?? ((fn) => setImmediate(fn));
  }

  /** Called before each run: the host puts the turn's channel writes on the wire first (Transport.flush). */
  setBeforeRun(fn: () => void): void {
    this.beforeRun = fn;
  }

  /** Passes run so far (tests). */
  get runs(): number {
    return this.passes;
  }

  /** Sessions with text still queued. */
  get pending(): number {
    return this.due.size;
  }

  schedule(queue: Queue): void {
    this.due.add(queue);
    this.arm();
  }

  cancel(queue: Queue): void {
    this.due.delete(queue);
  }

  private arm(): void {
    if (this.armed || this.due.size === 0) return;
    this.armed = true;
    this.defer(this.run);
  }

  private readonly run = (): void => {
    this.armed = false;
    this.passes++;
    this.beforeRun?.();
    const deadline = this.now() + this.budgetMs;
    try {
      // The sessions due when the pass began; one queued meanwhile waits for the next pass.
      for (const queue of [...this.due]) {
        if (!this.due.has(queue)) continue; // drained by a reader in between
        let more = true;
        try {
          more = queue.step();
          while (more && this.now() < deadline) more = queue.step();
        } finally {
          this.due.delete(queue);
          if (more) this.due.add(queue); // to the back: the next pass starts with the others
        }
        if (this.now() >= deadline) break;
      }
    } finally {
      this.arm(); // what is left, on a later turn (also after a batch that threw)
    }
  };
}

export const deferredTextStage = new DeferredTextStage();

/** One session's batches not yet through the text stage, in order. */
export class PendingText implements Queue {
  private readonly batches: Uint8Array[] = [];
  /** The next batch to process: batches before it are done. */
  private head = 0;
  private queuedBytes = 0;

  constructor(
    private readonly process: (bytes: Uint8Array) => void,
    private readonly stage: DeferredTextStage = deferredTextStage,
    private readonly maxQueuedBytes: number = DeferredTextConstants.MAX_QUEUED_BYTES,
  ) {}

  get empty(): boolean {
    return this.head === this.batches.length;
  }

  /** Bytes queued and not yet processed. */
  get bytes(): number {
    return this.queuedBytes;
  }

  push(bytes: Uint8Array): void {
    this.batches.push(bytes);
    this.queuedBytes += bytes.length;
    if (this.queuedBytes > this.maxQueuedBytes) {
      this.drain(); // the stage is behind the output: it runs in front of the next batch, as it used to
      return;
    }
    if (this.batches.length - this.head === 1) this.stage.schedule(this);
  }

  /** Processes the oldest batch; false when nothing is left. */
  step(): boolean {
    if (this.empty) return false;
    const bytes = this.batches[this.head]!;
    // Taken first: a batch that throws must not be run again by the next step.
    this.batches[this.head++] = EMPTY;
    this.queuedBytes -= bytes.length;
    if (this.empty) this.reset();
    this.process(bytes);
    return !this.empty;
  }

  /** Runs the text stage over everything queued, now. */
  drain(): void {
    if (this.empty) return;
    this.stage.cancel(this);
    // Taken whole first: a batch that throws must not be run again by the next drain.
    const batches = this.batches.slice(this.head);
    this.reset();
    for (const bytes of batches) this.process(bytes);
  }

  /** Forgets what is queued (the session was retired: nobody will read its text). */
  clear(): void {
    this.reset();
    this.stage.cancel(this);
  }

  private reset(): void {
    this.batches.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
  }
}

const EMPTY = new Uint8Array(0);
