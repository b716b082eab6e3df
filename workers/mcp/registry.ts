/**
 * UpstreamRegistry: every configured upstream with its client, status, cached tools, resources,
 * templates and prompts, breaker and counters; routes proxied calls and forwarded requests; runs the
 * health checker; tracks the settle state the supervisor's first tools/list waits on; relays what
 * upstreams send the client side (progress, log messages, resource updates, sampling/elicitation/
 * roots requests). Everything it tells the outside goes through `events`.
 */
import type { Cancellation } from '../../shared/cancellation.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import type { ApiErrorCode } from '../../shared/apiError.js';
import { isCallToolResult, textEnvelope } from '../../shared/mcpEnvelope.js';
import { FORWARDED_METHODS, type ForwardedMethod, HubConstants, type McpLogLevel } from '../../shared/protocol/mcpHub.js';
import { namespacedUri } from '../../shared/upstreamUris.js';
import type { UpstreamServerWire, UpstreamStatus } from '../../shared/protocol/upstreamServer.js';
import { isSelfReferential } from '../../shared/selfReference.js';
import { CircuitBreaker } from './circuitBreaker.js';
import type { BreakerOptions } from './circuitBreaker.js';
import { filterAllows, qualifiedName } from './toolNames.js';
import { UpstreamNeedsAuthError, UpstreamRpcError } from './upstreamClient.js';
import type { ProgressListener, UpstreamClient, UpstreamTool } from './upstreamClient.js';
import { EMPTY_LISTS, fetchLists, type ListCapabilities, mergeCapabilities, type UpstreamListsJson } from './upstreamLists.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

export type LogLevel = 'info' | 'warn' | 'error';

export interface RegistryEvents {
  status(name: string, status: UpstreamStatus | 'disconnected', lastError: string | null): void;
  /** The merged list or the settle state may have changed; the owner compares and publishes. */
  toolsChanged(): void;
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  /** The merged resources, templates, prompts or capabilities may have changed (mergedListsJson). */
  listsChanged?(): void;
  /** An upstream's notification for clients: progress (with `route` and the client's token), log messages, resource updates. */
  notification?(upstream: string, method: string, params: Record<string, unknown> | undefined, route: string | undefined): void;
  /**
   * An upstream's request to the client (UPSTREAM_CLIENT_METHODS), for the client request `route`
   * it is most likely serving. Resolves with the result; throws UpstreamRpcError for an error answer.
   */
  clientRequest?(upstream: string, method: string, params: Record<string, unknown> | undefined, route: string | undefined): Promise<unknown>;
}

/** What an upstream may ask the client, through the hub. */
export const UPSTREAM_CLIENT_METHODS: readonly string[] = ['sampling/createMessage', 'elicitation/create', 'roots/list'];

/** Which client request an upstream's progress and requests belong to (HubHostProtocol.clientRequest). */
export interface ClientRoute {
  route?: string | undefined;
  /** The client's `_meta.progressToken`; progress comes back with it. */
  progressToken?: string | number | undefined;
}

/** A JSON-RPC error as `request` answers it. */
export interface ForwardError {
  code: number;
  message: string;
  data?: unknown;
}

/** A forwarded request's answer: the raw result as JSON, or a JSON-RPC error. */
export type ForwardOutcome = { json: string } | { error: ForwardError };

export interface RegistryOptions {
  createClient(server: UpstreamServerWire): UpstreamClient;
  events: RegistryEvents;
  now?: () => number;
  healthIntervalMs?: number;
  breaker?: Omit<BreakerOptions, 'now'>;
  /** Shortest wait before retrying a failed connect, per transport (stdio also has the pump's 5 s respawn limit). */
  minRetryMs?: { http: number; stdio: number };
}

export interface CallOutcome {
  /** The CallToolResult as JSON: the upstream's own when valid, else the compact envelope. */
  json: string;
  /** True when the result reports a failure of the proxy or the upstream rather than the tool's own isError. */
  upstreamError: boolean;
}

interface Metrics {
  call_count: number;
  error_count: number;
  last_latency_ms: number;
}

