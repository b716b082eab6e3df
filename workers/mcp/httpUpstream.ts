/**
 * An HTTP (Streamable HTTP, revision 2025-11-25) upstream: the SDK 1.x Client over its
 * StreamableHTTPClientTransport, with the proxy's HTTP rules in the transport's fetch (httpFetch.ts).
 *
 * What this layer adds over the SDK:
 *  - results and tool lists are taken raw (Client.callTool/listTools would validate and strip them);
 *  - one re-initialize + retry when a request meets HTTP 400/404 or a connection error, shared by
 *    every request that failed on the same session (ten concurrent 404s = one new session);
 *  - each request runs on its own abort signal (caller's signal + timeout_secs), see httpSignals.ts;
 *  - an expired session is retired only once its in-flight requests have drained, so a re-init never
 *    fails requests that were still being answered on the old session;
 *  - the server's requests to the client (sampling, elicitation, roots) go to one handler and its
 *    notifications (log messages, resource updates, list changes) to the listeners; progress goes to
 *    the request that asked for it (the SDK's `onprogress`, its own token).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type ClientNotification,
  type ClientRequest,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
// The SDK's own zod (its runtime dependency): a result schema that accepts anything, unchanged.
import * as z from 'zod/v4';
import {
  HUB_CLIENT_CAPABILITIES,
  type NotificationListener,
  type ProgressListener,
  type ServerRequestHandler,
  UpstreamNeedsAuthError,
  UpstreamRpcError,
  type UpstreamClient,
  type UpstreamRequestOptions,
  type UpstreamTool,
} from './upstreamClient.js';
import {
  UpstreamAuthFailedError,
  UpstreamConnectionError,
  UpstreamCredentialError,
  UpstreamFetch,
  UpstreamHttpStatusError,
  UpstreamNoAnswerError,
  UpstreamProtocolError,
  UpstreamRedirectError,
  type RequestScope,
} from './httpFetch.js';
import { NEVER_MS, follow, followCancellation, raceAbort } from './httpSignals.js';
import type { Cancellation } from '../../shared/cancellation.js';
import { PROXY_CLIENT_NAME, PROXY_USER_AGENT_PRODUCT, type UpstreamServerWire } from '../../shared/protocol/upstreamServer.js';

export {
  UpstreamAuthFailedError,
  UpstreamConnectionError,
  UpstreamCredentialError,
  UpstreamHttpStatusError,
  UpstreamNoAnswerError,
  UpstreamProtocolError,
  UpstreamRedirectError,
} from './httpFetch.js';

/** The request (or handshake) got no answer within timeout_secs. */
export class UpstreamTimeoutError extends Error {}
/** The upstream client was closed while the request was pending, or before it started. */
export class UpstreamClosedError extends Error {}

export type UpstreamLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface HttpUpstreamOptions {
  /** Its transport must be `{ type: 'http', url }`. */
  server: UpstreamServerWire;
  /** tuicd's version, for `User-Agent: tuicommander-mcp-proxy/<version>` and clientInfo.version. */
  version: string;
  /** Read per attempt: `server.name` (Bearer) and `<name>/header/<credential_ref>` (custom headers). */
  credential: (account: string) => Promise<string | null>;
  /** After a 401 to the bearer `rejected`: the bearer to retry with once (OAuth refresh), or null. */
  refreshCredential?: (rejected: string) => Promise<string | null>;
  log: UpstreamLog;
  /** The fetch under ours (tests); global fetch by default. */
  fetch?: typeof fetch;
}

const anyResult = z.unknown();
/** A handshake always has a bound, even with timeout_secs 0: every caller waits on the one in flight. */
const HANDSHAKE_CAP_MS = 60_000;
const MAX_TOOL_PAGES = 100;

/** Sends one request on the attempt's session and scope; resolves with the raw result. */
type Send = (request: ClientRequest, onProgress?: ProgressListener) => Promise<unknown>;

interface Connection {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly fetcher: UpstreamFetch;
  inflight: number;
  retired: boolean;
  disposed: boolean;
}

