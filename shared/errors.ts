/** Error codes that cross process and thread boundaries; match on `code`, never on message text. */

/** The one table of codes. Documented in README "Error codes". */
export const ErrorCode = {
  CHANNEL_CLOSED: 'CHANNEL_CLOSED',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  REQUEST_CANCELLED: 'REQUEST_CANCELLED',
  PROTOCOL_MISMATCH: 'PROTOCOL_MISMATCH',
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  UNKNOWN_METHOD: 'UNKNOWN_METHOD',
  HANDLER_FAILED: 'HANDLER_FAILED',
  WORKER_EXITED: 'WORKER_EXITED',
  PTY_NOT_FOUND: 'PTY_NOT_FOUND',
  /** The pty host could not start a session (id in use, bad cwd, exec failure). */
  PTY_SPAWN_FAILED: 'PTY_SPAWN_FAILED',
  /** A write was refused: the session's program has not read PtyConstants.INPUT_BACKLOG_BYTES of earlier input (HTTP 429). */
  INPUT_BACKLOG_FULL: 'INPUT_BACKLOG_FULL',
  UPSTREAM_SPAWN_FAILED: 'UPSTREAM_SPAWN_FAILED',
  /** The hub has no upstream by that name (reconnect, disconnect). */
  UPSTREAM_NOT_FOUND: 'UPSTREAM_NOT_FOUND',
  CONFIG_INVALID: 'CONFIG_INVALID',
  CONFIG_CORRUPT: 'CONFIG_CORRUPT',
  /** config.json could not be read, locked or written (disk, permissions). */
  CONFIG_IO_FAILED: 'CONFIG_IO_FAILED',
  SOCKET_IN_USE: 'SOCKET_IN_USE',
  BIND_FAILED: 'BIND_FAILED',
  /** services.tls names a certificate or key that is missing, unreadable, not PEM, or not a matching pair. */
  TLS_CREDENTIALS_INVALID: 'TLS_CREDENTIALS_INVALID',
  /** The credential vault file is unreadable or malformed; it is left untouched. */
  VAULT_CORRUPT: 'VAULT_CORRUPT',
  /** The credential vault file could not be written. */
  VAULT_WRITE_FAILED: 'VAULT_WRITE_FAILED',
  /** An OS keyring is required (forced, or it holds the secret asked for) but is not reachable. */
  KEYRING_UNAVAILABLE: 'KEYRING_UNAVAILABLE',
  /** A reachable OS keyring failed, timed out, or lost an entry it was recorded to hold. */
  KEYRING_FAILED: 'KEYRING_FAILED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** What an error looks like on the wire. */
export interface WireError {
  code: string;
  message: string;
  data?: unknown;
}

const BRAND = Symbol.for('tuicd.error');

/** Base class for tuicd errors; branded so duplicate module copies still pass `instanceof`. */
export class SupervisorError extends Error {
  readonly code: string;
  readonly data: unknown;

  constructor(code: string, message: string, data?: unknown) {
    super(message);
    this.name = 'SupervisorError';
    this.code = code;
    this.data = data;
    (this as unknown as Record<symbol, boolean>)[BRAND] = true;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** Turns any thrown value into its wire form; unknown errors become HANDLER_FAILED. */
export function toWire(err: unknown): WireError {
  if (err instanceof SupervisorError) {
    return err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data };
  }
  if (err instanceof Error) return { code: ErrorCode.HANDLER_FAILED, message: err.message };
  return { code: ErrorCode.HANDLER_FAILED, message: String(err) };
}

/** Rebuilds an error received from a peer. */
export function fromWire(wire: WireError): SupervisorError {
  return new SupervisorError(wire.code, wire.message, wire.data);
}