interface Entry {
  readonly server: UpstreamServerWire;
  status: UpstreamStatus;
  client: UpstreamClient | null;
  /** Original names that passed the filter and the length limit, in upstream order. */
  toolNames: string[];
  /** The same tools serialized with their qualified names, ready to splice into tools/list. */
  toolJson: string[];
  readonly breaker: CircuitBreaker;
  readonly metrics: Metrics;
  lastError: string | null;
  /** The scope a 403 insufficient_scope asked for, until a handshake succeeds again. */
  authScope: string | null;
  /** The handshake in flight, if any; a call during `connecting` waits on it. */
  connecting: Promise<void> | null;
  /** A handshake has succeeded on this client at least once (else a probe re-runs it). */
  initialized: boolean;
  /**
   * A health check failed on this connection: the recovery probe re-runs the handshake (respawns a
   * dead stdio child, opens a new HTTP session) instead of checking again. Any success clears it,
   * so a connection a call has just proven is not torn down by a handshake.
   */
  handshakeDue: boolean;
  retryTimer: NodeJS.Timeout | null;
  removed: boolean;
  lists: UpstreamListsJson;
  /** Bumped per list fetch: a slower fetch started earlier never overwrites a newer one. */
  listsGeneration: number;
  /** Forwarded requests and calls in flight that carry a route, oldest first. */
  readonly openRoutes: Array<{ route: string }>;
  /** The route of the last request or call that carried one. */
  lastRoute: string | undefined;
  /**
   * The upstream's own URIs clients are subscribed to through the hub: a new child or session knows
   * none of them, so each handshake after the first subscribes them again.
   */
  readonly subscriptions: Set<string>;
}

/** The capability each forwarded method needs the upstream to declare (a path into its capabilities). */
const REQUIRED_CAPABILITY: Record<ForwardedMethod, readonly [string, ...string[]]> = {
  'resources/read': ['resources'],
  'resources/subscribe': ['resources', 'subscribe'],
  'resources/unsubscribe': ['resources', 'subscribe'],
  'prompts/get': ['prompts'],
  'completion/complete': ['completions'],
};

const U32_MAX = 0xffff_ffff;
const DEFAULT_MIN_RETRY_MS = { http: HubConstants.CB_BASE_MS, stdio: 5_000 };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const noop = (): void => {};

/** Whether `capabilities` holds an object (or `true`) at `path`. */
function declares(capabilities: Record<string, unknown>, path: readonly string[]): boolean {
  let at: unknown = capabilities;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return false;
    at = (at as Record<string, unknown>)[key];
  }
  return at === true || (typeof at === 'object' && at !== null);
}
/** A call the hub could not make or the upstream failed: a tool error with its code, like every other. */
const errorOutcome = (error: string, code: ApiErrorCode): CallOutcome => ({ json: JSON.stringify(textEnvelope({ error, code })), upstreamError: true });

export class UpstreamRegistry {
  private readonly entries = new Map<string, Entry>();
  private initialConnectComplete = false;
  private ownPort: number | null = null;
  private readonly health: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly minRetryMs: { http: number; stdio: number };
  /** The level logging/setLevel last asked for, applied to every upstream that declares logging. */
  private logLevel: McpLogLevel | undefined;

  constructor(private readonly opts: RegistryOptions) {
    this.now = opts.now ?? Date.now;
    this.minRetryMs = opts.minRetryMs ?? DEFAULT_MIN_RETRY_MS;
    this.health = setInterval(() => void this.runHealthChecks(), opts.healthIntervalMs ?? HubConstants.HEALTH_CHECK_INTERVAL_MS);
    this.health.unref();
  }

  /** Boot connects are registered and no enabled upstream is still in its first handshake. */
  get settled(): boolean {
    if (!this.initialConnectComplete) return false;
    for (const e of this.entries.values()) if (e.status === 'connecting') return false;
    return true;
  }

  markInitialConnectComplete(): void {
    this.initialConnectComplete = true;
    this.opts.events.toolsChanged();
  }

