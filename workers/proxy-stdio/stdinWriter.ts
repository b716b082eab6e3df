/**
 * The child's stdin, written so the caller can never be wedged by it.
 * Node never blocks on a pipe write: what the pipe does not take waits in the stream. So the
 * dangers are different from a blocking write but just as real: a child that stopped reading
 * would let that backlog grow without bound, and a request would wait forever for bytes that
 * never leave. Hence: every write reports when it is flushed into the pipe, the exchange that made
 * it holds ONE deadline covering that flush (a write still unflushed at the deadline tears the
 * child down: half a JSON-RPC frame may sit in the pipe, and that child can never be spoken to
 * again), and the backlog is bounded: a write that would push it over the bound fails at once.
 */

import type { Writable } from 'node:stream';

/** Most bytes waiting in front of the pipe; one request is always accepted when nothing waits. */
export const STDIN_MAX_BACKLOG_BYTES = 32 * 1024 * 1024;

/** One line handed to the writer; `flushed` turns true once the pipe has taken all of it. */
export interface StdinWrite {
  readonly bytes: number;
  flushed: boolean;
}

export class StdinBacklogFullError extends Error {}

export class StdinWriter {
  private failure: Error | undefined;
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.stream.uncork();
  };

  constructor(
    private readonly stream: Writable,
    private readonly maxBacklogBytes: number = STDIN_MAX_BACKLOG_BYTES,
  ) {
    // EPIPE when the child exits mid-write: each write's callback hears about it, and the exit
    // handler fails the calls; without a listener the error would kill the hosting (hub) thread.
    stream.on('error', (err) => {
      this.failure ??= err;
    });
  }

  /** Bytes written but not yet taken by the pipe. */
  get backlogBytes(): number {
    return this.stream.writableLength;
  }

  /**
   * Hands `line` to the pipe. Throws (nothing written) when stdin is closed or broken, or when the
   * backlog would go over its bound. `onFlushed` runs once the pipe took it, or with the error.
   */
  write(line: Buffer, onFlushed?: (err: Error | null | undefined) => void): StdinWrite {
    if (this.failure !== undefined) throw new Error(`stdin is broken: ${this.failure.message}`);
    if (this.stream.writableEnded || this.stream.destroyed) throw new Error('stdin is closed');
    const backlog = this.stream.writableLength;
    if (backlog > 0 && backlog + line.length > this.maxBacklogBytes) {
      throw new StdinBacklogFullError(`stdin backlog full (${backlog} bytes not taken by the child, max ${this.maxBacklogBytes})`);
    }
    const write: StdinWrite = { bytes: line.length, flushed: false };
    // Requests arriving in one turn of the event loop leave in one writev, not one syscall each.
    if (!this.corked) {
      this.corked = true;
      this.stream.cork();
      setImmediate(this.uncork);
    }
    this.stream.write(line, (err) => {
      if (!err) write.flushed = true;
      onFlushed?.(err);
    });
    return write;
  }

  /** EOF for the child: the polite way to ask an MCP server to exit. */
  end(): void {
    if (!this.stream.writableEnded && !this.stream.destroyed) this.stream.end();
  }

  /** Drops whatever is still waiting (the child is being killed; nobody will read it). */
  destroy(): void {
    this.stream.destroy();
  }
}
