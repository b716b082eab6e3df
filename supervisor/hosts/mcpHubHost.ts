/**
 * Supervisor-side proxy of the upstream hub worker thread (workers/mcp): starts it when the first
 * upstream is configured, keeps the pushed merged tool list (so tools/list never waits on the
 * worker once the settle gate is open), serves it secrets on a second port, and publishes statuses
 * on the event bus.
 *
 * The hub may die (an uncaught exception or process.exit in the thread, its channel closing). The
 * host holds the registered upstreams itself, so a hub that is gone loses nothing: requests in
 * flight fail at once with an error that says so, the thread is restarted within a budget with
 * every registered upstream replayed, and a save made while it is down is recorded and replayed
 * too. Past the budget, requests get WORKER_EXITED with retry_after_s (HTTP 503 + Retry-After) and
 * the hub starts again by itself when the window allows.
 *
 * A hub that is alive but wedged (a thread stuck in a synchronous loop) is found by a heartbeat: a
 * ping it does not answer in time ends its thread, and the death path above replaces it.
 */
import { MessageChannel, Worker } from 'node:worker_threads';

import type { Cancellation } from '../../shared/cancellation.js';
import { connect, serve, withPayload, type Client, type Server } from '../../shared/channel.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { toDisposable, type Disposable } from '../../shared/disposable.js';
import { RawToolResult, textEnvelope, type ToolCallOutcome } from '../../shared/mcpEnvelope.js';
import {
  HubConstants,
  HubHostProtocol,
  McpHubProtocol,
  type ForwardedMethod,
  type HubHostProtocolT,
  type McpHubProtocolT,
  type McpLogLevel,
} from '../../shared/protocol/mcpHub.js';
import type { UpstreamServerWire, UpstreamStatus } from '../../shared/protocol/upstreamServer.js';
import { messagePortTransport, workerTransport } from '../../shared/transports/messagePort.js';
import type { Transport } from '../../shared/transports/transport.js';
import type { EventBus } from '../events/eventBus.js';
import type { UpstreamToolSource } from '../mcp/upstreamTools.js';
import {
  EMPTY_LISTS,
  type ClientRequestHandler,
  type ClientRoute,
  type ForwardOptions,
  type HubLists,
  type ListKind,
  type RpcOutcome,
  type UpstreamPrimitiveSource,
} from '../mcp/upstreamPrimitives.js';
import type { ToolDefinition } from '../mcp/tools/nativeTool.js';
import type { UpstreamDiffPlan } from '../upstreams/configDiff.js';
import { UpstreamNotFoundError, type UpstreamControl } from '../upstreams/upstreamControl.js';
import type { UpstreamStatusRow } from '../upstreams/upstreamStatus.js';
import type { HostLogger } from './ptyHost.js';
import { Heartbeat } from './heartbeat.js';
import { RestartBudget } from './restartBudget.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

/** The hub's entry, by path: the supervisor never imports worker code. */
const HUB_ENTRY = new URL('../../workers/mcp/main.js', import.meta.url);

export const McpHubHostConstants = {
  /**
   * How often the supervisor asks the hub whether it is alive. The pty host's values: the hub only
   * waits on I/O and parses small JSON, so an event loop that stays silent this long is wedged, not
   * busy; a wedged hub is replaced within interval + timeout (20 s) instead of never.
   */
  HEARTBEAT_INTERVAL_MS: 5_000,
  /** A ping unanswered this long means the thread is stuck (a loop); terminate() ends even that. */
  HEARTBEAT_TIMEOUT_MS: 15_000,
  /** At most this many hub starts inside the window; past it the hub stays down until the window moves. */
  RESTART_BUDGET: 5,
  RESTART_WINDOW_MS: 60_000,
  /** A stopping hub gets this long to close its upstreams (stdio: 2 s grace, then kill) before terminate(). */
  STOP_GRACE_MS: 3_000,
} as const;