  /** Registers the upstream and starts its handshake in the background. */
  connect(server: UpstreamServerWire, ownPort: number | null): void {
    if (this.entries.has(server.name)) throw new Error(`Upstream '${server.name}' already registered`);
    if (ownPort !== null) this.ownPort = ownPort;
    if (server.transport.type === 'http' && this.ownPort !== null && isSelfReferential(server.transport.url, this.ownPort)) {
      throw new Error(`Upstream '${server.name}' points to TUIC itself — circular proxy`);
    }
    const entry: Entry = {
      server,
      status: server.enabled ? 'connecting' : 'disabled',
      client: null,
      toolNames: [],
      toolJson: [],
      breaker: new CircuitBreaker({ ...this.opts.breaker, now: this.now }),
      metrics: { call_count: 0, error_count: 0, last_latency_ms: 0 },
      lastError: null,
      authScope: null,
      connecting: null,
      initialized: false,
      handshakeDue: false,
      retryTimer: null,
      removed: false,
      lists: EMPTY_LISTS,
      listsGeneration: 0,
      openRoutes: [],
      lastRoute: undefined,
      subscriptions: new Set(),
    };
    this.entries.set(server.name, entry);
    this.opts.events.status(server.name, entry.status, null);
    if (!server.enabled) return;
    entry.client = this.opts.createClient(server);
    entry.client.onToolsMayHaveChanged?.(() => {
      void this.refreshTools(entry);
      // A new session or child: its lists may differ and it knows no log level yet.
      void this.afterHandshake(entry);
    });
    entry.client.onNotification((method, params) => this.upstreamNotification(entry, method, params));
    entry.client.setRequestHandler((method, params, route) => this.upstreamRequest(entry, method, params, route));
    entry.client.onConnectionLost?.((reason) => this.connectionLost(entry, reason));
    void this.initialize(entry);
    this.opts.events.toolsChanged();
  }

