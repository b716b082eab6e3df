/**
 * Input to a PTY master, written without ever blocking the pty host's loop.
 *
 * libuv cannot reopen a pty master the way it reopens other ttys, so it writes to one in "blocking"
 * mode: on EAGAIN it tries again at once until the program reads. @lydell/node-pty writes through
 * such a handle, and a paste larger than the PTY's input buffer (about 15 KiB here) into a program
 * that was not reading stopped the whole host: every session's output, and the heartbeat, until the
 * supervisor killed it. Here the bytes go to the master fd (non-blocking: node-pty opens it so) with
 * writeSync; what the kernel does not take waits in this queue, in order, retried on a timer.
 */
import { writeSync } from 'node:fs';

/**
 * There is no writability event to wait for (libuv offers none without its tty handle), so the
 * queue polls. While the program took input within the last SPIN_MS, the rest follows on the next
 * turn of the loop (setImmediate), so a paste goes about as fast as the program reads; past that,
 * retries back off on a timer from RETRY_MIN_MS to RETRY_MAX_MS, costing next to nothing while it
 * does not read at all.
 */
const SPIN_MS = 50;
const RETRY_MIN_MS = 1;
const RETRY_MAX_MS = 20;

export class InputQueue {
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  /** 0 while the program takes input (retry on the next turn), else the next timer delay. */
  private retryMs = 0;
  private lastProgressMs = 0;
  private closed = false;

  constructor(private readonly fd: number) {}

  /** Bytes accepted but not yet taken by the kernel: the program has not read that much. */
  get backlogBytes(): number {
    return this.pendingBytes;
  }

  write(bytes: Buffer): void {
    if (this.closed || bytes.length === 0) return;
    if (this.pending.length === 0) {
      const rest = this.writeNow(bytes);
      if (rest === undefined) return;
      bytes = rest;
    }
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.lastProgressMs = performance.now();
    this.schedule();
  }

  /** The master is closing: what is queued is dropped, like typing into a closed terminal, and the fd is never used again. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.pending.length = 0;
    this.pendingBytes = 0;
  }

  private flush = (): void => {
    this.timer = undefined;
    this.immediate = undefined;
    let progressed = false;
    while (!this.closed && this.pending.length > 0) {
      const head = this.pending[0]!;
      const rest = this.writeNow(head);
      if (this.closed) return;
      if (rest === undefined) {
        this.pending.shift();
        this.pendingBytes -= head.length;
        progressed = true;
        continue;
      }
      if (rest.length < head.length) {
        this.pending[0] = rest;
        this.pendingBytes -= head.length - rest.length;
        progressed = true;
      }
      const now = performance.now();
      if (progressed) this.lastProgressMs = now;
      this.retryMs = now - this.lastProgressMs < SPIN_MS ? 0 : Math.min(Math.max(this.retryMs * 2, RETRY_MIN_MS), RETRY_MAX_MS);
      this.schedule();
      return;
    }
    this.retryMs = 0;
  };

  private schedule(): void {
    if (this.timer !== undefined || this.immediate !== undefined) return;
    if (this.retryMs === 0) this.immediate = setImmediate(this.flush);
    else this.timer = setTimeout(this.flush, this.retryMs);
  }

  /** What the kernel did not take (EAGAIN or a partial write), or undefined when all went (or the PTY is gone). */
  private writeNow(bytes: Buffer): Buffer | undefined {
    let written: number;
    try {
      written = writeSync(this.fd, bytes);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return bytes;
      // EIO and the like: the slave side is gone. The exit follows; the input has nowhere to go.
      this.close();
      return undefined;
    }
    return written === bytes.length ? undefined : bytes.subarray(written);
  }
}
