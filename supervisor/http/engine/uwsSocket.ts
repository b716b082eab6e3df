/**
 * A uWS WebSocket as an EngineSocket. uWebSockets.js 20.30 writes a frame of 16 KiB or more straight
 * to the socket, and when that write leaves the frame's header short (the kernel buffer is full) it
 * queues the rest of the header but not the payload (uWebSockets PR #1662, fixed upstream later):
 * the reader then takes the next frame's bytes as this one's payload and the stream is corrupt.
 * Such a message goes here as fragments under that size, which take uWS's buffered path; a reader
 * sees the same message. One wrapper per socket, so every callback sees the same object.
 */
import { type Chunk, type EngineSocket, SendStatus } from './types.js';

/** Frames at or past this many bytes take uWS's direct write. */
const DIRECT_WRITE_BYTES = 16 * 1024;
/** The payload of one fragment of a longer message: under DIRECT_WRITE_BYTES. */
const FRAGMENT_BYTES = 15 * 1024;

/** The part of uWS's native WebSocket this wrapper calls. */
export interface NativeUwsSocket<U> {
  send(message: Chunk, isBinary: boolean, compress?: boolean): number;
  sendFirstFragment(message: Chunk, isBinary: boolean, compress?: boolean): number | boolean;
  sendFragment(message: Chunk, compress?: boolean): number | boolean;
  sendLastFragment(message: Chunk, compress?: boolean): number | boolean;
  cork(cb: () => void): unknown;
  getBufferedAmount(): number;
  getUserData(): U;
  end(code?: number, reason?: string): void;
}

export class UwsSocket<U> implements EngineSocket<U> {
  constructor(
    private readonly ws: NativeUwsSocket<U>,
    /**
     * The route's limit, applied here rather than by uWS (which is told none): uWS would drop a
     * fragment in the middle of a message, which would cut the stream.
     */
    private readonly maxBackpressure: number,
  ) {}

  send(message: Chunk, isBinary: boolean): number {
    if (this.ws.getBufferedAmount() > this.maxBackpressure) return SendStatus.DROPPED;
    // Three bytes of UTF-8 at most per UTF-16 unit: most text is known short without measuring.
    const short =
      typeof message === 'string'
        ? message.length * 3 < DIRECT_WRITE_BYTES || Buffer.byteLength(message) < DIRECT_WRITE_BYTES
        : message.byteLength < DIRECT_WRITE_BYTES;
    if (short) return this.ws.send(message, isBinary);
    return this.sendFragments(typeof message === 'string' ? Buffer.from(message, 'utf8') : message, isBinary);
  }

  /** Text cut inside a character is fine: a reader checks UTF-8 over the whole message. */
  private sendFragments(bytes: Uint8Array, isBinary: boolean): number {
    this.ws.sendFirstFragment(bytes.subarray(0, FRAGMENT_BYTES), isBinary);
    let at = FRAGMENT_BYTES;
    for (; bytes.byteLength - at > FRAGMENT_BYTES; at += FRAGMENT_BYTES) this.ws.sendFragment(bytes.subarray(at, at + FRAGMENT_BYTES));
    this.ws.sendLastFragment(bytes.subarray(at));
    return this.ws.getBufferedAmount() === 0 ? SendStatus.SUCCESS : SendStatus.BACKPRESSURE;
  }

  cork(cb: () => void): this {
    this.ws.cork(cb);
    return this;
  }

  getBufferedAmount(): number {
    return this.ws.getBufferedAmount();
  }

  getUserData(): U {
    return this.ws.getUserData();
  }

  end(code?: number, reason?: string): void {
    this.ws.end(code, reason);
  }
}