interface Scope {
  readonly controller: AbortController;
  dispose(): void;
}

export class HttpUpstream implements UpstreamClient {
  readonly pid = null;
  private readonly name: string;
  private readonly endpoint: URL;
  private readonly timeoutMs: number;
  private readonly baseFetch: typeof fetch;
  private current: Connection | null = null;
  private establishing: Promise<Connection> | null = null;
  private readonly connections = new Set<Connection>();
  /** Every live operation and handshake scope: close() aborts them all. */
  private readonly scopes = new Set<AbortController>();
  private readonly toolsListeners: (() => void)[] = [];
  private readonly notificationListeners: NotificationListener[] = [];
  private requestHandler: ServerRequestHandler | undefined;
  private serverCapabilities: Record<string, unknown> = {};
  private readonly warnedMissingHeaders = new Set<string>();
  private handshakes = 0;
  private started = false;
  private closing: Promise<void> | null = null;

  constructor(private readonly opts: HttpUpstreamOptions) {
    const { server } = opts;
    if (server.transport.type !== 'http') throw new Error(`Upstream '${server.name}' is not an HTTP upstream`);
    this.name = server.name;
    this.endpoint = new URL(server.transport.url);
    this.timeoutMs = server.timeout_secs * 1000;
    this.baseFetch = opts.fetch ?? globalThis.fetch;
  }

  connect(signal?: AbortSignal): Promise<UpstreamTool[]> {
    if (!this.closing) this.started = true;
    return this.operation('connect', signal, (send) => this.listOn(send));
  }

  listTools(signal?: AbortSignal): Promise<UpstreamTool[]> {
    return this.operation('tools/list', signal, (send) => this.listOn(send));
  }

  healthCheck(signal?: AbortSignal): Promise<UpstreamTool[]> {
    return this.listTools(signal);
  }

  callTool(name: string, args: Record<string, unknown>, cancellation?: Cancellation | AbortSignal, onProgress?: ProgressListener): Promise<unknown> {
    return this.operation('tools/call', cancellation, (send) => send({ method: 'tools/call', params: { name, arguments: args } }, onProgress));
  }

  get capabilities(): Record<string, unknown> {
    return this.serverCapabilities;
  }

  request(method: string, params: Record<string, unknown> | undefined, options: UpstreamRequestOptions = {}): Promise<unknown> {
    const request = (params === undefined ? { method } : { method, params }) as ClientRequest;
    return this.operation(method, options.cancellation, (send) => send(request, options.onProgress));
  }