export interface McpHubHostOptions {
  version: string;
  bus: EventBus;
  log: HostLogger & { debug?(obj: object, msg: string): void };
  /** A secret for the hub (bearer token, header value), read per attempt. */
  credential(account: string): Promise<string | null>;
  /** After a 401 to `rejected`: another generation or a refreshed token (OAuth), else null. */
  refreshCredential?(upstream: string, rejected: string): Promise<string | null>;
  /** Our own TCP port, for the circular-proxy check. */
  ownPort(): number | null;
  settleTimeoutMs?: number;
  /** Test knobs passed to the worker. */
  workerData?: { healthIntervalMs?: number; minRetryMs?: { http: number; stdio: number } };
  /** Test knobs: a smaller restart budget or a shorter window than McpHubHostConstants. */
  restartBudget?: number;
  restartWindowMs?: number;
  /** Test knobs: a faster heartbeat than McpHubHostConstants. */
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
}

interface Running {
  worker: Worker;
  /** The hub channel's link, closed with the heartbeat's reason when a ping goes unanswered. */
  link: Transport;
  hub: Client<McpHubProtocolT>;
  hostServer: Server<HubHostProtocolT>;
  heartbeat: Heartbeat;
  /** The handshake is done: pings before it would count the thread's start-up as silence. */
  ready: boolean;
  expectedExit: boolean;
  /** The host has seen it go (channel closed or thread exited); set once. */
  lost: boolean;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const noop = (): void => {};

function asDefinition(tool: Record<string, unknown>): ToolDefinition {
  const description = typeof tool['description'] === 'string' ? tool['description'] : '';
  const schema =
    typeof tool['inputSchema'] === 'object' && tool['inputSchema'] !== null ? (tool['inputSchema'] as Record<string, unknown>) : { type: 'object' };
  return { ...(tool as object), name: String(tool['name']), description, inputSchema: schema };
}

/** The route fields of `call` and `request`. */
function routeParams(route: ClientRoute | undefined): { route?: string; progress_token?: string | number } {
  if (route === undefined) return {};
  return route.progressToken === undefined ? { route: route.route } : { route: route.route, progress_token: route.progressToken };
}

/** Why a request failed because its hub went away: the close reason inside CHANNEL_CLOSED, else the message. */
function lostReason(err: unknown): string {
  const inner = err instanceof SupervisorError ? (err.data as { reason?: { message?: unknown } } | undefined)?.reason?.message : undefined;
  return typeof inner === 'string' ? inner : (err as Error).message;
}

export class McpHubHost implements UpstreamControl, UpstreamToolSource, UpstreamPrimitiveSource, Disposable {
  /** The hub in service: every registered upstream has been sent to it. */
  private running: Running | null = null;
  /** A hub started and still being sent the registered upstreams; promoted to `running` once done. */
  private candidate: Running | null = null;
  /**
   * Every upstream the hub should hold, in order: the source of truth, not the hub. Replayed to each
   * new hub; a save while the hub is down lands here and reaches the next one.
   */
  private readonly registered = new Map<string, UpstreamServerWire>();
  /** Hub starts and everything that changes what it holds run one at a time, so a replay never interleaves with a save. */
  private ops: Promise<void> = Promise.resolve();
  private readonly budget: RestartBudget;
  private readonly restartWindowMs: number;
  /** Armed when the budget refused a start: the hub comes back by itself once the window allows. */
  private retryTimer: NodeJS.Timeout | null = null;
  private bootComplete = false;
  private fragment = '';
  private defs: ToolDefinition[] | null = [];
  private fragmentJson = '[]';
  private readonly changeListeners = new Set<() => void>();
  private disposed = false;

  private listsJson = '';
  private parsedLists: HubLists = EMPTY_LISTS;
  private readonly listsListeners = new Set<(changed: readonly ListKind[]) => void>();
  private readonly notificationListeners = new Set<(upstream: string, method: string, route: string | undefined, paramsJson: string) => void>();
  private clientRequestHandler: ClientRequestHandler | null = null;
  /** The last level clients asked for: a restarted hub is told again. */
  private logLevel: McpLogLevel | null = null;

  /** The settle gate: closed until boot connects settle; re-armed by a later connect. */
  private gateOpen = false;
  private readonly gateWaiters = new Set<() => void>();

