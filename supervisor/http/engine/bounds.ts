/**
 * Connection bounds, in one place for both engines. uWebSockets.js 20.30 has its own fixed ones
 * (HttpContext.h): 10 s from connect for a request's headers, 10 s of idle keep-alive, and a body
 * must bring 160 KiB (16 KiB/s) in each 10 s window or the connection is closed. The node engine
 * applies the same numbers (nodeEngine.ts); the oversize answer's lingering close runs on both
 * (lingeringAnswer.ts).
 *
 * TUIC_HTTP_TIMEOUT_MS and TUIC_HTTP_MAX_CONNECTIONS lower the 10 s limits and the connection cap
 * of the node engine, for tests (uWS's are compiled in).
 */

/** Headers complete within this of the connection's start (Node's headersTimeout, as uWS's 10 s). */
const HEADERS_TIMEOUT_MS = 10_000;
/** An idle keep-alive connection is closed after this (uWS: 10 s). */
const KEEP_ALIVE_TIMEOUT_MS = 10_000;
/** A body window: at least BODY_WINDOW_MIN_BYTES must arrive in each, else 408 and close (uWS: 10 s). */
const BODY_WINDOW_MS = 10_000;
/** 16 KiB/s averaged over a window, uWS's HTTP_RECEIVE_THROUGHPUT_BYTES × its 10 s. */
const BODY_WINDOW_MIN_BYTES = 160 * 1024;
/** Open connections per node-engine listener (WebSockets and SSE included); past it new ones are dropped at once. */
const MAX_CONNECTIONS = 2048;

/**
 * After the 413 for a declared body over the limit, what the client still sends is read and dropped
 * (so the close is not a reset that destroys the answer) until the body ends, for at most this many
 * bytes, this long in all, or this long without a byte; then the connection is closed. The bytes
 * are generous on purpose: a client that writes its whole body before reading (node's http in one
 * synchronous burst, Python's requests) reads nothing once the reset comes; 16 MiB lost a 20 MB
 * upload's answer that way.
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
export const LINGER_MAX_MS = 5_000;
export const LINGER_IDLE_MS = 2_000;

export interface NodeBounds {
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  bodyWindowMs: number;
  bodyWindowMinBytes: number;
  maxConnections: number;
  /** How often Node checks its connections for the headers timeout (its default 30 s would let one live 40 s). */
  checkIntervalMs: number;
}

function positiveInt(raw: string | undefined): number | undefined {
  const n = raw === undefined || raw === '' ? Number.NaN : Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The node engine's bounds, with the test knobs from the environment applied. */
export function nodeBounds(env: NodeJS.ProcessEnv = process.env): NodeBounds {
  const timeout = positiveInt(env['TUIC_HTTP_TIMEOUT_MS']);
  const headersTimeoutMs = timeout ?? HEADERS_TIMEOUT_MS;
  return {
    headersTimeoutMs,
    keepAliveTimeoutMs: timeout ?? KEEP_ALIVE_TIMEOUT_MS,
    bodyWindowMs: timeout ?? BODY_WINDOW_MS,
    bodyWindowMinBytes: BODY_WINDOW_MIN_BYTES,
    maxConnections: positiveInt(env['TUIC_HTTP_MAX_CONNECTIONS']) ?? MAX_CONNECTIONS,
    checkIntervalMs: Math.min(1_000, Math.max(100, Math.floor(headersTimeoutMs / 4))),
  };
}
