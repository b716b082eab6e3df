/**
 * One kept-alive HTTP/1.1 connection to tuicd's unix socket, with the framing the bridge needs and
 * nothing more (its only peer is tuicd's own HTTP server): a request written in one piece; an answer read through its header
 * section (at most 64 KiB) and exactly its Content-Length or chunked body, never until EOF; 1xx
 * interim answers skipped (at most 32); 101, 204 and 304 end at their headers. A body with neither
 * length nor chunking is an error, as in the reference bridge. Node's http client does the same
 * with about a fifth of the bridge's CPU per call; the bridge is launched once per agent and sits
 * on every tool call's path.
 */
import { connect, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';

const MAX_HEADER_BYTES = 64 * 1024;
const MAX_INTERIM_ANSWERS = 32;
const CRLF2 = Buffer.from('\r\n\r\n');

export interface RawAnswer {
  status: number;
  /** Lower-cased names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/** The connection broke or the answer was malformed; `answered` says whether any byte of an answer had arrived. */
export class ConnectionError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly answered: boolean,
  ) {
    super(message);
  }
}

interface Pending {
  resolve(answer: RawAnswer): void;
  reject(err: Error): void;
  /** Set for a request whose answer may be an event stream: each event's data as it arrives. */
  onEvent?: (data: string) => void;
}

/** A chunked `text/event-stream` answer being read: its events go out as they complete. */
interface StreamingAnswer {
  status: number;
  headers: Record<string, string>;
  close: boolean;
  text: StringDecoder;
  /** Text after the last complete line. */
  partial: string;
  /** `data:` lines of the event being read. */
  data: string[];
  /** The last chunk's data was taken; its closing CRLF has not arrived yet (uWS sends it with the next chunk). */
  crlfDue: boolean;
}