  constructor(private readonly opts: McpHubHostOptions) {
    this.restartWindowMs = opts.restartWindowMs ?? McpHubHostConstants.RESTART_WINDOW_MS;
    this.budget = new RestartBudget(opts.restartBudget ?? McpHubHostConstants.RESTART_BUDGET, this.restartWindowMs);
  }

  // ---- boot ---------------------------------------------------------------------------------------

  /** Registers the saved upstreams without waiting for any handshake, then marks boot complete. */
  async boot(servers: readonly UpstreamServerWire[]): Promise<void> {
    await this.serial(async () => {
      for (const server of servers) {
        try {
          const down = await this.connectOne(server);
          if (down)
            this.opts.log.warn({ upstream: server.name, err: down.message }, 'upstream hub not running at boot: the upstream connects when it restarts');
        } catch (err) {
          this.opts.log.error({ upstream: server.name, err: (err as Error).message }, 'upstream not registered at boot');
        }
      }
      this.bootComplete = true;
      const running = this.running;
      if (!running) return this.openGate();
      // A hub that dies here is told by its successor's replay, which runs after boot completed.
      await running.hub.request('initialConnectComplete', {}).catch((err: unknown) => {
        if (!running.hub.closed) throw err;
      });
    });
  }

  // ---- UpstreamToolSource -------------------------------------------------------------------------

  listFragment(): string {
    return this.fragment;
  }

  definitions(): readonly ToolDefinition[] {
    this.defs ??= (JSON.parse(this.fragmentJson) as Array<Record<string, unknown>>).map(asDefinition);
    return this.defs;
  }

