/**
 * EngineResponse over a Node ServerResponse, with uWS's contract: status and headers are collected
 * and go out with the first body byte; end(body) writes Content-Length; write() streams chunked and
 * reports backpressure; onAborted fires only for a client that left before the answer ended.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { LINGER_IDLE_MS, LINGER_MAX_BYTES, LINGER_MAX_MS } from './bounds.js';
import type { Chunk, EngineResponse } from './types.js';
import { codeOfStatus } from '../errorReply.js';

const EMPTY = new ArrayBuffer(0);

/** Accepts a WebSocket upgrade on the request's socket; set only on a WebSocket route's request. */
export type Upgrader = (userData: unknown) => void;

/** A body being read must bring `minBytes` in each window of `windowMs`, else 408 and close (uWS's rule). */
export interface BodyRate {
  windowMs: number;
  minBytes: number;
}

export class NodeResponse implements EngineResponse {
  private statusCode = 200;
  private statusMessage: string | undefined;
  /** Headers as written, name and value in turn (repeats kept, e.g. Set-Cookie): writeHead's flat form. */
  private readonly headers: string[] = [];
  private hasContentLength = false;
  private headSent = false;
  /** end/tryEnd finished the answer, or close() dropped it. */
  private ended = false;
  private aborted = false;
  private offset = 0;
  private abortHandler: (() => void) | undefined;
  private writableHandler: ((offset: number) => boolean) | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly upgrader?: Upgrader,
    private readonly bodyRate?: BodyRate,
  ) {}

  writeStatus(status: string): this {
    const space = status.indexOf(' ');
    this.statusCode = Number(space < 0 ? status : status.slice(0, space));
    this.statusMessage = space < 0 ? undefined : status.slice(space + 1);
    return this;
  }

  writeHeader(name: string, value: string): this {
    if (name.length === 14 && name.toLowerCase() === 'content-length') this.hasContentLength = true;
    this.headers.push(name, value);
    return this;
  }

  /**
   * Writes status and headers in one writeHead (no per-header setHeader bookkeeping); Node sends
   * them with the first body bytes. `bodyLength`: the whole body is known, so it is Content-Length.
   */
  private applyHead(bodyLength?: number): void {
    if (this.headSent) return;
    this.headSent = true;
    if (bodyLength !== undefined && !this.hasContentLength) this.headers.push('Content-Length', String(bodyLength));
    this.res.writeHead(this.statusCode, this.statusMessage, this.headers);
  }

  write(chunk: Chunk): boolean {
    if (this.ended || this.aborted) return true;
    this.applyHead();
    this.offset += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    return this.res.write(chunk);
  }

  end(body?: Chunk, closeConnection = false): this {
    if (this.ended || this.aborted) return this;
    this.ended = true;
    if (closeConnection && !this.headSent) this.writeHeader('Connection', 'close');
    const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    this.applyHead(this.headSent ? undefined : length);
    this.offset += length;
    this.res.end(body);
    return this;
  }

  endWithoutBody(): this {
    if (this.ended || this.aborted) return this;
    this.ended = true;
    // The caller wrote Content-Length (HEAD); without one, an empty body says 0.
    this.applyHead(0);
    this.res.end();
    return this;
  }

  tryEnd(chunk: Uint8Array, totalSize: number): [boolean, boolean] {
    if (this.ended || this.aborted) return [true, true];
    this.applyHead(totalSize);
    // Node queues what the socket does not take: the chunk is always accepted whole.
    this.offset += chunk.byteLength;
    const ok = this.res.write(chunk);
    if (this.offset >= totalSize) {
      this.ended = true;
      this.res.end();
      return [true, true];
    }
    return [ok, false];
  }

  getWriteOffset(): number {
    return this.offset;
  }

  onWritable(handler: (offset: number) => boolean): this {
    if (this.writableHandler === undefined) this.res.on('drain', () => this.writableHandler?.(this.offset));
    this.writableHandler = handler;
    return this;
  }

  onAborted(handler: () => void): this {
    if (this.abortHandler === undefined) {
      // 'close' also follows a finished answer: only a close before the end is an abort.
      this.res.once('close', () => {
        if (!this.ended) this.abort();
      });
    }
    this.abortHandler = handler;
    return this;
  }

  private abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const handler = this.abortHandler;
    this.abortHandler = undefined;
    handler?.();
  }

  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    const rate = this.bodyRate;
    let windowBytes = 0;
    const timer = rate === undefined ? undefined : setTimeout(() => this.bodyTooSlow(rate), rate.windowMs);
    this.req.on('data', (chunk: Buffer) => {
      if (timer !== undefined && (windowBytes += chunk.byteLength) >= rate!.minBytes) {
        windowBytes = 0;
        timer.refresh();
      }
      handler(chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength) as ArrayBuffer, false);
    });
    this.req.once('end', () => {
      clearTimeout(timer);
      handler(EMPTY, true);
    });
    if (timer !== undefined) this.res.once('close', () => clearTimeout(timer));
    return this;
  }

  /** A window passed without the body's minimum: 408 if nothing was answered yet, and the connection closes. */
  private bodyTooSlow(rate: BodyRate): void {
    if (this.aborted) return;
    if (this.ended || this.headSent) return void this.res.destroy();
    this.ended = true;
    const body = JSON.stringify({
      error: `request body arrived too slowly (under ${rate.minBytes} bytes in ${rate.windowMs / 1000} s)`,
      code: codeOfStatus(408),
    });
    this.res.writeHead(408, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' });
    this.res.end(body);
    this.aborted = true;
    const handler = this.abortHandler;
    this.abortHandler = undefined;
    handler?.();
  }

  endLingering(status: string, headers: ReadonlyArray<readonly [string, string]>, body: string, onClosed: () => void): void {
    if (this.ended || this.aborted) return;
    this.ended = true;
    const socket = this.req.socket;
    // Straight to the socket: a ServerResponse that says `Connection: close` makes Node destroy the
    // socket as soon as the answer is flushed, the very reset this avoids.
    let head = `HTTP/1.1 ${status}\r\n`;
    for (const [name, value] of headers) head += `${name}: ${value}\r\n`;
    // No body (a 204 preflight): no length.
    if (body !== '') head += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    socket.write(`${head}Connection: close\r\n\r\n${body}`);
    let drained = 0;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(cap);
      socket.setTimeout(0);
      // Once the body has ended nothing is unread and the close is a clean FIN.
      socket.destroySoon();
    };
    const cap = setTimeout(finish, LINGER_MAX_MS);
    socket.setTimeout(LINGER_IDLE_MS, finish);
    this.req.on('data', (chunk: Buffer) => {
      if ((drained += chunk.byteLength) > LINGER_MAX_BYTES) finish();
    });
    this.req.once('end', finish);
    socket.once('close', () => {
      clearTimeout(cap);
      onClosed();
    });
  }

  /**
   * No socket cork: Node already sends the head with the first body chunk, and on Node 24 a
   * chunked write made while the socket is corked can return false with no 'drain' ever following
   * (the response counts its own buffer, the socket never filled), which would stall SSE for good.
   */
  cork(cb: () => void): this {
    cb();
    return this;
  }

  close(): this {
    if (this.aborted) return this;
    const wasEnded = this.ended;
    this.ended = true;
    this.res.destroy();
    if (!wasEnded) {
      this.aborted = true;
      const handler = this.abortHandler;
      this.abortHandler = undefined;
      handler?.();
    }
    return this;
  }

  getRemoteAddressAsText(): Uint8Array {
    return Buffer.from(this.req.socket.remoteAddress ?? '');
  }

  upgrade<U>(userData: U): void {
    if (!this.upgrader) throw new Error('upgrade() outside a WebSocket route');
    this.ended = true;
    this.upgrader(userData);
  }
}
