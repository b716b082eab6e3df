/**
 * What the registry needs from one upstream connection, whatever its transport: the HTTP client
 * (httpUpstream.ts, SDK transport) and the stdio client (stdioUpstream.ts, a proxy-stdio pump).
 * Tool definitions and results stay raw JSON values: the hub passes them on unchanged.
 */

import type { Cancellation } from '../../shared/cancellation.js';

/** A tool exactly as the upstream listed it (name, description, inputSchema, anything else). */
export interface UpstreamTool {
  name: string;
  [field: string]: unknown;
}

/** A JSON-RPC error the upstream answered with (as opposed to a transport failure, which throws). */
export class UpstreamRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The upstream demands OAuth (401 with `WWW-Authenticate: Bearer resource_metadata=…`): not a breaker failure. */
export class UpstreamNeedsAuthError extends Error {
  /** The scope the server asked for (a step-up: 403 insufficient_scope), to request on the next authorization. */
  constructor(
    message: string,
    readonly scope?: string,
  ) {
    super(message);
  }
}

/**
 * The client capabilities the hub declares to every upstream: what it can route to the client whose
 * request the upstream is serving (the supervisor refuses, per client, what that client cannot do).
 */
export const HUB_CLIENT_CAPABILITIES = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
} as const;

/** A server's `notifications/progress` params (its token is the hub's own; the registry restores the client's). */
export type ProgressListener = (params: Record<string, unknown>) => void;

export interface UpstreamRequestOptions {
  cancellation?: Cancellation | AbortSignal;
  /** Asks the upstream for progress: the client puts a token of its own into `_meta.progressToken`. */
  onProgress?: ProgressListener;
}

/** A server-to-client notification (anything but progress, which goes to the request that asked for it). */
export type NotificationListener = (method: string, params: Record<string, unknown> | undefined) => void;

/** Answers a server-to-client request: resolves with the result, throws UpstreamRpcError for an error answer. */
export type ServerRequestHandler = (method: string, params: Record<string, unknown> | undefined) => Promise<unknown>;

export interface UpstreamClient {
  /** Handshake (initialize → notifications/initialized) then tools/list; resolves with the tools. */
  connect(signal?: AbortSignal): Promise<UpstreamTool[]>;
  /** tools/list again (the HTTP health check; also after a stdio respawn). */
  listTools(signal?: AbortSignal): Promise<UpstreamTool[]>;
  /**
   * tools/call. Resolves with the raw `result` value (unvalidated: the registry decides between
   * passthrough and the envelope); rejects with UpstreamRpcError for a JSON-RPC error answer and
   * any other Error for transport failures (breaker failures).
   */
  callTool(name: string, args: Record<string, unknown>, cancellation?: Cancellation | AbortSignal, onProgress?: ProgressListener): Promise<unknown>;
  /** The server's capabilities from the last successful handshake ({} before one). */
  readonly capabilities: Record<string, unknown>;
  /** Any request: resolves with the raw `result`; rejects as callTool does. */
  request(method: string, params: Record<string, unknown> | undefined, options?: UpstreamRequestOptions): Promise<unknown>;
  /** A notification to the server (on the current session / running child; fails when there is none). */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** The server's notifications other than progress (and, over HTTP, tools/list_changed). */
  onNotification(listener: NotificationListener): void;
  /** Serves the server's requests (ping aside); without a handler they get -32601. One handler. */
  setRequestHandler(handler: ServerRequestHandler): void;
  /** The liveness health check: HTTP = tools/list succeeded; stdio = the child runs. */
  healthCheck(signal?: AbortSignal): Promise<UpstreamTool[] | null>;
  /** Pid of the child for stdio upstreams; null otherwise. */
  readonly pid: number | null;
  /** Fires when the connection's tools may have changed without a call (stdio respawn, child exit). */
  onToolsMayHaveChanged?(listener: () => void): void;
  /**
   * Fires when the connection ended without being asked to (a stdio child that crashed or was
   * killed, or whose pump went away), with the reason; never for close(). The registry takes the
   * upstream out of ready at once and respawns it under its retry policy.
   */
  onConnectionLost?(listener: (reason: string) => void): void;
  /** Graceful shutdown (HTTP: DELETE the session; stdio: close stdin, 2 s, kill group). Idempotent. */
  close(): Promise<void>;
}