  disconnect(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) throw new SupervisorError(ErrorCode.UPSTREAM_NOT_FOUND, `Upstream '${name}' not found`);
    this.remove(entry);
    this.opts.events.status(name, 'disconnected', null);
    this.opts.events.toolsChanged();
    this.opts.events.listsChanged?.();
  }

  /** Manual reconnect: the only way out of `failed` besides a health probe. */
  reconnect(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) throw new SupervisorError(ErrorCode.UPSTREAM_NOT_FOUND, `Upstream '${name}' not found`);
    this.opts.events.status(name, 'connecting', null);
    this.remove(entry);
    this.connect(entry.server, null);
  }

  /**
   * An OAuth flow moved the upstream (authenticating when one starts; needs_auth when it is denied,
   * fails or expires; the earlier status when it is cancelled). Calls are refused while it is
   * authenticating or needs_auth, and the health checker leaves it alone.
   */
  setAuthStatus(name: string, status: UpstreamStatus, lastError: string | null): void {
    const entry = this.entries.get(name);
    if (!entry) throw new SupervisorError(ErrorCode.UPSTREAM_NOT_FOUND, `Upstream '${name}' not found`);
    if (entry.status === status && entry.lastError === lastError) return;
    entry.lastError = lastError;
    if (entry.status === status) this.opts.events.status(name, status, lastError);
    else this.setStatus(entry, status);
  }

  /** Every merged tool, qualified, in registration order: the JSON array tools/list splices. */
  mergedToolsJson(): { json: string; count: number } {
    const parts: string[] = [];
    for (const e of this.entries.values()) if (e.status === 'ready') parts.push(...e.toolJson);
    return { json: `[${parts.join(',')}]`, count: parts.length };
  }

  /** The ready upstreams' lists merged (JSON arrays, registration order), and what they can do. */
  mergedListsJson(): { resources: string; resourceTemplates: string; prompts: string; capabilities: ListCapabilities } {
    const resources: string[] = [];
    const templates: string[] = [];
    const prompts: string[] = [];
    const declared: Array<Record<string, unknown>> = [];
    for (const e of this.entries.values()) {
      if (e.status !== 'ready' || e.client === null) continue;
      resources.push(...e.lists.resources);
      templates.push(...e.lists.resourceTemplates);
      prompts.push(...e.lists.prompts);
      declared.push(e.client.capabilities);
    }
    return {
      resources: `[${resources.join(',')}]`,
      resourceTemplates: `[${templates.join(',')}]`,
      prompts: `[${prompts.join(',')}]`,
      capabilities: mergeCapabilities(declared),
    };
  }

  /** Remembers the level and sends logging/setLevel to every ready upstream that declares logging. */
  setLogLevel(level: McpLogLevel): void {
    this.logLevel = level;
    for (const e of this.entries.values()) if (e.status === 'ready') void this.applyLogLevel(e);
  }

  /** A client notification (notifications/roots/list_changed) for every ready upstream; failures are logged. */
  notifyUpstreams(method: string, params: Record<string, unknown> | undefined): void {
    for (const e of this.entries.values()) {
      if (e.status !== 'ready' || e.client === null) continue;
      e.client
        .notify(method, params)
        .catch((err: unknown) => this.opts.events.log('warn', `${method} not delivered`, { upstream: e.server.name, error: message(err) }));
    }
  }

  /**
   * One of FORWARDED_METHODS to one upstream, refused as `call` refuses (status, breaker) but as
   * JSON-RPC errors, and when the upstream does not declare the capability. Never throws.
   */
  async forward(
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options: ClientRoute & { cancellation?: Cancellation } = {},
  ): Promise<ForwardOutcome> {
    if (!(FORWARDED_METHODS as readonly string[]).includes(method)) return { error: { code: -32601, message: `Method not found: ${clipClientInput(method)}` } };
    const entry = this.entries.get(upstream);
    if (!entry) return { error: { code: -32602, message: `Unknown upstream '${clipClientInput(upstream)}'` } };
    if (entry.status === 'connecting' && entry.connecting) await entry.connecting;
    const refusal = this.refusal(entry);
    // The OAuth refusal is a JSON-RPC error already (for the tool envelope): its message is the reason.
    if (refusal !== null) return { error: { code: -32603, message: refusal.code === 'unauthorized' ? JSON.parse(refusal.message).message : refusal.message } };
    const client = entry.client!;
    const needed = REQUIRED_CAPABILITY[method as ForwardedMethod];
    if (!declares(client.capabilities, needed)) {
      return { error: { code: -32601, message: `Upstream '${upstream}' does not support ${method} (no '${needed.join('.')}' capability)` } };
    }
    const started = this.now();
    entry.metrics.call_count = Math.min(U32_MAX, entry.metrics.call_count + 1);
    const close = this.openRoute(entry, options.route);
    if (method === 'resources/unsubscribe') this.noteSubscription(entry, method, params);
    try {
      const onProgress = this.progressRelay(upstream, options);
      const result = await client.request(method, params, {
        ...(options.cancellation ? { cancellation: options.cancellation } : {}),
        ...(onProgress ? { onProgress } : {}),
        ...(options.route !== undefined ? { route: options.route } : {}),
      });
      entry.metrics.last_latency_ms = Math.min(U32_MAX, this.now() - started);
      this.recordSuccess(entry);
      this.noteSubscription(entry, method, params);
      return { json: JSON.stringify(result ?? {}) };
    } catch (err) {
      entry.metrics.last_latency_ms = Math.min(U32_MAX, this.now() - started);
      entry.metrics.error_count = Math.min(U32_MAX, entry.metrics.error_count + 1);
      if (err instanceof UpstreamRpcError) {
        this.recordSuccess(entry);
        return { error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } };
      }
      if (options.cancellation?.cancelReason !== undefined) return { error: { code: -32603, message: `${method} on '${upstream}' was cancelled` } };
      this.recordFailure(entry, err);
      return { error: { code: -32603, message: `Upstream '${upstream}' ${method} failed: ${message(err)}` } };
    } finally {
      close();
    }
  }

  statusRows() {
    return [...this.entries.values()].map((e) => {
      const t = e.server.transport;
      return {
        name: e.server.name,
        status: e.status,
        transport: t.type === 'http' ? { type: 'http' as const, url: t.url } : { type: 'stdio' as const, command: t.command, args: t.args, cwd: t.cwd ?? null },
        tool_count: e.toolNames.length,
        tools: [...e.toolNames],
        metrics: { ...e.metrics },
        last_error: e.lastError,
        pid: e.client?.pid ?? null,
        ...(e.authScope !== null ? { auth_scope: e.authScope } : {}),
      };
    });
  }

  /** proxy_tool_call: routing, status, breaker and filter checks, then the upstream call. Never throws. */
  async call(upstream: string, tool: string, args: Record<string, unknown>, cancellation?: Cancellation, route: ClientRoute = {}): Promise<CallOutcome> {
    const entry = this.entries.get(upstream);
    if (!entry) return errorOutcome(`Unknown upstream '${clipClientInput(upstream)}'`, 'not_found');
    if (entry.status === 'connecting' && entry.connecting) await entry.connecting;
    const refusal = this.refusal(entry, tool);
    if (refusal !== null) return errorOutcome(refusal.message, refusal.code);
    const client = entry.client!;
    const started = this.now();
    entry.metrics.call_count = Math.min(U32_MAX, entry.metrics.call_count + 1);
    const close = this.openRoute(entry, route.route);
    try {
      const result = await client.callTool(tool, args, cancellation, this.progressRelay(upstream, route), route.route);
      entry.metrics.last_latency_ms = Math.min(U32_MAX, this.now() - started);
      this.recordSuccess(entry);
      if (isCallToolResult(result)) return { json: JSON.stringify(result), upstreamError: false };
      // Not a CallToolResult: keep what the upstream said, in the compact envelope native tools use.
      return { json: JSON.stringify(textEnvelope(result)), upstreamError: false };
    } catch (err) {
      entry.metrics.last_latency_ms = Math.min(U32_MAX, this.now() - started);
      entry.metrics.error_count = Math.min(U32_MAX, entry.metrics.error_count + 1);
      if (err instanceof UpstreamRpcError) {
        // The upstream answered: it is alive, so this is not a breaker failure.
        this.recordSuccess(entry);
        return errorOutcome(`Upstream '${upstream}' returned an error for '${tool}': ${err.message} (code ${err.code})`, 'bad_gateway');
      }
      if (cancellation?.cancelReason !== undefined) return errorOutcome(`Call to '${qualifiedName(upstream, tool)}' was cancelled`, 'timeout');
      this.recordFailure(entry, err);
      return errorOutcome(`Upstream '${upstream}' call to '${tool}' failed: ${message(err)}`, 'bad_gateway');
    } finally {
      close();
    }
  }

  async dispose(): Promise<void> {
    clearInterval(this.health);
    const closing = [...this.entries.values()].map((e) => {
      this.remove(e);
      return e.client?.close();
    });
    await Promise.allSettled(closing);
  }

  /** Why a call (or, without `tool`, a forwarded request) may not go through now, or null. */
  private refusal(entry: Entry, tool?: string): { message: string; code: ApiErrorCode } | null {
    const name = entry.server.name;
    switch (entry.status) {
      case 'disabled':
        return { message: `Upstream '${name}' is disabled`, code: 'unavailable' };
      case 'needs_auth':
      case 'authenticating':
        return {
          message: JSON.stringify({
            code: -32001,
            message: `Upstream '${name}' is awaiting OAuth authentication: authorize it with POST /mcp/upstreams/oauth/start {"name":"${name}"} and open the authorization_url it answers`,
          }),
          code: 'unauthorized',
        };
      case 'failed':
        return { message: `Upstream '${name}' has failed — restart the server or reconnect`, code: 'unavailable' };
      case 'connecting':
        return { message: `Upstream '${name}' is still connecting${entry.lastError ? ` (last error: ${entry.lastError})` : ''}`, code: 'unavailable' };
      default:
        break;
    }
    if (!entry.breaker.allows()) return { message: `Circuit open for upstream '${name}' (backoff active, will retry)`, code: 'unavailable' };
    if (tool !== undefined && !filterAllows(entry.server.tool_filter, tool))
      return { message: `Tool '${clipClientInput(tool)}' on upstream '${name}' is blocked by its allow/deny filter`, code: 'forbidden' };
    return null;
  }

  private remove(entry: Entry): void {
    entry.removed = true;
    if (entry.retryTimer) clearTimeout(entry.retryTimer);
    entry.retryTimer = null;
    if (this.entries.get(entry.server.name) === entry) this.entries.delete(entry.server.name);
    // Detached: a stdio shutdown takes up to 2 s and must not hold up a save or a reconnect.
    void entry.client
      ?.close()
      .catch((err: unknown) => this.opts.events.log('warn', 'upstream shutdown failed', { upstream: entry.server.name, error: message(err) }));
  }

  /** The handshake (a respawn: after the connection was lost, see connectionLost). */
  private initialize(entry: Entry, respawn = false): Promise<void> {
    const run = (async () => {
      try {
        const tools = await entry.client!.connect();
        if (entry.removed) return;
        entry.initialized = true;
        this.setTools(entry, tools);
        if (respawn) this.respawned(entry);
        else this.recordSuccess(entry, true);
        void this.afterHandshake(entry);
      } catch (err) {
        if (entry.removed) return;
        this.recordFailure(entry, err);
      }
    })();
    entry.connecting = run.finally(() => {
      entry.connecting = null;
      if (!entry.removed) this.opts.events.toolsChanged();
    });
    return entry.connecting;
  }

  /**
   * The connection ended on its own (a stdio child crashed or was killed, its pump went away). A
   * ready upstream leaves ready at once (`connecting` with the reason as last_error: unlisted, the
   * status event sent) and is respawned now (the stdio client waits out the pump's 5 s respawn
   * limit); calls meanwhile wait for that handshake. An open circuit keeps its backoff, and its probe
   * is a handshake now. The exit is not a breaker failure by itself (a call it failed is one, and so
   * is a respawn that fails, which then retries as any failed handshake does). Nothing happens for
   * `failed` (manual reconnect or the health probe), `disabled`, or an upstream still connecting.
   */
  private connectionLost(entry: Entry, reason: string): void {
    if (entry.removed) return;
    if (entry.status !== 'ready' && entry.status !== 'circuit_open') return;
    entry.handshakeDue = true;
    entry.lastError = reason;
    this.opts.events.log('info', 'upstream connection lost', { upstream: entry.server.name, error: reason, status: entry.status });
    if (entry.status === 'circuit_open') return this.scheduleRetry(entry);
    this.setStatus(entry, 'connecting');
    if (entry.connecting === null) void this.initialize(entry, true);
  }

  /**
   * A respawn handshake succeeded: ready again, unless a failure meanwhile opened the circuit. It
   * leaves the breaker's count alone: a child that starts is no proof that calls work (a server that
   * hangs or dies on every call must still open the circuit on the third failed call).
   */
  private respawned(entry: Entry): void {
    entry.handshakeDue = false;
    if (entry.status !== 'connecting') return;
    entry.lastError = null;
    this.setStatus(entry, 'ready');
  }

  private setStatus(entry: Entry, status: UpstreamStatus): void {
    if (entry.status === status) return;
    const wasReady = entry.status === 'ready';
    entry.status = status;
    this.opts.events.status(entry.server.name, status, entry.lastError);
    if (wasReady || status === 'ready') {
      this.opts.events.toolsChanged();
      this.opts.events.listsChanged?.();
    }
  }

  private recordSuccess(entry: Entry, handshake = false): void {
    entry.breaker.recordSuccess();
    entry.handshakeDue = false;
    if (handshake) {
      entry.lastError = null;
      entry.authScope = null;
    }
    if (entry.status === 'circuit_open' || entry.status === 'connecting' || entry.status === 'failed') {
      entry.lastError = null;
      this.setStatus(entry, 'ready');
    }
  }

  private recordFailure(entry: Entry, err: unknown): void {
    if (err instanceof UpstreamNeedsAuthError) {
      // A reason already given (a refused token refresh) says more than the 401 that follows it.
      if (entry.status !== 'needs_auth' || entry.lastError === null) entry.lastError = message(err);
      if (err.scope !== undefined) entry.authScope = err.scope;
      // NeedsOAuth does not trip the breaker; the health checker skips the entry (no retry loop).
      this.setStatus(entry, 'needs_auth');
      return;
    }
    entry.lastError = message(err);
    const state = entry.breaker.recordFailure();
    if (state === 'failed') this.setStatus(entry, 'failed');
    else if (state === 'open') this.setStatus(entry, 'circuit_open');
    if ((!entry.initialized || entry.handshakeDue) && state !== 'failed') this.scheduleRetry(entry);
    else if (state === 'open') this.scheduleRetry(entry);
  }

  /** A handshake (or probe) again once both the transport's minimum and the breaker's backoff allow. */
  private scheduleRetry(entry: Entry): void {
    if (entry.retryTimer || entry.removed) return;
    const delay = Math.max(this.minRetryMs[entry.server.transport.type], entry.breaker.remainingBackoffMs);
    entry.retryTimer = setTimeout(() => {
      entry.retryTimer = null;
      if (!entry.removed) void this.probe(entry);
    }, delay);
    entry.retryTimer.unref();
  }

  /** Health probe: the handshake when none has succeeded, else a cheap check (then the handshake if the last check failed and this one does too). */
  private async probe(entry: Entry): Promise<void> {
    if (entry.connecting) return entry.connecting;
    const client = entry.client;
    if (!client) return;
    if (!entry.initialized) return this.initialize(entry);
    try {
      const tools = await client.healthCheck();
      if (entry.removed) return;
      if (tools) this.setTools(entry, tools);
      this.recordSuccess(entry);
    } catch (err) {
      if (entry.removed) return;
      // Still down after a failed check: now the handshake. Checked first because a call may have
      // brought it back meanwhile (a stdio client restarts its child by itself), and a handshake
      // would restart the child under that call.
      if (entry.handshakeDue) return this.initialize(entry);
      // A failed check records `last_error`, opens the circuit or marks the upstream failed, and emits
      // status and tools-changed: a ready upstream is unlisted at once and the failure counts toward the breaker
      // (which blocks calls from the third). The recovery probe is a handshake, scheduled by recordFailure.
      entry.handshakeDue = true;
      const wasReady = entry.status === 'ready';
      // Loud on the way out of ready only: a failed upstream is probed every tick.
      this.opts.events.log(wasReady ? 'warn' : 'info', 'health check failed', { upstream: entry.server.name, error: message(err) });
      this.recordFailure(entry, err);
      if (entry.status === 'ready') this.setStatus(entry, 'circuit_open');
    }
  }

  private async runHealthChecks(): Promise<void> {
    const due = [...this.entries.values()].filter((e) => {
      switch (e.status) {
        case 'ready':
        case 'failed':
          return true;
        case 'circuit_open':
          return e.breaker.remainingBackoffMs === 0;
        case 'connecting':
          return e.connecting === null && e.retryTimer === null;
        default:
          return false;
      }
    });
    await Promise.allSettled(due.map((e) => this.probe(e)));
  }

  /** Tools again after the client said they may have changed (a stdio respawn). */
  private async refreshTools(entry: Entry): Promise<void> {
    if (entry.removed || !entry.client || entry.status !== 'ready') return;
    try {
      const tools = await entry.client.listTools();
      if (!entry.removed) this.setTools(entry, tools);
    } catch (err) {
      this.opts.events.log('warn', 'tools/list after a respawn failed', { upstream: entry.server.name, error: message(err) });
    }
  }

  /** After a handshake (or a new session / child): the lists again, the remembered log level, the subscriptions. */
  private async afterHandshake(entry: Entry): Promise<void> {
    if (entry.removed || entry.status !== 'ready') return;
    await Promise.all([this.refreshLists(entry), this.applyLogLevel(entry), this.resubscribe(entry)]);
  }

  private noteSubscription(entry: Entry, method: string, params: Record<string, unknown> | undefined): void {
    const uri = params?.['uri'];
    if (typeof uri !== 'string') return;
    // An unsubscribe the upstream refused still ends the client's interest: it is not sent again.
    if (method === 'resources/subscribe') entry.subscriptions.add(uri);
    else if (method === 'resources/unsubscribe') entry.subscriptions.delete(uri);
  }

  private async resubscribe(entry: Entry): Promise<void> {
    const client = entry.client;
    if (client === null || entry.subscriptions.size === 0) return;
    await Promise.all(
      [...entry.subscriptions].map((uri) =>
        client
          .request('resources/subscribe', { uri })
          .catch((err: unknown) =>
            this.opts.events.log('warn', 'resources/subscribe again after a reconnect failed', { upstream: entry.server.name, uri, error: message(err) }),
          ),
      ),
    );
  }

  private async refreshLists(entry: Entry): Promise<void> {
    const client = entry.client;
    if (entry.removed || client === null) return;
    const generation = ++entry.listsGeneration;
    const warn = (msg: string, fields: Record<string, unknown>): void => this.opts.events.log('warn', msg, fields);
    const lists = await fetchLists(entry.server.name, client, entry.lists, warn);
    if (entry.removed || generation !== entry.listsGeneration) return;
    entry.lists = lists;
    this.opts.events.listsChanged?.();
  }

  private async applyLogLevel(entry: Entry): Promise<void> {
    const level = this.logLevel;
    const client = entry.client;
    if (level === undefined || client === null || !declares(client.capabilities, ['logging'])) return;
    try {
      await client.request('logging/setLevel', { level });
    } catch (err) {
      this.opts.events.log('warn', 'logging/setLevel failed', { upstream: entry.server.name, level, error: message(err) });
    }
  }

  /** Marks a routed request or call as in flight on the upstream; returns its end. */
  private openRoute(entry: Entry, route: string | undefined): () => void {
    if (route === undefined) return noop;
    entry.lastRoute = route;
    const slot = { route };
    entry.openRoutes.push(slot);
    return () => {
      const at = entry.openRoutes.indexOf(slot);
      if (at >= 0) entry.openRoutes.splice(at, 1);
    };
  }

  /** Progress for the client that asked for it: its own token restored, on its request's route. */
  private progressRelay(upstream: string, route: ClientRoute): ProgressListener | undefined {
    const { route: to, progressToken } = route;
    if (to === undefined || progressToken === undefined) return undefined;
    return (params) => this.opts.events.notification?.(upstream, 'notifications/progress', { ...params, progressToken }, to);
  }

  private upstreamNotification(entry: Entry, method: string, params: Record<string, unknown> | undefined): void {
    if (entry.removed) return;
    const name = entry.server.name;
    switch (method) {
      case 'notifications/message':
        return this.opts.events.notification?.(name, method, params, undefined);
      case 'notifications/resources/updated': {
        const uri = params?.['uri'];
        if (typeof uri !== 'string') return;
        return this.opts.events.notification?.(name, method, { ...params, uri: namespacedUri(name, uri) }, undefined);
      }
      case 'notifications/resources/list_changed':
      case 'notifications/prompts/list_changed':
        if (entry.status === 'ready') void this.refreshLists(entry);
        return;
      case 'notifications/tools/list_changed':
        void this.refreshTools(entry);
        return;
      default:
        return;
    }
  }

  /**
   * An upstream's request to the client goes to the client request it serves: the one it arrived
   * with when the transport can tell (Streamable HTTP), else the most recently started routed
   * request or call to it still in flight (stdio names none), else the last one it served.
   */
  private upstreamRequest(entry: Entry, method: string, params: Record<string, unknown> | undefined, related?: string): Promise<unknown> {
    const ask = this.opts.events.clientRequest;
    if (!UPSTREAM_CLIENT_METHODS.includes(method) || ask === undefined) return Promise.reject(new UpstreamRpcError(-32601, `Method not found: ${method}`));
    // The transport knew which request it came with (HTTP): exact. Else (stdio) the likeliest one.
    const route = related ?? entry.openRoutes.at(-1)?.route ?? entry.lastRoute;
    return ask(entry.server.name, method, params, route);
  }

  private setTools(entry: Entry, tools: UpstreamTool[]): void {
    const names: string[] = [];
    const json: string[] = [];
    for (const tool of tools) {
      if (typeof tool?.name !== 'string' || !filterAllows(entry.server.tool_filter, tool.name)) continue;
      const qualified = qualifiedName(entry.server.name, tool.name);
      if (qualified.length > HubConstants.MAX_TOOL_NAME_LENGTH) {
        this.opts.events.log('warn', `tool '${qualified}' skipped: qualified names are limited to ${HubConstants.MAX_TOOL_NAME_LENGTH} characters`, {
          upstream: entry.server.name,
          tool: tool.name,
          length: qualified.length,
        });
        continue;
      }
      names.push(tool.name);
      json.push(JSON.stringify({ ...tool, name: qualified }));
    }
    const changed = json.join(',') !== entry.toolJson.join(',');
    entry.toolNames = names;
    entry.toolJson = json;
    if (changed && entry.status === 'ready') this.opts.events.toolsChanged();
  }
}