  /** Null once open (steady state never waits); else resolves on settle or after at most 3 s, which latches it open. */
  settleGate(): Promise<void> | null {
    if (this.gateOpen) return null;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.opts.log.warn({ timeout_ms: this.settleTimeout }, 'upstreams did not settle in time: serving a possibly partial tools/list');
        this.openGate();
      }, this.settleTimeout);
      this.gateWaiters.add(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Never retried on a restarted hub: the call may have run. A hub that dies under it fails it at
   * once, saying so; a hub that is down is started first (within the budget).
   */
  async call(upstream: string, tool: string, args: Record<string, unknown>, cancellation?: Cancellation, route?: ClientRoute): Promise<ToolCallOutcome> {
    if (this.disposed || !this.registered.has(upstream)) return textEnvelope({ error: `Unknown upstream '${clipClientInput(upstream)}'`, code: 'not_found' });
    let hub: Client<McpHubProtocolT> | undefined;
    try {
      hub = this.running?.hub ?? (await this.serial(() => this.hub()));
      const reply = await hub.requestWithPayload(
        'call',
        { upstream, tool, ...routeParams(route) },
        { payload: encoder.encode(JSON.stringify(args)), timeout: 2 ** 31 - 1, ...(cancellation ? { cancellation } : {}) },
      );
      return new RawToolResult(decoder.decode(reply.payload));
    } catch (err) {
      const why =
        hub?.closed && !this.disposed
          ? `the upstream hub stopped during the call (${lostReason(err)}) and is being restarted; the call was not retried`
          : (err as Error).message;
      return textEnvelope({
        error: `Upstream '${upstream}' call to '${tool}' failed: ${why}`,
        code: hub?.closed && !this.disposed ? 'unavailable' : 'bad_gateway',
      });
    }
  }

  onChanged(listener: () => void): Disposable {
    this.changeListeners.add(listener);
    return toDisposable(() => this.changeListeners.delete(listener));
  }

  // ---- UpstreamPrimitiveSource --------------------------------------------------------------------

  lists(): HubLists {
    return this.parsedLists;
  }

  onListsChanged(listener: (changed: readonly ListKind[]) => void): Disposable {
    this.listsListeners.add(listener);
    return toDisposable(() => this.listsListeners.delete(listener));
  }

  /** Like call: never retried on a restarted hub, and a hub lost under it fails it saying so. */
  async request(upstream: string, method: ForwardedMethod, paramsJson: string, options: ForwardOptions = {}): Promise<RpcOutcome> {
    if (this.disposed || !this.registered.has(upstream))
      return { error: { code: -32602, message: `Unknown upstream '${clipClientInput(upstream)}'`, data: { code: 'not_found' } } };
    let hub: Client<McpHubProtocolT> | undefined;
    try {
      hub = this.running?.hub ?? (await this.serial(() => this.hub()));
      const reply = await hub.requestWithPayload(
        'request',
        { upstream, method, ...routeParams(options.route) },
        { payload: encoder.encode(paramsJson), timeout: 2 ** 31 - 1, ...(options.cancellation ? { cancellation: options.cancellation } : {}) },
      );
      if (reply.result.error !== undefined) return { error: reply.result.error };
      return { resultJson: reply.payload ? decoder.decode(reply.payload) : '{}' };
    } catch (err) {
      const lost = hub?.closed === true && !this.disposed;
      const why = lost
        ? `the upstream hub stopped during the request (${lostReason(err)}) and is being restarted; the request was not retried`
        : (err as Error).message;
      return { error: { code: -32603, message: `Upstream '${upstream}' ${method} failed: ${why}`, data: { code: lost ? 'unavailable' : 'bad_gateway' } } };
    }
  }

  async setLogLevel(level: McpLogLevel): Promise<void> {
    this.logLevel = level;
    const hub = this.running?.hub;
    if (hub && !hub.closed) await hub.request('setLogLevel', { level }).catch(noop);
  }

  async notifyUpstreams(method: string, paramsJson?: string): Promise<void> {
    const hub = this.running?.hub;
    if (!hub || hub.closed) return;
    await hub.requestWithPayload('notifyUpstreams', { method }, paramsJson === undefined ? {} : { payload: encoder.encode(paramsJson) }).then(noop, noop);
  }

  onNotification(listener: (upstream: string, method: string, route: string | undefined, paramsJson: string) => void): Disposable {
    this.notificationListeners.add(listener);
    return toDisposable(() => this.notificationListeners.delete(listener));
  }

  setClientRequestHandler(handler: ClientRequestHandler): void {
    this.clientRequestHandler = handler;
  }

  // ---- UpstreamControl ----------------------------------------------------------------------------

  /**
   * Every removed or changed upstream goes before any connects (as apply_config_diff does): a save
   * may hand one upstream's old name to another. One refused connect does not stop the others; the
   * first refusal is reported once all were tried. A hub that is down or dies meanwhile refuses
   * nothing: the save is recorded, and this resolves once a restarted hub holds it (or rejects with
   * WORKER_EXITED saying when the hub will start with it).
   */
  async applyPlan(plan: UpstreamDiffPlan): Promise<void> {
    await this.serial(async () => {
      for (const s of plan.disconnect) await this.disconnectOne(s.name);
      for (const { before } of plan.reconnect) await this.disconnectOne(before.name);
      let refused: unknown;
      let down: SupervisorError | null = null;
      for (const s of [...plan.reconnect.map((r) => r.after), ...plan.connect]) {
        try {
          down ??= await this.connectOne(s);
        } catch (err) {
          this.opts.log.error({ upstream: s.name, err: (err as Error).message }, 'upstream not connected after a save');
          refused ??= err;
        }
      }
      if (down) await this.hub();
      if (refused !== undefined) throw refused;
    });
  }

  async reconnect(name: string): Promise<void> {
    await this.serial(async () => {
      if (!this.registered.has(name)) throw new UpstreamNotFoundError(name);
      const hub = await this.hub();
      try {
        await hub.request('reconnect', { name });
        // A reconnect is a disconnect + connect, so it re-arms the gate too.
        this.rearmGate(this.registered.get(name));
      } catch (err) {
        if (err instanceof SupervisorError && err.code === ErrorCode.UPSTREAM_NOT_FOUND) throw new UpstreamNotFoundError(name);
        if (!hub.closed) throw err;
        // It died under the request: its successor connects every upstream afresh, which is what was asked.
        await this.hub();
      }
    });
  }

  /** An OAuth flow's status change for one upstream (see McpHubProtocol `authStatus`). */
  async setAuthStatus(name: string, status: UpstreamStatus, lastError: string | null): Promise<void> {
    await this.serial(async () => {
      if (!this.registered.has(name)) throw new UpstreamNotFoundError(name);
      const hub = await this.hub();
      try {
        await hub.request('authStatus', { name, status, last_error: lastError });
      } catch (err) {
        if (err instanceof SupervisorError && err.code === ErrorCode.UPSTREAM_NOT_FOUND) throw new UpstreamNotFoundError(name);
        throw err;
      }
    });
  }

  /** A read, so asked once more of a restarted hub when the hub dies under it. */
  async status(): Promise<UpstreamStatusRow[]> {
    if (!this.running && this.registered.size === 0) return [];
    for (let attempt = 1; ; attempt++) {
      const hub = this.running?.hub ?? (await this.serial(() => this.hub()));
      try {
        return (await hub.request('status', {})).upstreams;
      } catch (err) {
        if (!hub.closed || attempt === 2) throw err;
      }
    }
  }

  async stop(): Promise<void> {
    this.disposed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.openGate();
    const hubs = [this.running, this.candidate].filter((r): r is Running => r !== null);
    this.running = null;
    this.candidate = null;
    await Promise.all(hubs.map((r) => this.shutDown(r)));
  }

  dispose(): void {
    void this.stop();
  }

  // ---- internals ----------------------------------------------------------------------------------

  /** Runs `op` after every op queued before it (each op's failure is its caller's alone). */
  private serial<T>(op: () => Promise<T>): Promise<T> {
    const result = this.ops.then(op);
    this.ops = result.then(noop, noop);
    return result;
  }

  /**
   * Registers one upstream (inside an op). A hub refusal throws and records nothing. A hub that is
   * down, or dies under the request, records it anyway (the next hub's replay connects it) and the
   * reason is returned.
   */
  private async connectOne(server: UpstreamServerWire): Promise<SupervisorError | null> {
    let hub: Client<McpHubProtocolT> | undefined;
    let down: SupervisorError | null = null;
    try {
      hub = await this.hub();
      await hub.request('connect', { server, own_port: this.opts.ownPort() });
    } catch (err) {
      const hubGone = hub?.closed === true || (err instanceof SupervisorError && err.code === ErrorCode.WORKER_EXITED);
      if (!hubGone || this.disposed) throw err;
      down = err as SupervisorError;
    }
    this.registered.set(server.name, server);
    this.rearmGate(server);
    return down;
  }

  private async disconnectOne(name: string): Promise<void> {
    if (!this.registered.delete(name) || !this.running) return;
    try {
      await this.running.hub.request('disconnect', { name });
    } catch (err) {
      // A hub that died here takes the upstream with it; its successor never hears of it.
      this.opts.log.warn({ upstream: name, err: (err as Error).message }, 'upstream disconnect failed');
    }
  }

  /**
   * The hub in service (inside an op), starting one with every registered upstream when there is
   * none. A hub that dies during its replay is replaced at once; the budget bounds how often.
   */
  private async hub(): Promise<Client<McpHubProtocolT>> {
    for (;;) {
      if (this.disposed) throw new SupervisorError(ErrorCode.WORKER_EXITED, 'the upstream hub is shut down');
      if (this.running) return this.running.hub;
      const waitMs = this.budget.take();
      if (waitMs !== null) {
        const waitS = Math.ceil(waitMs / 1000);
        this.retryLater(waitMs);
        // retry_after_s: a temporary refusal, which HTTP answers with 503 and Retry-After.
        throw new SupervisorError(
          ErrorCode.WORKER_EXITED,
          `the upstream hub stopped too often (${this.budget.used} starts in ${Math.round(this.restartWindowMs / 1000)} s); it starts again in ${waitS}s with every saved upstream`,
          { retry_after_s: waitS },
        );
      }
      const running = this.start();
      if ((await this.replay(running)) && !this.disposed) {
        this.running = running;
        return running.hub;
      }
    }
  }

  /** Sends a new hub every registered upstream; false when it died meanwhile. */
  private async replay(running: Running): Promise<boolean> {
    this.candidate = running;
    try {
      for (const server of [...this.registered.values()]) {
        // Stopped meanwhile: stop() opened the gate and shuts this hub down; nothing more goes to it.
        if (this.disposed) return false;
        try {
          await running.hub.request('connect', { server, own_port: this.opts.ownPort() });
          this.rearmGate(server);
        } catch (err) {
          if (running.hub.closed) return false;
          // A refusal a fresh hub can still give (the circular-proxy check, our port having changed).
          this.registered.delete(server.name);
          this.opts.log.error({ upstream: server.name, err: (err as Error).message }, 'upstream not re-registered after a hub restart');
        }
      }
      if (this.disposed) return false;
      if (this.bootComplete) await running.hub.request('initialConnectComplete', {}).catch(noop);
      if (this.logLevel !== null) await running.hub.request('setLogLevel', { level: this.logLevel }).catch(noop);
      return !running.hub.closed;
    } finally {
      if (this.candidate === running) this.candidate = null;
    }
  }

  /** Starts the hub again soon (queued behind any op in progress), when something is registered. */
  private restartSoon(): void {
    if (this.disposed || this.running || this.registered.size === 0) return;
    void this.serial(() => this.hub()).catch((err: unknown) => {
      if (!this.disposed) this.opts.log.error({ err: (err as Error).message }, 'upstream hub not restarted');
    });
  }

  private retryLater(waitMs: number): void {
    if (this.retryTimer) return;
    this.opts.log.error(
      { budget: this.budget.used, retry_in_ms: waitMs },
      'upstream hub restart budget exhausted; upstream tools are unavailable until it starts again',
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.restartSoon();
    }, waitMs);
    this.retryTimer.unref();
  }