export class HttpConnection {
  private readonly socket: Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private pending: Pending | null = null;
  private interim = 0;
  private gotBytes = false;
  private streaming: StreamingAnswer | null = null;
  /** Set once the socket closed or failed: the pool drops it. */
  closed = false;
  /** Requests this connection carried; a failure on one after the first may be a stale reuse. */
  uses = 0;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(new ConnectionError(err.message, err.code, this.gotBytes)));
    socket.on('close', () => this.fail(new ConnectionError('tuicd closed the connection', 'ECONNRESET', this.gotBytes)));
  }

  /** Connects within `timeoutMs`, or rejects with the socket's error code (ENOENT, ECONNREFUSED…) or ETIMEDOUT. */
  static open(socketPath: string, timeoutMs: number): Promise<HttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ path: socketPath });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new ConnectionError(`no tuicd accepted on ${socketPath} within ${timeoutMs / 1000} s`, 'ETIMEDOUT', false));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new HttpConnection(socket));
      });
      socket.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new ConnectionError(err.message, err.code, false));
      });
    });
  }

  /**
   * One request; the connection carries one at a time. With `onEvent`, a chunked
   * `text/event-stream` answer is read as it comes: each event's data (its `data:` lines joined by
   * newlines) goes to `onEvent` at once, and the answer resolves with an empty body when the stream ends.
   */
  request(head: string, body: string | undefined, onEvent?: (data: string) => void): Promise<RawAnswer> {
    if (this.pending !== null) return Promise.reject(new Error('HttpConnection carries one request at a time'));
    if (this.closed) return Promise.reject(new ConnectionError('the connection is closed', 'ECONNRESET', false));
    this.uses++;
    this.interim = 0;
    this.gotBytes = false;
    this.streaming = null;
    return new Promise((resolve, reject) => {
      this.pending = onEvent === undefined ? { resolve, reject } : { resolve, reject, onEvent };
      this.socket.write(body === undefined ? head : head + body);
    });
  }

  /** An idle pooled connection must not keep the process alive; one in use must. */
  setIdle(idle: boolean): void {
    if (idle) this.socket.unref();
    else this.socket.ref();
  }

  /** Abandons the connection (a deadline passed): it is never reused. */
  destroy(err: Error): void {
    this.fail(err);
    this.socket.destroy();
  }

  private fail(err: Error): void {
    this.closed = true;
    const p = this.pending;
    this.pending = null;
    p?.reject(err);
  }

  private onData(chunk: Buffer): void {
    this.gotBytes = true;
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    if (this.pending === null) {
      // Bytes nobody asked for: the framing is lost, so the connection is.
      this.destroy(new ConnectionError('tuicd sent bytes outside an answer', undefined, true));
      return;
    }
    for (;;) {
      const outcome = this.parse();
      if (outcome === 'more') return;
      if (outcome instanceof Error) return this.destroy(outcome);
      if (outcome === 'interim') continue;
      const p = this.pending;
      this.pending = null;
      p.resolve(outcome.answer);
      if (outcome.close) {
        this.closed = true;
        this.socket.end();
      }
      return;
    }
  }

  /** One answer off the front of the buffer, 'interim' for a skipped 1xx, 'more' when incomplete. */
  private parse(): { answer: RawAnswer; close: boolean } | 'interim' | 'more' | ConnectionError {
    if (this.streaming !== null) return this.streamEvents();
    const end = this.buffered.indexOf(CRLF2);
    if (end < 0) return this.buffered.length > MAX_HEADER_BYTES ? new ConnectionError('answer headers over 64 KiB', undefined, true) : 'more';
    if (end > MAX_HEADER_BYTES) return new ConnectionError('answer headers over 64 KiB', undefined, true);
    const lines = this.buffered.toString('latin1', 0, end).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!m) return new ConnectionError(`not an HTTP answer: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`, undefined, true);
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200 && status !== 101) {
      if (++this.interim > MAX_INTERIM_ANSWERS) return new ConnectionError(`over ${MAX_INTERIM_ANSWERS} interim answers`, undefined, true);
      this.buffered = this.buffered.subarray(bodyStart);
      return 'interim';
    }
    const close = (headers['connection'] ?? '').toLowerCase() === 'close';
    if (status === 101 || status === 204 || status === 304) {
      this.buffered = this.buffered.subarray(bodyStart);
      return { answer: { status, headers, body: '' }, close };
    }
    const chunkedBody = (headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked');
    if (chunkedBody && this.pending?.onEvent !== undefined && (headers['content-type'] ?? '').startsWith('text/event-stream')) {
      this.buffered = this.buffered.subarray(bodyStart);
      this.streaming = { status, headers, close, text: new StringDecoder('utf8'), partial: '', data: [], crlfDue: false };
      return this.streamEvents();
    }
    if (chunkedBody) return this.chunked(status, headers, bodyStart, close);
    const length = headers['content-length'];
    if (length === undefined || !/^\d+$/.test(length)) return new ConnectionError(`answer ${status} without a Content-Length`, undefined, true);
    const n = Number(length);
    if (this.buffered.length < bodyStart + n) return 'more';
    const body = this.buffered.toString('utf8', bodyStart, bodyStart + n);
    this.buffered = this.buffered.subarray(bodyStart + n);
    return { answer: { status, headers, body }, close };
  }

  /** Takes every whole chunk of an event stream off the buffer, sending each complete event on. */
  private streamEvents(): { answer: RawAnswer; close: boolean } | 'more' | ConnectionError {
    const stream = this.streaming!;
    for (;;) {
      if (stream.crlfDue) {
        if (this.buffered.length < 2) return 'more';
        if (this.buffered[0] !== 0x0d || this.buffered[1] !== 0x0a) return new ConnectionError('malformed chunk end', undefined, true);
        this.buffered = this.buffered.subarray(2);
        stream.crlfDue = false;
      }
      const lineEnd = this.buffered.indexOf('\r\n');
      if (lineEnd < 0) return 'more';
      const size = parseInt(this.buffered.toString('latin1', 0, lineEnd).split(';')[0]!.trim(), 16);
      if (!Number.isInteger(size) || size < 0) return new ConnectionError('malformed chunk size', undefined, true);
      if (size === 0) {
        const noTrailers = this.buffered.length >= lineEnd + 4 && this.buffered.toString('latin1', lineEnd, lineEnd + 4) === '\r\n\r\n';
        const trailersEnd = this.buffered.indexOf(CRLF2, lineEnd);
        const finish = noTrailers ? lineEnd + 4 : trailersEnd >= 0 ? trailersEnd + 4 : -1;
        if (finish < 0) return 'more';
        this.buffered = this.buffered.subarray(finish);
        this.streaming = null;
        this.feedEvents(stream, `${stream.text.end()}\n\n`);
        return { answer: { status: stream.status, headers: stream.headers, body: '' }, close: stream.close };
      }
      // A chunk's data is handed on as soon as it is all here: its CRLF may come much later.
      const dataStart = lineEnd + 2;
      if (this.buffered.length < dataStart + size) return 'more';
      this.feedEvents(stream, stream.text.write(this.buffered.subarray(dataStart, dataStart + size)));
      this.buffered = this.buffered.subarray(dataStart + size);
      stream.crlfDue = true;
    }
  }

  private feedEvents(stream: StreamingAnswer, text: string): void {
    const onEvent = this.pending?.onEvent;
    let rest = stream.partial + text;
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
      const line = rest.slice(0, nl).replace(/\r$/, '');
      rest = rest.slice(nl + 1);
      if (line === '') {
        if (stream.data.length > 0) onEvent?.(stream.data.join('\n'));
        stream.data = [];
      } else if (line.startsWith('data:')) stream.data.push(line.slice(line[5] === ' ' ? 6 : 5));
    }
    stream.partial = rest;
  }

  private chunked(
    status: number,
    headers: Record<string, string>,
    bodyStart: number,
    close: boolean,
  ): { answer: RawAnswer; close: boolean } | 'more' | ConnectionError {
    const parts: Buffer[] = [];
    let at = bodyStart;
    for (;;) {
      const lineEnd = this.buffered.indexOf('\r\n', at);
      if (lineEnd < 0) return 'more';
      const size = parseInt(this.buffered.toString('latin1', at, lineEnd).split(';')[0]!.trim(), 16);
      if (!Number.isInteger(size) || size < 0) return new ConnectionError('malformed chunk size', undefined, true);
      if (size === 0) {
        // The last chunk, then optional trailers, then an empty line.
        const trailersEnd = this.buffered.indexOf(CRLF2, lineEnd);
        const noTrailers = this.buffered.length >= lineEnd + 4 && this.buffered.toString('latin1', lineEnd, lineEnd + 4) === '\r\n\r\n';
        const finish = noTrailers ? lineEnd + 4 : trailersEnd >= 0 ? trailersEnd + 4 : -1;
        if (finish < 0) return 'more';
        const body = Buffer.concat(parts).toString('utf8');
        this.buffered = this.buffered.subarray(finish);
        return { answer: { status, headers, body }, close };
      }
      const dataStart = lineEnd + 2;
      if (this.buffered.length < dataStart + size + 2) return 'more';
      parts.push(this.buffered.subarray(dataStart, dataStart + size));
      at = dataStart + size + 2;
    }
  }
}
