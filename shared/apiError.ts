/**
 * The one error domain code throws for a caller to read. Its `code` comes from a small closed set;
 * each edge maps it once: HTTP (supervisor/http/errorReply.ts: a status and `{error, code}`), an MCP
 * tool error (`{error, code}` with isError), a JSON-RPC error (`data.code`). Domain code never
 * names an HTTP status.
 */
import { ErrorCode, SupervisorError } from './errors.js';

/** Every code an answer of tuicd's may carry. Documented in docs/http-api.md ("Errors"). */
export const API_ERROR_CODES = [
  /** The request or tool input is malformed or names something invalid (400). */
  'invalid_input',
  /** Credentials are missing or wrong (401). */
  'unauthorized',
  /** Understood, but this caller may not do it (403). */
  'forbidden',
  /** No such session, file, repository, upstream, route… (404). */
  'not_found',
  /** The method is not served on this path (405). */
  'method_not_allowed',
  /** The request took longer than the server allows (408). */
  'timeout',
  /** The target's state forbids it now: exists already, exited, conflicting change (409). */
  'conflict',
  /** It was there and is gone for good (410). */
  'gone',
  /** The body or the thing asked for is over a limit (413). */
  'payload_too_large',
  /** The body is not JSON (415). */
  'unsupported_media_type',
  /** The target cannot take more now: input backlog, too many tries (429; Retry-After when known). */
  'busy',
  /** A bug on tuicd's side (500). */
  'internal',
  /** Known and refused: this build or platform does not do it (501). */
  'not_implemented',
  /** Something tuicd relies on failed: an upstream, git, gh (502). */
  'bad_gateway',
  /** A worker or service is down or restarting; try again (503; Retry-After when known). */
  'unavailable',
  /** A worker or upstream did not answer in time (504). */
  'upstream_timeout',
  /** ACP: the agent did not advertise what the call needs (501). */
  'capability_unavailable',
  /** ACP: the agent's process or its pipe is gone; reconnect for a new generation (410). */
  'transport_closed',
  /** ACP: the agent answered initialize with a protocol version tuicd does not speak (502). */
  'unsupported_protocol',
  /** ACP: the agent did not start or did not answer initialize (502). */
  'initialization_failed',
  /** ACP: the agent answered a call with an error (502). */
  'agent_error',
  /** ACP: the agent sent something the protocol does not allow (502). */
  'protocol_violation',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

const BRAND = Symbol.for('tuicd.apiError');

export interface ApiErrorOptions {
  /** More fields for the answer body, beside `error` and `code` (e.g. `field`, `reason`). */
  extra?: Readonly<Record<string, unknown>>;
  /** Seconds after which a retry may succeed (busy, unavailable): becomes Retry-After over HTTP. */
  retryAfterS?: number;
  /** More headers an HTTP answer needs (WWW-Authenticate). Only auth sets these. */
  headers?: Readonly<Record<string, string>>;
}

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly extra: Readonly<Record<string, unknown>>;
  readonly retryAfterS: number | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: ApiErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.extra = options.extra ?? {};
    this.retryAfterS = options.retryAfterS;
    this.headers = options.headers;
    (this as unknown as Record<symbol, boolean>)[BRAND] = true;
  }

  /** Branded: a second copy of this module (tests, the pool) still passes `instanceof`. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** A worker restarted after dying under a request: try again in a second. */
const RESTART_RETRY_AFTER_S = 1;

/**
 * Channel errors (a worker's SupervisorError codes) a caller is told about as themselves; any other
 * SupervisorError is a failure of ours (`internal`).
 */
const CHANNEL_CODES: Partial<Record<string, ApiErrorCode>> = {
  [ErrorCode.WORKER_EXITED]: 'unavailable',
  [ErrorCode.CHANNEL_CLOSED]: 'unavailable',
  [ErrorCode.REQUEST_TIMEOUT]: 'upstream_timeout',
  [ErrorCode.CONFIG_INVALID]: 'invalid_input',
};

/**
 * Any thrown value as an ApiError: itself, a known channel error under its mapped code (with its
 * Retry-After), or null for everything else, which the edge reports as `internal` and logs.
 */
export function asApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (!(err instanceof SupervisorError)) return null;
  const code = CHANNEL_CODES[err.code];
  if (code === undefined) return null;
  const given = (err.data as { retry_after_s?: unknown } | undefined)?.retry_after_s;
  let retryAfterS: number | undefined;
  if (typeof given === 'number' && Number.isInteger(given) && given >= 0) retryAfterS = given;
  else if (err.code === ErrorCode.CHANNEL_CLOSED) retryAfterS = RESTART_RETRY_AFTER_S;
  return new ApiError(code, err.message, retryAfterS === undefined ? {} : { retryAfterS });
}
