/**
 * Batches PTY output before it crosses the channel: the number of messages, not their size, is
 * what costs. The first chunk after a quiet window leaves at once, so keystroke echo is not delayed
 * by the window. The window is a deadline, not a timer: a timer is armed only when a chunk arrives
 * inside it, so a lone echo costs no timer and no wake-up of the host at the window's end.
 */

import type { Disposable } from '../../shared/disposable.js';

export interface CoalescerOptions {
  /** How long chunks after the first are held to be sent together, in ms. */
  windowMs: number;
  /** A batch this big leaves at once, without waiting for the window to end. */
  maxBatchBytes: number;
  /**
   * Receives each batch and the absolute offset of its first byte. Batches are contiguous and in
   * order; the bytes are handed over (never reused by the coalescer). `first` marks the chunk that
   * ended a quiet window: an echo or a prompt someone may be waiting on.
   */
  onFlush: (bytes: Uint8Array, offset: number, first: boolean) => void;
}

export class Coalescer implements Disposable {
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  private start = 0;
  /** When the window opened by the last send ends (Date.now() ms): a chunk before then is batched. */
  private windowEndsAt = 0;
  /** Armed while chunks are held, for the end of their window. */
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(private readonly options: CoalescerOptions) {}

  /** Takes one chunk whose first byte is at absolute `offset` (contiguous with the previous chunk). */
  push(chunk: Uint8Array, offset: number): void {
    if (this.disposed || chunk.length === 0) return;
    if (this.timer === undefined) {
      const now = Date.now();
      const left = this.windowEndsAt - now;
      // More left than a whole window: the wall clock was set back; start afresh rather than wait for it.
      if (left <= 0 || left > this.options.windowMs) {
        // Idle: this is probably an echo or a prompt; send it now and open a window for what follows.
        this.windowEndsAt = now + this.options.windowMs;
        this.options.onFlush(chunk, offset, true);
        return;
      }
      this.timer = setTimeout(Coalescer.windowEnded, left, this);
    }
    if (this.parts.length === 0) this.start = offset;
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.size >= this.options.maxBatchBytes) this.flush();
  }

  /** Sends what is held now (before `exit`, or before a read that must see everything). */
  flush(): void {
    if (this.parts.length === 0) return;
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    const offset = this.start;
    this.parts.length = 0;
    this.size = 0;
    this.options.onFlush(bytes, offset, false);
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.parts.length = 0;
    this.size = 0;
  }

  /**
   * The timer's callback, with the coalescer as its argument: no closure kept per session. Still
   * streaming: the batch goes and a new window opens, whose timer the next chunk in it arms.
   */
  private static windowEnded(self: Coalescer): void {
    self.timer = undefined;
    if (self.parts.length === 0) return; // sent meanwhile (size bound, flush())
    self.windowEndsAt = Date.now() + self.options.windowMs;
    self.flush();
  }
}