  /**
   * A connect after boot re-arms the settle gate: the next tools/list waits for that
   * handshake (≤ 3 s). Not once stopped: stop() opened the gate for good.
   */
  private rearmGate(server: UpstreamServerWire | undefined): void {
    if (this.bootComplete && server?.enabled && !this.disposed) this.gateOpen = false;
  }

  private get settleTimeout(): number {
    return this.opts.settleTimeoutMs ?? HubConstants.SETTLE_TIMEOUT_MS;
  }

  private openGate(): void {
    this.gateOpen = true;
    for (const release of this.gateWaiters) release();
    this.gateWaiters.clear();
  }

  private onTools(data: { settled: boolean }, payload: Uint8Array | undefined): void {
    const json = payload ? decoder.decode(payload) : '[]';
    if (json !== this.fragmentJson) {
      this.fragmentJson = json;
      this.fragment = json.slice(1, -1);
      this.defs = null;
      for (const listener of [...this.changeListeners]) listener();
    }
    if (data.settled && this.bootComplete) this.openGate();
  }

  private onLists(changed: readonly ListKind[], payload: Uint8Array | undefined): void {
    const json = payload ? decoder.decode(payload) : '';
    if (json === this.listsJson) return;
    this.listsJson = json;
    this.parsedLists = json === '' ? EMPTY_LISTS : { ...EMPTY_LISTS, ...(JSON.parse(json) as Partial<HubLists>) };
    for (const listener of [...this.listsListeners]) listener(changed);
  }

