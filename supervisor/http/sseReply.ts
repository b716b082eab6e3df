/**
 * A reply body that is an SSE stream: a handler returns it when its answer becomes a stream
 * (MCP's Streamable HTTP transport answers a POST with `text/event-stream` when messages must
 * reach the client before the response: progress, or a server request the answer waits on). The
 * handler may push frames before the server has taken the response over; they are queued and
 * written once it has. The stream ends when the handler calls end(), or when the client goes away.
 */
import type { EngineResponse } from './engine/types.js';
import { DRAIN_NUDGE_BYTES, PING_BYTES, SSE_KEEP_ALIVE_MS } from './sse.js';
import type { LiveStream } from './types.js';

/** A client that stops reading is dropped once this much is queued behind the engine's own buffer. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

/** The head a streamed POST answer carries besides the handler's own headers. */
export const SSE_REPLY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  // Stops nginx-style proxies from buffering the stream.
  'X-Accel-Buffering': 'no',
};

export class SseReply implements LiveStream {
  private res: EngineResponse | null = null;
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private blocked = false;
  private ending = false;
  private closed = false;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly closeListeners = new Set<() => void>();

  constructor(private readonly keepAliveMs: number = SSE_KEEP_ALIVE_MS) {}

  /** False once the stream ended or its client went away: nothing pushed reaches anyone. */
  get open(): boolean {
    return !this.closed && !this.ending;
  }

  /** Queues or writes one frame; false when the stream is no longer open. */
  push(frame: Buffer): boolean {
    if (!this.open) return false;
    this.enqueue(frame);
    return true;
  }

  /** Writes `last` (if any) after everything pushed, then ends the response. */
  end(last?: Buffer): void {
    if (!this.open) return;
    if (last !== undefined) this.enqueue(last);
    this.ending = true;
    this.finishIfDrained();
  }

  /** Ends the stream now, whatever is still queued (its credential was revoked). */
  close(): void {
    if (this.closed) return;
    const res = this.res;
    this.teardown();
    res?.cork(() => res.end());
  }

  /** Runs when the stream is over, ended or abandoned by its client. */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.add(listener);
  }

  /**
   * The server hands the response over, status and headers written (inside a cork). `aborted`
   * is the server's own abort handling, chained so both learn when the client goes away.
   */
  attach(res: EngineResponse, aborted: () => void): void {
    this.res = res;
    res.onAborted(() => {
      aborted();
      this.teardown();
    });
    res.onWritable(() => {
      if (this.closed) return true;
      this.blocked = false;
      if (this.queue.length === 0) return res.write(DRAIN_NUDGE_BYTES);
      this.flush();
      return !this.blocked;
    });
    this.flush();
    if (!this.closed) {
      this.keepAlive = setInterval(() => this.push(PING_BYTES), this.keepAliveMs);
      this.keepAlive.unref();
    }
  }

  private enqueue(frame: Buffer): void {
    if (this.res === null || this.blocked || this.queue.length > 0) {
      this.queue.push(frame);
      this.queuedBytes += frame.length;
      if (this.queuedBytes > MAX_QUEUED_BYTES) this.drop();
      else if (this.res !== null && !this.blocked) this.flush();
      return;
    }
    const res = this.res;
    res.cork(() => {
      this.blocked = !res.write(frame);
    });
  }

  private flush(): void {
    const res = this.res;
    if (res === null || this.closed) return;
    res.cork(() => {
      while (this.queue.length > 0 && !this.blocked) {
        const frame = this.queue.shift()!;
        this.queuedBytes -= frame.length;
        this.blocked = !res.write(frame);
      }
    });
    this.finishIfDrained();
  }

  private finishIfDrained(): void {
    const res = this.res;
    if (!this.ending || this.closed || res === null || this.queue.length > 0) return;
    this.teardown();
    res.cork(() => res.end());
  }

  /** A client that stopped reading: the connection goes, so it sees the stream end rather than a silent hole. */
  private drop(): void {
    const res = this.res;
    this.teardown();
    res?.cork(() => res.close());
  }

  private teardown(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    this.queue.length = 0;
    this.queuedBytes = 0;
    for (const listener of [...this.closeListeners]) listener();
    this.closeListeners.clear();
  }
}
