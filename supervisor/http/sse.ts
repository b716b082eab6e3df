/**
 * `GET /events`: turns an engine response into an EventBus subscriber that is fed corked,
 * coalesced writes and honours the transport's backpressure (docs/http-api.md, tag events).
 */

import type { EngineResponse } from './engine/types.js';
import { DisposableStore, toDisposable } from '../../shared/disposable.js';
import type { Disposable } from '../../shared/disposable.js';
import type { EventBus, EventMap, EventSink, Subscription } from '../events/eventBus.js';
import type { LiveStream } from './types.js';

/** Reconnect delay EventSource clients are told to use (the stream's first line, `retry: 5000`). */
export const SSE_RETRY_MS = 5_000;

/** Comment sent so proxies and clients see traffic on a quiet stream: `: ping` every 15 s. */
export const SSE_KEEP_ALIVE_MS = 15_000;

const RETRY_BYTES = Buffer.from(`retry: ${SSE_RETRY_MS}\n\n`);
export const PING_BYTES = Buffer.from(': ping\n\n');

/**
 * Written when uWS reports the socket writable but nothing is queued: with an onWritable handler
 * registered, uWS pushes out its own buffered bytes only when the app writes, so an empty comment
 * (ignored by EventSource) is what flushes the tail of the last chunk.
 */
export const DRAIN_NUDGE_BYTES = Buffer.from(':\n\n');

/** The SSE headers; compression is never applied to an event stream (it would hold events back). */
const SSE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Content-Type', 'text/event-stream'],
  ['Cache-Control', 'no-cache'],
  ['Connection', 'keep-alive'],
  // Stops nginx-style proxies from buffering the stream.
  ['X-Accel-Buffering', 'no'],
];

/**
 * Writes an SSE response head (status, headers, `retry`) in the caller's corked section; every
 * SSE stream (GET /events, GET /mcp) opens with it.
 */
export function writeSseHead(res: EngineResponse, headers: Record<string, string> = {}): void {
  res.writeStatus('200 OK');
  for (const [key, value] of SSE_HEADERS) res.writeHeader(key, value);
  for (const key in headers) res.writeHeader(key, headers[key]!);
  res.write(RETRY_BYTES);
}

/** What `GET /events` reads from its query string. */
interface SseQuery {
  /** Raw `types` value: null = parameter absent (all events), '' = present but empty (none). */
  types: string | null;
  streamId?: string;
}

interface SseOptions extends SseQuery {
  /** Keep-alive comment period. Default SSE_KEEP_ALIVE_MS; tests pass a short one. */
  keepAliveMs?: number;
  /** Extra response headers (CORS for browser EventSource clients). */
  headers?: Record<string, string>;
}

/** A live SSE stream; disposing (or closing) it ends the response. */
export interface SseStream extends Disposable, LiveStream {
  readonly subscription: Subscription;
  readonly streamId: string | undefined;
  /** True until the client aborts or the stream is closed. */
  readonly isOpen: boolean;
}

/** Parses `types` and `stream_id` from a raw query string (`req.getQuery()`, no leading `?`). */
export function parseSseQuery(query: string): SseQuery {
  const params = new URLSearchParams(query);
  const result: SseQuery = { types: params.has('types') ? params.get('types') : null };
  const streamId = params.get('stream_id');
  if (streamId) result.streamId = streamId;
  return result;
}

/** `types` value → bus filter: null = all, '' = none, otherwise the comma list (blanks ignored). */
export function parseTypes(raw: string | null): Set<string> | null {
  if (raw === null) return null;
  return new Set(
    raw
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t.length > 0),
  );
}

/**
 * Opens an SSE stream on `res`. Must be called synchronously inside the uWS route handler (it
 * attaches onAborted first and writes the headers in the handler's corked section). Answers 503
 * and returns undefined when the bus is already disposed.
 *
 * uWS closes a response whose buffered write has not moved for about 10 s (its HTTP_TIMEOUT_S,
 * not settable from JS), so a client that stops reading entirely is disconnected then; a slow
 * one that keeps reading gets `lagged` and stays.
 */
export function openSse<M extends EventMap>(res: EngineResponse, options: SseOptions, bus: EventBus<M>): SseStream | undefined {
  const store = new DisposableStore();
  let open = true;
  res.onAborted(() => {
    open = false;
    store.dispose();
  });
  if (bus.isDisposed) {
    // Shutting down: the client's EventSource retries, and finds the next supervisor.
    open = false;
    res
      .writeStatus('503 Service Unavailable')
      .writeHeader('Content-Type', 'application/json')
      .end(JSON.stringify({ error: 'Server is shutting down', code: 'unavailable' }));
    return undefined;
  }

  // Every write after the handler returns comes from a timer or setImmediate, so it is corked:
  // uWS frames a chunk as several small writes and would otherwise send each one separately.
  const writeCorked = (chunk: Uint8Array): boolean => {
    if (!open) return true;
    let ok = true;
    res.cork(() => {
      ok = res.write(chunk);
    });
    return ok;
  };
  const sink: EventSink = { write: writeCorked, close: () => stream.dispose() };
  const subscription = store.add(bus.subscribe(parseTypes(options.types), sink, options.streamId === undefined ? {} : { streamId: options.streamId }));

  // Still inside the handler's corked section: status, headers and retry leave in one packet.
  writeSseHead(res, options.headers);

  // Returning false tells uWS this attempt did not finish; it calls again when writable.
  res.onWritable(() => (open ? subscription.drain(DRAIN_NUDGE_BYTES) : true));

  const timer = setInterval(() => subscription.keepAlive(PING_BYTES), options.keepAliveMs ?? SSE_KEEP_ALIVE_MS);
  // The listen socket keeps the process alive; a keep-alive timer must not.
  timer.unref();
  store.add(toDisposable(() => clearInterval(timer)));

  const stream: SseStream = {
    subscription,
    streamId: options.streamId,
    get isOpen() {
      return open;
    },
    dispose() {
      if (!open) return;
      open = false;
      store.dispose();
      res.cork(() => res.end());
    },
    close() {
      stream.dispose();
    },
    onClose(listener) {
      if (open) store.add(toDisposable(listener));
      else listener();
    },
  };
  return stream;
}