  private start(): Running {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(HUB_ENTRY, {
      workerData: { hostPort: port2, version: this.opts.version, ...this.opts.workerData },
      transferList: [port2],
    });
    const link = workerTransport(worker);
    const hub = connect(link, McpHubProtocol);
    const hostServer = serve(messagePortTransport(port1), HubHostProtocol, {
      credential: async ({ account }) => ({ value: await this.opts.credential(account) }),
      refreshCredential: async ({ upstream, rejected }) => ({ value: (await this.opts.refreshCredential?.(upstream, rejected)) ?? null }),
      clientRequest: async ({ upstream, method, route }, ctx) => {
        const handler = this.clientRequestHandler;
        if (handler === null) return { error: { code: -32601, message: `Method not found: ${method} (no client can be asked)` } };
        const outcome = await handler(upstream, method, route, ctx.payload ? decoder.decode(ctx.payload) : '{}');
        if (outcome.error !== undefined) return { error: outcome.error };
        return withPayload({}, encoder.encode(outcome.resultJson));
      },
    });
    const timeoutMs = this.opts.heartbeatTimeoutMs ?? McpHubHostConstants.HEARTBEAT_TIMEOUT_MS;
    const running: Running = {
      worker,
      link,
      hub,
      hostServer,
      // The hub in service, or one being replayed into (a wedged candidate would hold the replay).
      // No answer in time: the link closes with that reason, so in-flight calls say why, and onLost
      // ends the thread and replaces it.
      heartbeat: new Heartbeat({
        intervalMs: this.opts.heartbeatIntervalMs ?? McpHubHostConstants.HEARTBEAT_INTERVAL_MS,
        timeoutMs,
        ping: (timeout) => hub.request('ping', {}, { timeout }),
        active: () => running.ready && !running.lost && !running.expectedExit && !hub.closed,
        onMissed: (err) => {
          this.opts.log.error({ err: (err as Error).message, timeout_ms: timeoutMs }, 'upstream hub missed its heartbeat; ending its thread');
          link.close(new SupervisorError(ErrorCode.CHANNEL_CLOSED, `the upstream hub did not answer its heartbeat within ${timeoutMs} ms (wedged)`));
          void worker.terminate().catch(noop);
        },
      }),
      ready: false,
      expectedExit: false,
      lost: false,
    };
    hub.on('tools', (data, payload) => this.onTools(data, payload));
    hub.on('status', ({ name, status, last_error }) => {
      this.opts.bus.publish('upstream-status-changed', { name, status, last_error });
      if (last_error !== null && status !== 'ready') this.opts.log.warn({ upstream: name, status, last_error }, 'upstream status changed');
      else this.opts.log.info({ upstream: name, status }, 'upstream status changed');
    });
    hub.on('log', ({ level, msg, fields }) => this.opts.log[level]({ source: 'mcp-hub', ...fields }, msg));
    hub.on('lists', ({ changed }, payload) => this.onLists(changed, payload));
    hub.on('notification', ({ upstream, method, route }, payload) => {
      const params = payload ? decoder.decode(payload) : '{}';
      for (const listener of [...this.notificationListeners]) listener(upstream, method, route, params);
    });
    worker.on('error', (err) => this.opts.log.error({ err }, 'upstream hub worker crashed'));
    // The channel closes when the thread exits (the reason carries the exit code and any uncaught
    // error) and when either side closes the link; the exit is watched too in case the link let go first.
    hub.onClose((reason) => this.onLost(running, reason.message));
    worker.once('exit', (code) => this.onLost(running, `worker exited with code ${code}`));
    // A hub that cannot read secrets is of no use; ending the thread closes the channel above with the exit's reason.
    hostServer.onClose(() => void running.worker.terminate().catch(noop));
    hub.ready.then(() => (running.ready = true), noop);
    return running;
  }