  /** On the current session (a handshake first when there is none). */
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.closing) throw this.closedError();
    if (!this.started) throw new Error(`Upstream '${this.name}' is not connected`);
    const conn = await this.acquire();
    await conn.client.notification((params === undefined ? { method } : { method, params }) as ClientNotification);
  }

  onNotification(listener: NotificationListener): void {
    this.notificationListeners.push(listener);
  }

  setRequestHandler(handler: ServerRequestHandler): void {
    this.requestHandler = handler;
  }

  onToolsMayHaveChanged(listener: () => void): void {
    this.toolsListeners.push(listener);
  }

  /** DELETE the session (best effort, bounded), then close. Idempotent; never throws. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    try {
      const closed = this.closedError();
      for (const scope of [...this.scopes]) scope.abort(closed);
      const live = this.current;
      this.current = null;
      await this.establishing?.catch(() => {});
      await Promise.all([...this.connections].map((c) => this.dispose(c, c === live)));
      this.opts.log('info', 'upstream closed', { upstream: this.name });
    } catch (error) {
      this.opts.log('warn', 'upstream close failed', { upstream: this.name, error: safeDescription(error) });
    }
  }

  /**
   * One public call: its own scope (caller signal + timeout), the current session (or the shared
   * handshake), and at most one re-initialize + retry on 400/404/connection error.
   */
  private async operation<T>(label: string, caller: AbortSignal | Cancellation | undefined, work: (send: Send) => Promise<T>): Promise<T> {
    if (this.closing) throw this.closedError();
    if (!this.started) throw new Error(`Upstream '${this.name}' is not connected`);
    const op = this.openScope(caller, label, this.timeoutMs);
    try {
      let conn = await raceAbort(this.acquire(), op.controller.signal);
      try {
        return await this.attempt(conn, op.controller.signal, work);
      } catch (error) {
        if (!sessionLost(error) || op.controller.signal.aborted || this.closing) throw error;
        this.opts.log('warn', 'upstream session lost; re-initializing once', { upstream: this.name, reason: (error as Error).message });
        conn = await raceAbort(this.replace(conn), op.controller.signal);
        return await this.attempt(conn, op.controller.signal, work);
      }
    } catch (error) {
      throw this.describe(error, op.controller.signal, label);
    } finally {
      op.dispose();
    }
  }

  /** One try on one session, on a signal of its own (the fetch layer may fail it: no answer, broken stream). */
  private async attempt<T>(conn: Connection, opSignal: AbortSignal, work: (send: Send) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const unlink = follow(opSignal, controller);
    const scope: RequestScope = { controller, ids: [] };
    const send: Send = (request, onProgress) =>
      conn.fetcher.withScope(scope, () =>
        conn.client.request(request, anyResult, {
          signal: controller.signal,
          timeout: NEVER_MS,
          ...(onProgress ? { onprogress: (progress) => onProgress(progress as Record<string, unknown>) } : {}),
        }),
      );
    conn.inflight++;
    try {
      return await work(send);
    } catch (error) {
      if (controller.signal.aborted) {
        if (!opSignal.aborted) throw controller.signal.reason;
      } else if (!(error instanceof McpError)) {
        // The SDK keeps a failed send's response handler until the request is cancelled.
        controller.abort(error);
      }
      throw error;
    } finally {
      conn.fetcher.release(scope);
      unlink();
      conn.inflight--;
      if (conn.retired && conn.inflight === 0) void this.dispose(conn, false);
    }
  }

  private acquire(): Promise<Connection> {
    if (this.current && !this.current.retired) return Promise.resolve(this.current);
    if (!this.establishing) {
      const handshake = this.establish();
      this.establishing = handshake;
      handshake
        .finally(() => {
          if (this.establishing === handshake) this.establishing = null;
        })
        .catch(() => {});
    }
    return this.establishing;
  }

  /** The first request to fail on `failed` retires it; all of them then share the one new handshake. */
  private replace(failed: Connection): Promise<Connection> {
    if (this.current === failed) {
      this.current = null;
      failed.retired = true;
      if (failed.inflight === 0) void this.dispose(failed, false);
    }
    return this.acquire();
  }

  private async establish(): Promise<Connection> {
    const scope = this.openScope(undefined, 'initialize', this.timeoutMs || HANDSHAKE_CAP_MS);
    const fetcher = new UpstreamFetch({
      upstream: this.name,
      endpoint: this.endpoint,
      userAgent: `${PROXY_USER_AGENT_PRODUCT}/${this.opts.version}`,
      headers: this.opts.server.headers ?? [],
      credential: this.opts.credential,
      ...(this.opts.refreshCredential ? { refreshCredential: this.opts.refreshCredential } : {}),
      baseFetch: this.baseFetch,
      warnMissingHeader: (header) => this.warnMissingHeader(header),
      warn: (msg) => this.opts.log('warn', msg, { upstream: this.name }),
    });
    const transport = new StreamableHTTPClientTransport(this.endpoint, { fetch: fetcher.fetch });
    // Client.connect chains the transport's existing onmessage in front of its own dispatch.
    transport.onmessage = fetcher.observe;
    const sendOnTransport = transport.send.bind(transport);
    transport.send = (message, options) => {
      fetcher.noteOutgoing(message);
      return sendOnTransport(message, options);
    };
    const client = new Client(
      { name: PROXY_CLIENT_NAME, version: this.opts.version },
      { capabilities: structuredClone(HUB_CLIENT_CAPABILITIES) as Record<string, Record<string, unknown>> },
    );
    const conn: Connection = { client, transport, fetcher, inflight: 0, retired: false, disposed: false };
    // A closed transport can still report: the SDK re-arms its stream reconnect timer after close.
    client.onerror = (error) => {
      if (!conn.disposed) this.transportError(error);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (!conn.retired && !conn.disposed) this.toolsMayHaveChanged();
    });
    this.routeServerMessages(conn);
    this.connections.add(conn);
    const handshake: RequestScope = { controller: scope.controller, ids: [] };
    fetcher.setHandshake(handshake);
    try {
      await client.connect(transport, { signal: scope.controller.signal, timeout: NEVER_MS });
    } catch (error) {
      void this.dispose(conn, false);
      throw scope.controller.signal.aborted ? scope.controller.signal.reason : error;
    } finally {
      fetcher.setHandshake(undefined);
      fetcher.release(handshake);
      scope.dispose();
    }
    if (this.closing) {
      await this.dispose(conn, true);
      throw this.closedError();
    }
    this.current = conn;
    this.serverCapabilities = (client.getServerCapabilities() ?? {}) as Record<string, unknown>;
    const reinitialized = this.handshakes++ > 0;
    this.opts.log('info', reinitialized ? 'upstream session re-initialized' : 'upstream session initialized', {
      upstream: this.name,
      protocolVersion: transport.protocolVersion,
    });
    if (reinitialized) this.toolsMayHaveChanged();
    return conn;
  }

  /**
   * The server's requests to the handler (the SDK validates what the handler answers, and answers
   * -32601 itself for methods without one) and its notifications to the listeners.
   */
  private routeServerMessages(conn: Connection): void {
    const serve = async (request: { method: string; params?: unknown }): Promise<never> => {
      if (this.requestHandler === undefined) throw new UpstreamRpcError(-32601, `Method not found: ${request.method}`);
      // An UpstreamRpcError's code, message and data become the error answer as they are.
      return (await this.requestHandler(request.method, request.params as Record<string, unknown> | undefined)) as never;
    };
    conn.client.setRequestHandler(CreateMessageRequestSchema, serve);
    conn.client.setRequestHandler(ElicitRequestSchema, serve);
    conn.client.setRequestHandler(ListRootsRequestSchema, serve);
    const relay = (notification: { method: string; params?: unknown }): void => {
      if (conn.disposed) return;
      for (const listener of this.notificationListeners) {
        try {
          listener(notification.method, notification.params as Record<string, unknown> | undefined);
        } catch (error) {
          this.opts.log('error', 'notification listener threw', { upstream: this.name, error: safeDescription(error) });
        }
      }
    };
    conn.client.setNotificationHandler(LoggingMessageNotificationSchema, relay);
    conn.client.setNotificationHandler(ResourceUpdatedNotificationSchema, relay);
    conn.client.setNotificationHandler(ResourceListChangedNotificationSchema, relay);
    conn.client.setNotificationHandler(PromptListChangedNotificationSchema, relay);
  }

  private async listOn(send: Send): Promise<UpstreamTool[]> {
    const tools: UpstreamTool[] = [];
    let dropped = 0;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const request = cursor === undefined ? { method: 'tools/list' as const } : { method: 'tools/list' as const, params: { cursor } };
      const result = (await send(request)) as Record<string, unknown>;
      const listed = result['tools'];
      if (!Array.isArray(listed)) {
        this.opts.log('warn', 'upstream tools/list answer has no tools array; treating it as no tools', { upstream: this.name });
        break;
      }
      for (const tool of listed) {
        if (typeof tool === 'object' && tool !== null && typeof (tool as { name?: unknown }).name === 'string') tools.push(tool as UpstreamTool);
        else dropped++;
      }
      const next = result['nextCursor'];
      if (typeof next !== 'string' || next === '') break;
      cursor = next;
    }
    if (dropped > 0) this.opts.log('warn', 'upstream listed tools without a name; skipped', { upstream: this.name, dropped });
    return tools;
  }

  private openScope(caller: AbortSignal | Cancellation | undefined, label: string, timeoutMs: number): Scope {
    const controller = new AbortController();
    const unlink = caller === undefined ? () => {} : caller instanceof AbortSignal ? follow(caller, controller) : followCancellation(caller, controller);
    const timer =
      timeoutMs > 0
        ? setTimeout(
            () => controller.abort(new UpstreamTimeoutError(`Upstream '${this.name}' did not answer ${label} within ${timeoutMs / 1000} s`)),
            timeoutMs,
          )
        : undefined;
    this.scopes.add(controller);
    return {
      controller,
      dispose: () => {
        clearTimeout(timer);
        unlink();
        this.scopes.delete(controller);
      },
    };
  }

  private async dispose(conn: Connection, terminate: boolean): Promise<void> {
    if (conn.disposed) return;
    conn.disposed = true;
    this.connections.delete(conn);
    if (terminate) {
      try {
        await conn.transport.terminateSession();
      } catch (error) {
        this.opts.log('warn', 'upstream session DELETE failed', { upstream: this.name, error: safeDescription(error) });
      }
    }
    try {
      await conn.client.close();
    } catch {
      // Best effort: the transport only aborts its own stream.
    }
  }

  /** The error a caller sees: the abort reason when its scope ended, typed errors as they are. */
  private describe(error: unknown, opSignal: AbortSignal, label: string): unknown {
    if (opSignal.aborted) return opSignal.reason;
    if (error instanceof McpError) {
      if (this.closing) return this.closedError();
      const prefix = `MCP error ${error.code}: `;
      const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      return new UpstreamRpcError(error.code, message, error.data);
    }
    if (ownError(error)) return error;
    if (error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError')) {
      return new UpstreamProtocolError(`Upstream '${this.name}' sent an unreadable answer to ${label}`);
    }
    return new Error(`Upstream '${this.name}' ${label} failed: ${safeDescription(error)}`);
  }

  /** Transport errors nobody awaits (the standalone stream, stray messages); request failures are the caller's. */
  private transportError(error: Error): void {
    if (ownError(error) || error instanceof McpError || error.name === 'AbortError') return;
    this.opts.log('warn', 'upstream transport error', { upstream: this.name, error: safeDescription(error) });
  }

  private toolsMayHaveChanged(): void {
    for (const listener of this.toolsListeners) {
      try {
        listener();
      } catch (error) {
        this.opts.log('error', 'tools-changed listener threw', { upstream: this.name, error: safeDescription(error) });
      }
    }
  }

  private warnMissingHeader(header: string): void {
    if (this.warnedMissingHeaders.has(header)) return;
    this.warnedMissingHeaders.add(header);
    this.opts.log('warn', 'no stored value for a custom header; requests go without it', { upstream: this.name, header });
  }

  private closedError(): UpstreamClosedError {
    return new UpstreamClosedError(`Upstream '${this.name}' is closed`);
  }
}

