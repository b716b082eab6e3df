/**
 * Batches PTY output before it crosses the channel: the number of messages, not their size, is
 * what costs. The first chunk after a quiet window leaves at once, so keystroke echo is not delayed
 * by the window.
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
  /** Set while a window is open: chunks arriving now are batched. Unset means idle. */
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(private readonly options: CoalescerOptions) {}

  /** Takes one chunk whose first byte is at absolute `offset` (contiguous with the previous chunk). */
  push(chunk: Uint8Array, offset: number): void {
    if (this.disposed || chunk.length === 0) return;
    if (this.timer === undefined) {
      // Idle: this is probably an echo or a prompt; send it now and open a window for what follows.
      this.timer = setTimeout(Coalescer.windowEnded, this.options.windowMs, this);
      this.options.onFlush(chunk, offset, true);
      return;
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

  /** The timer's callback, with the coalescer as its argument: no closure kept per session. */
  private static windowEnded(self: Coalescer): void {
    if (self.parts.length === 0) {
      self.timer = undefined; // A whole window without output: the next chunk goes at once.
      return;
    }
    // Still streaming: send the batch and keep batching.
    self.timer = setTimeout(Coalescer.windowEnded, self.options.windowMs, self);
    self.flush();
  }
}
