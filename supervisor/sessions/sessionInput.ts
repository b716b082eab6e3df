/**
 * The input side of one session, shared by every path that writes to its PTY (REST, MCP, viewers, mail):
 * one writer lock, the composer (InputLineBuffer), the turn epoch and the submit claim.
 */
import { InputLineBuffer } from './inputLineBuffer.js';

/** A FIFO async mutex: holders run one at a time in arrival order. */
export class WriterLock {
  private tail: Promise<void> = Promise.resolve();
  private held = 0;

  /** True while someone holds the lock or waits for it. */
  get busy(): boolean {
    return this.held > 0;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    this.held++;
    const result = this.tail.then(fn);
    // The next holder starts once this one settles, whatever its outcome.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result.finally(() => {
      this.held--;
    });
  }
}

const ENTER = Uint8Array.of(0x0d);

export class SessionInput {
  readonly lock = new WriterLock();
  readonly composer = new InputLineBuffer();
  /** Advances once per submitted line: each Enter a raw write carries, and once per complete submit. */
  turnEpoch = 0;
  /** When a write last reached the PTY (ms since epoch); null before the first. */
  lastInputMs: number | null = null;
  /**
   * Set by a submit that passed its checks: the session counts as busy from the claim until the
   * shell reports idle after the submit's output was seen (or the submit ended unacknowledged),
   * so a second submit can never slip in between the first one's Enter and its echo.
   */
  private claim: { acknowledged: boolean } | null = null;

  /**
   * `onInput` sees every write's bytes after the bookkeeping (the turn epoch already advanced), with
   * the line an Enter in them submitted, when the composer knows it.
   */
  constructor(private readonly onInput?: (bytes: Uint8Array, submitted: string | null) => void) {}

  get claimed(): boolean {
    return this.claim !== null;
  }

  /** Bookkeeping for bytes a raw path wrote (not a framed submit). */
  noteRawWrite(bytes: Uint8Array): void {
    this.lastInputMs = Date.now();
    const enters = this.composer.feed(bytes);
    this.turnEpoch += enters;
    this.onInput?.(bytes, enters > 0 ? this.composer.takeSubmitted() : null);
  }

  /** A framed submit wrote its Enter (of `line`): the composer is clear and the turn advanced exactly once. */
  noteSubmitted(line: string | null = null): void {
    this.lastInputMs = Date.now();
    this.composer.clear();
    this.turnEpoch++;
    this.onInput?.(ENTER, line);
  }

  takeClaim(): void {
    this.claim = { acknowledged: false };
  }

  /** The submit saw output after its Enter: the next idle report ends the claim. */
  acknowledgeClaim(): void {
    if (this.claim) this.claim.acknowledged = true;
  }

  releaseClaim(): void {
    this.claim = null;
  }

  /** Called on every shell-state change, before anyone waiting on the session re-checks it. */
  onShellState(state: 'busy' | 'idle'): void {
    if (state === 'idle' && this.claim?.acknowledged) this.claim = null;
  }
}
