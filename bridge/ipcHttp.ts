/**
 * HTTP/1.1 to tuicd over its unix socket, as the bridge needs it: a whole JSON answer with a
 * deadline (on kept-alive connections framed by httpConnection.ts), or a long-lived SSE stream
 * (Node's http client: one per bridge, opened rarely).
 *
 * Requests reuse kept-alive connections (the reference bridge opened one per request): a connect
 * and accept per call cost the bridge about half its throughput. A connection tuicd closed (a
 * restart, its idle timeout) leaves the pool with its close; a request that meets one just as it
 * closes, before any byte of an answer, is sent again once on a fresh connection.
 */
import { request } from 'node:http';

import { ConnectionError, HttpConnection } from './httpConnection.js';

/** A socket that does not accept within this long is treated as no tuicd there. */
export const CONNECT_TIMEOUT_MS = 3_000;
/** Idle connections kept per socket; more in flight at once are closed when they finish. */
const MAX_IDLE_CONNECTIONS = 16;

export interface IpcAnswer {
  status: number;
  /** Lower-cased names. */
  headers: Readonly<Record<string, string | undefined>>;
  body: string;
}

/**
 * Why a request got no answer: `unreachable` (nothing accepts on the socket), `timeout` (no whole
 * answer in time), `failed` (the connection broke mid-answer, or the answer was malformed).
 */
export class IpcError extends Error {
  constructor(
    readonly kind: 'unreachable' | 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

export interface IpcRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** An answer that is an event stream is read as it comes: each event's data here (the answer's body is then empty). */
  onEvent?: (data: string) => void;
}

const UNREACHABLE_CODES = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'EACCES', 'ETIMEDOUT']);

function describe(err: unknown, socketPath: string): IpcError {
  if (err instanceof IpcError) return err;
  const e = err as { code?: string; message?: string };
  if (e.code !== undefined && UNREACHABLE_CODES.has(e.code)) return new IpcError('unreachable', `no tuicd at ${socketPath} (${e.code})`);
  return new IpcError('failed', e.message ?? String(err));
}

const idle = new Map<string, HttpConnection[]>();

function takeIdle(socketPath: string): HttpConnection | undefined {
  const list = idle.get(socketPath);
  while (list && list.length > 0) {
    const conn = list.pop()!;
    if (!conn.closed) return conn;
  }
  return undefined;
}

function giveBack(socketPath: string, conn: HttpConnection): void {
  let list = idle.get(socketPath);
  if (!list) idle.set(socketPath, (list = []));
  if (list.length >= MAX_IDLE_CONNECTIONS) return conn.destroy(new Error('pool full'));
  conn.setIdle(true);
  list.push(conn);
}

function headOf(req: IpcRequest): string {
  let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: localhost\r\n`;
  for (const [name, value] of Object.entries(req.headers)) {
    // A value from the environment ($TUIC_SESSION) must not be able to add header lines.
    if (/[\r\n]/.test(value)) continue;
    head += `${name}: ${value}\r\n`;
  }
  if (req.body !== undefined) head += `Content-Length: ${Buffer.byteLength(req.body)}\r\n`;
  return `${head}\r\n`;
}

/** One request, answered whole within `timeoutMs`. */
export async function ipcRequest(socketPath: string, req: IpcRequest): Promise<IpcAnswer> {
  const head = headOf(req);
  for (let attempt = 0; ; attempt++) {
    const pooled = takeIdle(socketPath);
    let conn: HttpConnection;
    try {
      conn = pooled ?? (await HttpConnection.open(socketPath, CONNECT_TIMEOUT_MS));
    } catch (err) {
      throw describe(err, socketPath);
    }
    conn.setIdle(false);
    const deadline = setTimeout(
      () => conn.destroy(new IpcError('timeout', `no answer from tuicd within ${Math.round(req.timeoutMs / 1000)} s`)),
      req.timeoutMs,
    );
    try {
      const answer = await conn.request(head, req.body, req.onEvent);
      if (!conn.closed) giveBack(socketPath, conn);
      return answer;
    } catch (err) {
      // tuicd closed an idle kept-alive connection just as it was reused: the request never reached
      // it (no byte of an answer came back), so sending it again on a fresh connection is safe.
      if (pooled !== undefined && attempt === 0 && err instanceof ConnectionError && !err.answered) continue;
      throw describe(err, socketPath);
    } finally {
      clearTimeout(deadline);
    }
  }
}

export interface EventStream {
  /** Ends the stream; `onEnd` is not called for a close asked for here. */
  close(): void;
}

/**
 * A GET whose answer is a server-sent event stream: `onData` gets each event's data (the `data:`
 * lines joined by newlines); `onEnd` once, when the stream ends or could not start (with why).
 */
export function ipcEventStream(
  socketPath: string,
  path: string,
  headers: Record<string, string>,
  onData: (data: string) => void,
  onEnd: (why: string) => void,
): EventStream {
  let closed = false;
  let ended = false;
  const end = (why: string) => {
    if (ended || closed) return;
    ended = true;
    onEnd(why);
  };
  const r = request({ socketPath, method: 'GET', path, headers: { Host: 'localhost', Accept: 'text/event-stream', ...headers }, agent: false });
  const connectTimer = setTimeout(() => r.destroy(new IpcError('unreachable', `no tuicd accepted on ${socketPath}`)), CONNECT_TIMEOUT_MS);
  r.once('socket', (s) => s.once('connect', () => clearTimeout(connectTimer)));
  r.once('error', (err: NodeJS.ErrnoException) => {
    clearTimeout(connectTimer);
    end(describe(err, socketPath).message);
  });
  r.once('response', (res) => {
    clearTimeout(connectTimer);
    if (res.statusCode !== 200) {
      res.resume();
      return end(`GET ${path} answered ${res.statusCode}`);
    }
    res.setEncoding('utf8');
    let pending = '';
    let data: string[] = [];
    res.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        if (line === '') {
          if (data.length > 0) onData(data.join('\n'));
          data = [];
        } else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    });
    res.once('end', () => end('the stream ended'));
    res.once('error', (err) => end(err.message));
  });
  r.end();
  return {
    close() {
      closed = true;
      clearTimeout(connectTimer);
      r.destroy();
    },
  };
}
