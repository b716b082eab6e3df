/**
 * HTTP/1.1 to tuicd over its unix socket, as the bridge needs it: a whole JSON answer with a
 * deadline, or a long-lived SSE stream. Node's http client does the framing (Content-Length, chunked
 * bodies, 1xx interim answers), so an answer is complete when its body is, never at EOF.
 *
 * Requests reuse kept-alive connections (the reference bridge opened one per request): a connect
 * and accept per call cost the bridge about half its throughput. A connection tuicd closed (a
 * restart) leaves the pool with its close; what is in flight on it fails like any transport error.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';

/** Far above the concurrency one agent drives; waits beyond it queue in the agent. */
const MAX_CONNECTIONS = 64;
const agent = new Agent({ keepAlive: true, maxSockets: MAX_CONNECTIONS, maxFreeSockets: 16 });

/** A socket that does not accept within this long is treated as no tuicd there. */
export const CONNECT_TIMEOUT_MS = 3_000;

export interface IpcAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Why a request got no answer: `unreachable` (nothing accepts on the socket), `timeout` (no whole
 * answer in time), `failed` (the connection broke mid-answer).
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
}

const UNREACHABLE_CODES = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'EACCES']);

function describe(err: NodeJS.ErrnoException, socketPath: string): IpcError {
  if (err instanceof IpcError) return err;
  if (err.code !== undefined && UNREACHABLE_CODES.has(err.code)) return new IpcError('unreachable', `no tuicd at ${socketPath} (${err.code})`);
  return new IpcError('failed', err.message);
}

/** One request, answered whole within `timeoutMs`. */
export async function ipcRequest(socketPath: string, req: IpcRequest): Promise<IpcAnswer> {
  try {
    return await attempt(socketPath, req);
  } catch (err) {
    // tuicd closed an idle kept-alive connection just as it was reused: the request never reached
    // it (no byte of an answer came back), so sending it again on a fresh connection is safe.
    if (err instanceof StaleConnection) return attempt(socketPath, req);
    throw err;
  }
}

class StaleConnection extends Error {}

function attempt(socketPath: string, req: IpcRequest): Promise<IpcAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: 'localhost', ...req.headers };
    if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
    const r = request({ socketPath, method: req.method, path: req.path, headers, agent });
    const deadline = setTimeout(() => r.destroy(new IpcError('timeout', `no answer from tuicd within ${Math.round(req.timeoutMs / 1000)} s`)), req.timeoutMs);
    const connectTimer = setTimeout(() => r.destroy(new IpcError('unreachable', `no tuicd accepted on ${socketPath} within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
    // A pooled connection is connected already; a new one clears the timer once it is.
    r.once('socket', (s) => (s.connecting ? s.once('connect', () => clearTimeout(connectTimer)) : clearTimeout(connectTimer)));
    let answered = false;
    r.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      clearTimeout(connectTimer);
      if (r.reusedSocket && !answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) return reject(new StaleConnection(err.message));
      reject(describe(err, socketPath));
    });
    r.once('response', (res) => {
      answered = true;
      clearTimeout(connectTimer);
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(deadline);
        reject(describe(err, socketPath));
      });
    });
    r.end(req.body);
  });
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