  /** The hub is gone or unusable: end its thread, and replace it unless that was asked for. */
  private onLost(running: Running, reason: string): void {
    if (running.lost) return;
    running.lost = true;
    running.heartbeat.dispose();
    // A link that closed under a live thread: end the thread, so it does not keep upstreams its successor also starts.
    running.worker.terminate().catch(noop);
    running.hub.dispose();
    running.hostServer.dispose();
    if (running.expectedExit || this.disposed) return;
    // A hub lost during its replay: the replay sees its requests fail and starts another.
    if (this.running !== running) return;
    this.running = null;
    this.opts.log.error({ reason, upstreams: this.registered.size }, 'upstream hub worker exited; restarting it');
    // Its tools, resources and prompts are gone with it until the restarted hub connects them again.
    this.onTools({ settled: false }, encoder.encode('[]'));
    this.onLists(['resources', 'prompts'], undefined);
    this.restartSoon();
  }

  /** Asks the hub to close its upstreams (stdio children closed, then killed), then ends the thread. */
  private async shutDown(running: Running): Promise<void> {
    running.expectedExit = true;
    running.heartbeat.dispose();
    try {
      await running.hub.request('shutdown', {}, { timeout: McpHubHostConstants.STOP_GRACE_MS });
    } catch {
      // A wedged or dead hub: terminate() below still ends the thread; stdio children die with their pipes.
    }
    running.hub.dispose();
    running.hostServer.dispose();
    await running.worker.terminate();
  }
}