function sessionLost(error: unknown): boolean {
  return (error instanceof UpstreamHttpStatusError && (error.status === 400 || error.status === 404)) || error instanceof UpstreamConnectionError;
}

function ownError(error: unknown): boolean {
  return (
    error instanceof UpstreamHttpStatusError ||
    error instanceof UpstreamConnectionError ||
    error instanceof UpstreamCredentialError ||
    error instanceof UpstreamAuthFailedError ||
    error instanceof UpstreamNeedsAuthError ||
    error instanceof UpstreamRedirectError ||
    error instanceof UpstreamNoAnswerError ||
    error instanceof UpstreamTimeoutError ||
    error instanceof UpstreamClosedError ||
    error instanceof UpstreamProtocolError ||
    error instanceof UpstreamRpcError
  );
}

/**
 * An SDK error for diagnostics, without whatever it quotes: SDK messages embed response bodies and
 * stray JSON-RPC messages after a colon (a server can echo credentials into them).
 */
function safeDescription(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  if (ownError(error)) return error.message;
  const code = (error as { code?: unknown }).code;
  const phrase = error.message.split(':')[0]!.trim().slice(0, 120);
  return `${error.name}: ${phrase}${typeof code === 'number' || typeof code === 'string' ? ` (${String(code)})` : ''}`;
}
