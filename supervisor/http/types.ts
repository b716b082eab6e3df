/** Shapes shared by the HTTP layer and the route modules; only stream handlers see an engine response. */

import { ApiError } from '../../shared/apiError.js';
import type { Cancellation } from '../../shared/cancellation.js';
import type { RouteSpec } from './routeSpec.js';
import type { BodyParts } from './bodyParts.js';
import type { EngineResponse, EngineSocket } from './engine/types.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../../shared/jsonDepth.js';

/** Which listener a request arrived on: the always-on unix socket or the opt-in TCP listener. */
export type ListenerKind = 'socket' | 'tcp';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS';

/** Everything a handler may know about a request, copied out of the engine's request before any await. */
export interface RequestContext {
  method: HttpMethod;
  path: string;
  readonly query: URLSearchParams;
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string>>;
  params: Readonly<Record<string, string>>;
  listener: ListenerKind;
  /** The request came over TLS (the TCP listener with `services.tls`); never on the unix socket. */
  readonly tls: boolean;
  readonly remoteAddress: string;
  /** The socket listener is always loopback; on TCP it is the peer address that decides. */
  readonly isLoopback: boolean;
  /**
   * The caller is trusted: always on the unix socket; on TCP once its credentials passed (every
   * route but a public one, and a public route that checks them: Route.optionalAuth). Absent: false.
   */
  readonly authenticated?: boolean;
  /** The raw body, bounded by the body limit; empty for bodyless methods. */
  body: Buffer;
  /** Set when the request must stop (client went away or the request timed out). Built on first use. */
  readonly signal: AbortSignal;
  /** The same, without building an AbortSignal (shared/cancellation.ts); absent, use `signal`. */
  readonly cancellation?: Cancellation;
  /**
   * The session token (its cookie or `?token=` link) let the request in: replacing the token logs
   * the caller out, and the server ends every stream the request opened.
   */
  readonly byToken?: boolean;
}

/** A complete response. `body` objects are sent as JSON; BodyParts are sent as their bytes in order. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer | BodyParts | object | null;
}

/** Handlers that produce one response. */
export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

/**
 * A handler that takes over the raw response to stream (SSE). It runs synchronously inside the
 * engine's request callback, is never compressed and never cut by the request timeout.
 */
export interface StreamHandler {
  /** Returns the stream it opened (nothing when it answered at once): the server ends it when the credential is revoked. */
  stream(res: EngineResponse, ctx: RequestContext): LiveStream | undefined;
}

/** A response that stays open after its handler returned (an SSE stream): the server may end it early. */
export interface LiveStream {
  /** Ends the stream now; a no-op once it ended. */
  close(): void;
  /** Runs once when the stream is over, whichever side ended it (at once if it already is). */
  onClose(listener: () => void): void;
}

/** Per-socket behaviour of a WebSocket route: the engine's callbacks with the route's user data. */
export interface WsBehavior<U> {
  /** Runs before the upgrade (after auth on TCP): throw an ApiError to refuse (its code picks the status); returns the socket's data. */
  accept(ctx: RequestContext): U;
  open?(ws: EngineSocket<U>): void;
  message?(ws: EngineSocket<U>, message: ArrayBuffer, isBinary: boolean): void;
  drain?(ws: EngineSocket<U>): void;
  close?(ws: EngineSocket<U>, code: number): void;
  /** Bytes the engine may buffer per socket before send() drops a message. */
  maxBackpressure: number;
  maxPayloadLength: number;
}

// biome-ignore lint/suspicious/noExplicitAny: routes with different socket data share one list; each route's callbacks agree on its own U
export interface WsRoute<U = any> {
  pattern: string;
  ws: WsBehavior<U>;
  /** What GET /openapi.json says of the upgrade (kind 'ws'): its params, query and messages. */
  spec?: RouteSpec;
}

export interface Route {
  method: HttpMethod;
  /** `/sessions/:id/write` style; segments starting with `:` are parameters. */
  pattern: string;
  handler: Handler | StreamHandler;
  /** Served without auth on TCP (/health, the /mobile login and assets). */
  public?: boolean;
  /**
   * A public route that still checks credentials sent on TCP, never refusing: the handler reads
   * `ctx.authenticated` to decide how much to say (/health).
   */
  optionalAuth?: boolean;
  /** Skip reading a body even for POST (streams). */
  noBody?: boolean;
  /** Refusals the server makes for this route (Host/Origin guard) come as JSON-RPC errors (/mcp). */
  errorShape?: 'jsonrpc';
  /** Its schemas and answers (routeSpec.ts): checked before the handler, published in GET /openapi.json. */
  spec?: RouteSpec;
}

export function json(body: object, status = 200): Reply {
  return { status, body };
}

/** A bare JSON value (a number, a boolean, a string, null), not wrapped in an object: `json` would send a string as text. */
export function bareJson(value: unknown): Reply {
  return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(value) };
}

export function isStreamHandler(h: Handler | StreamHandler): h is StreamHandler {
  return typeof h === 'object' && h !== null && typeof (h as StreamHandler).stream === 'function';
}

/** Parses a JSON body, turning bad JSON into a 400 that says so. */
export function parseJsonBody<T = unknown>(ctx: RequestContext): T {
  if (ctx.body.length === 0) throw new ApiError('invalid_input', 'request body is empty; expected JSON');
  const text = ctx.body.toString('utf8');
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) throw new ApiError('invalid_input', `request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new ApiError('invalid_input', `request body is not valid JSON: ${(err as Error).message}`);
  }
}
