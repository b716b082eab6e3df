/**
 * UpstreamRegistry: every configured upstream with its client, status, cached tools,
 * breaker and counters; routes proxied calls; runs the health checker; tracks the settle state the
 * supervisor's first tools/list waits on. Everything it tells the outside goes through `events`.
 */
import type { Cancellation } from '../../shared/cancellation.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import type { ApiErrorCode } from '../../shared/apiError.js';
import { isCallToolResult, textEnvelope } from '../../shared/mcpEnvelope.js';
import { HubConstants } from '../../shared/protocol/mcpHub.js';
import type { UpstreamServerWire, UpstreamStatus } from '../../shared/protocol/upstreamServer.js';
import { isSelfReferential } from '../../shared/selfReference.js';
import { CircuitBreaker } from './circuitBreaker.js';
import type { BreakerOptions } from './circuitBreaker.js';
import { filterAllows, qualifiedName } from './toolNames.js';
import { UpstreamNeedsAuthError, UpstreamRpcError } from './upstreamClient.js';
import type { UpstreamClient, UpstreamTool } from './upstreamClient.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

export type LogLevel = 'info' | 'warn' | 'error';

export interface RegistryEvents {
  status(name: string, status: UpstreamStatus | 'disconnected', lastError: string | null): void;
  /** The merged list or the settle state may have changed; the owner compares and publishes. */
  toolsChanged(): void;
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

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
}

const U32_MAX = 0xffff_ffff;
const DEFAULT_MIN_RETRY_MS = { http: HubConstants.CB_BASE_MS, stdio: 5_000 };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
/** A call the hub could not make or the upstream failed: a tool error with its code, like every other. */
const errorOutcome = (error: string, code: ApiErrorCode): CallOutcome => ({ json: JSON.stringify(textEnvelope({ error, code })), upstreamError: true });

export class UpstreamRegistry {
  private readonly entries = new Map<string, Entry>();
  private initialConnectComplete = false;
  private ownPort: number | null = null;
  private readonly health: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly minRetryMs: { http: number; stdio: number };

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
    };
    this.entries.set(server.name, entry);
    this.opts.events.status(server.name, entry.status, null);
    if (!server.enabled) return;
    entry.client = this.opts.createClient(server);
    entry.client.onToolsMayHaveChanged?.(() => void this.refreshTools(entry));
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
  async call(upstream: string, tool: string, args: Record<string, unknown>, cancellation?: Cancellation): Promise<CallOutcome> {
    const entry = this.entries.get(upstream);
    if (!entry) return errorOutcome(`Unknown upstream '${clipClientInput(upstream)}'`, 'not_found');
    if (entry.status === 'connecting' && entry.connecting) await entry.connecting;
    const refusal = this.refusal(entry, tool);
    if (refusal !== null) return errorOutcome(refusal.message, refusal.code);
    const client = entry.client!;
    const started = this.now();
    entry.metrics.call_count = Math.min(U32_MAX, entry.metrics.call_count + 1);
    try {
      const result = await client.callTool(tool, args, cancellation);
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

  /** Why a call may not go through now, or null. */
  private refusal(entry: Entry, tool: string): { message: string; code: ApiErrorCode } | null {
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
    if (!filterAllows(entry.server.tool_filter, tool))
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
    if (wasReady || status === 'ready') this.opts.events.toolsChanged();
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
