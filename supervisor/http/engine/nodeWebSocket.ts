/**
 * EngineSocket over a `ws` WebSocket, with uWS's contract: send() drops (2) rather than queueing
 * past maxBackpressure and says when it buffered (0); drain is reported as the buffer empties.
 */
import type { WebSocket } from 'ws';

import { type Chunk, type EngineSocket, type EngineWsBehavior, SendStatus } from './types.js';

export class NodeWebSocket<U> implements EngineSocket<U> {
  /** A send was buffered or dropped: the route wants a drain callback when bytes leave. */
  private wantsDrain = false;
  /** Answered a ping or sent something since the last idle check. */
  alive = true;
  private closed = false;
  /** One callback for every send (no closure per frame): bytes reached the kernel. */
  private readonly onFlushed = (): void => {
    if (!this.wantsDrain || this.closed) return;
    this.wantsDrain = false;
    this.behavior.drain?.(this);
  };

  constructor(
    private readonly ws: WebSocket,
    private readonly userData: U,
    private readonly behavior: EngineWsBehavior<U>,
  ) {}

  send(message: Chunk, isBinary: boolean): number {
    if (this.closed) return SendStatus.DROPPED;
    if (this.ws.bufferedAmount > this.behavior.maxBackpressure) {
      this.wantsDrain = true;
      return SendStatus.DROPPED;
    }
    this.ws.send(message, { binary: isBinary }, this.onFlushed);
    if (this.ws.bufferedAmount === 0) return SendStatus.SUCCESS;
    this.wantsDrain = true;
    return SendStatus.BACKPRESSURE;
  }

  cork(cb: () => void): this {
    cb();
    return this;
  }

  getBufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  getUserData(): U {
    return this.userData;
  }

  end(code?: number, reason?: string): void {
    if (this.closed) return;
    this.ws.close(code, reason);
  }

  /** The socket closed: nothing more is sent or reported. */
  markClosed(): void {
    this.closed = true;
  }

  ping(): void {
    if (!this.closed) this.ws.ping();
  }

  terminate(): void {
    this.ws.terminate();
  }
}
