/**
 * EngineResponse over a Node ServerResponse, with uWS's contract: status and headers are collected
 * and go out with the first body byte; end(body) writes Content-Length; write() streams chunked and
 * reports backpressure; onAborted fires only for a client that left before the answer ended.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Chunk, EngineResponse } from './types.js';

const EMPTY = new ArrayBuffer(0);

/** Accepts a WebSocket upgrade on the request's socket; set only on a WebSocket route's request. */
export type Upgrader = (userData: unknown) => void;

export class NodeResponse implements EngineResponse {
  private statusCode = 200;
  private statusMessage: string | undefined;
  /** Header values by name as written (repeats kept, e.g. Set-Cookie). */
  private headers: Map<string, string[]> | undefined;
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
  ) {}

  writeStatus(status: string): this {
    const space = status.indexOf(' ');
    this.statusCode = Number(space < 0 ? status : status.slice(0, space));
    this.statusMessage = space < 0 ? undefined : status.slice(space + 1);
    return this;
  }

  writeHeader(name: string, value: string): this {
    this.headers ??= new Map();
    const key = name.toLowerCase();
    const values = this.headers.get(key);
    if (values) values.push(value);
    else this.headers.set(key, [value]);
    return this;
  }

  /** Moves status and headers onto the Node response; Node writes them with the first body bytes. */
  private applyHead(): void {
    if (this.headSent) return;
    this.headSent = true;
    const res = this.res;
    res.statusCode = this.statusCode;
    if (this.statusMessage) res.statusMessage = this.statusMessage;
    if (this.headers) for (const [name, values] of this.headers) res.setHeader(name, values.length === 1 ? values[0]! : values);
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
    this.applyHead();
    if (body !== undefined) this.offset += typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    this.res.end(body);
    return this;
  }

  endWithoutBody(): this {
    if (this.ended || this.aborted) return this;
    this.ended = true;
    this.applyHead();
    this.res.end();
    return this;
  }

  tryEnd(chunk: Uint8Array, totalSize: number): [boolean, boolean] {
    if (this.ended || this.aborted) return [true, true];
    if (!this.headSent) this.writeHeader('Content-Length', String(totalSize));
    this.applyHead();
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
    this.req.on('data', (chunk: Buffer) => handler(chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength) as ArrayBuffer, false));
    this.req.once('end', () => handler(EMPTY, true));
    return this;
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
