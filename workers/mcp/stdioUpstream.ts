/**
 * A stdio upstream as the registry sees it (UpstreamClient), backed by a proxy-stdio pump: its own
 * Pump object hosted in the hub's thread (pumpHost.ts), reached over its own channel, that owns the
 * child process. Deadlines, teardown, the lossy stdout queue and the respawn limit live in the
 * pump; this side maps the UpstreamClient calls onto its channel, respawns the child when a call
 * or the registry asks for it (a start the pump refuses as too soon after the last spawn waits out
 * the rest of the 5 s limit and is tried again), tells the registry at once when the child ended
 * without being asked to (it crashed, was killed, or its pump went away: the registry respawns it),
 * and when the tools may have changed (the child exited, or was respawned). The child's own
 * notifications and requests arrive as the pump's `message` events: progress goes to the request
 * that put the matching `_meta.progressToken` (one of ours) into its params, other notifications to
 * the listeners, requests to the handler, whose answer goes back quoting the child that asked.
 */

import { setTimeout as sleep } from 'node:timers/promises';

import { type Client, connect } from '../../shared/channel.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { type Cancellation, cancellationOf } from '../../shared/cancellation.js';
import { signalGroup } from '../../shared/processGroup.js';
import { ProxyStdioProtocol, type ProxyStdioProtocolT, StdioLimits } from '../../shared/protocol/proxyStdio.js';
import { PROXY_CLIENT_NAME, UPSTREAM_PROTOCOL_VERSION, type UpstreamServerWire } from '../../shared/protocol/upstreamServer.js';
import { type PumpAttachment, pumpHost } from './pumpHost.js';
import {
  HUB_CLIENT_CAPABILITIES,
  type NotificationListener,
  type ProgressListener,
  type ServerRequestHandler,
  type UpstreamClient,
  type UpstreamRequestOptions,
  UpstreamRpcError,
  type UpstreamTool,
} from './upstreamClient.js';

export type StdioUpstreamLogLevel = 'info' | 'warn' | 'error';

export interface StdioUpstreamOptions {
  /** The configured server; its transport must be stdio. */
  server: UpstreamServerWire;
  /** clientInfo.version in the upstream's initialize (tuicd's version). */
  version: string;
  log: (level: StdioUpstreamLogLevel, msg: string, fields?: Record<string, unknown>) => void;
}

/** The pump's own deadline answers first; the channel's only catches a pump that never answers. */
const CHANNEL_MARGIN_MS = 5_000;
/** timeout_secs 0 means no deadline; the channel still needs one (setTimeout's ceiling). */
const NO_DEADLINE_MS = 2 ** 31 - 1;
const STATUS_TIMEOUT_MS = 5_000;
/** A start refused as too soon is tried again after the rest of the limit; a refusal this many times running is the start's failure. */
const MAX_START_ATTEMPTS = 3;
/** Timers may fire a millisecond before Date.now() says the limit is over. */
const RESPAWN_WAIT_MARGIN_MS = 20;

type StdioTransport = Extract<UpstreamServerWire['transport'], { type: 'stdio' }>;

export class StdioUpstream implements UpstreamClient {
  private readonly name: string;
  private readonly transport: StdioTransport;
  private readonly timeoutMs: number;
  private attachment: PumpAttachment | undefined;
  private client: Client<ProxyStdioProtocolT> | undefined;
  private running = false;
  private childPid: number | null = null;
  private started = false;
  private starting: Promise<UpstreamTool[]> | undefined;
  private closing: Promise<void> | undefined;
  private attaching: Promise<Client<ProxyStdioProtocolT>> | undefined;
  /** Aborted by close(): a start waiting out the respawn limit stops waiting. */
  private readonly closed = new AbortController();
  /** Why the child ended while a start was in flight; reported as lost if that start fails. */
  private lostDuringStart: string | undefined;
  private readonly toolsListeners = new Set<() => void>();
  private readonly lostListeners = new Set<(reason: string) => void>();
  private readonly notificationListeners = new Set<NotificationListener>();
  private requestHandler: ServerRequestHandler | undefined;
  private serverCapabilities: Record<string, unknown> = {};
  /** Requests waiting for progress, by the token we put into their `_meta`. */
  private readonly progress = new Map<string, ProgressListener>();
  private nextProgressToken = 0;

  constructor(private readonly options: StdioUpstreamOptions) {
    const { server } = options;
    if (server.transport.type !== 'stdio') throw new TypeError(`StdioUpstream: upstream '${server.name}' has transport '${server.transport.type}', not stdio`);
    this.name = server.name;
    this.transport = server.transport;
    this.timeoutMs = server.timeout_secs * 1000;
  }

  get pid(): number | null {
    return this.running ? this.childPid : null;
  }

  connect(signal?: AbortSignal): Promise<UpstreamTool[]> {
    return this.start(signal);
  }

  async listTools(signal?: AbortSignal): Promise<UpstreamTool[]> {
    return this.toTools(await this.call('tools/list', undefined, signal && cancellationOf(signal)));
  }

  callTool(name: string, args: Record<string, unknown>, cancellation?: Cancellation | AbortSignal, onProgress?: ProgressListener): Promise<unknown> {
    const params = { name, arguments: args };
    const given = cancellation instanceof AbortSignal ? cancellationOf(cancellation) : cancellation;
    return onProgress === undefined ? this.call('tools/call', params, given) : this.callWithProgress('tools/call', params, given, onProgress);
  }

  get capabilities(): Record<string, unknown> {
    return this.serverCapabilities;
  }

  request(method: string, params: Record<string, unknown> | undefined, options: UpstreamRequestOptions = {}): Promise<unknown> {
    const { cancellation: given, onProgress } = options;
    const cancellation = given instanceof AbortSignal ? cancellationOf(given) : given;
    return onProgress === undefined ? this.call(method, params, cancellation) : this.callWithProgress(method, params, cancellation, onProgress);
  }

  /** The exchange with one of our tokens in `_meta.progressToken`; the child's progress for it goes to `onProgress` until it ends. */
  private async callWithProgress(
    method: string,
    params: Record<string, unknown> | undefined,
    cancellation: Cancellation | undefined,
    onProgress: ProgressListener,
  ): Promise<unknown> {
    const token = `tuicd-${++this.nextProgressToken}`;
    this.progress.set(token, onProgress);
    const meta = { ...(params?.['_meta'] as Record<string, unknown> | undefined), progressToken: token };
    try {
      return await this.call(method, { ...params, _meta: meta }, cancellation);
    } finally {
      this.progress.delete(token);
    }
  }

  /** To the running child only: a notification is no reason to spawn one. */
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    const client = this.client;
    if (this.closing !== undefined || !this.running || client === undefined || client.closed) throw new Error(`Upstream '${this.name}' is not running`);
    await client.request(
      'notify',
      { method },
      { timeout: STATUS_TIMEOUT_MS, ...(params === undefined ? {} : { payload: Buffer.from(JSON.stringify(params)) }) },
    );
  }

  onNotification(listener: NotificationListener): void {
    this.notificationListeners.add(listener);
  }

  setRequestHandler(handler: ServerRequestHandler): void {
    this.requestHandler = handler;
  }

  /** Stdio liveness: null while the child runs; throws when it does not. */
  async healthCheck(signal?: AbortSignal): Promise<UpstreamTool[] | null> {
    if (this.closing !== undefined || this.client === undefined || this.client.closed) throw new Error(`Upstream '${this.name}' is not running`);
    const status = await this.client.request('status', {}, { timeout: STATUS_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    if (!status.alive) throw new Error(`Upstream '${this.name}' process is not running`);
    return null;
  }

  onToolsMayHaveChanged(listener: () => void): void {
    this.toolsListeners.add(listener);
  }

  onConnectionLost(listener: (reason: string) => void): void {
    this.lostListeners.add(listener);
  }

  /** Shuts the child down (stdin closed, 2 s, group SIGKILL), then releases its pump. Idempotent. */
  close(): Promise<void> {
    if (this.closing === undefined) {
      this.closing = this.shutdownPump();
      this.closed.abort();
    }
    return this.closing;
  }

  /**
   * Spawns (or respawns) the child through the pump; concurrent callers share one start. A child
   * that ended while a start was in flight is not news while that start may still replace it; if
   * the start fails, the loss is reported then.
   */
  private start(signal?: AbortSignal): Promise<UpstreamTool[]> {
    if (this.closing !== undefined) return Promise.reject(new Error(`Upstream '${this.name}' is closed`));
    this.starting ??= this.runStart(signal)
      .then(
        (tools) => {
          this.lostDuringStart = undefined;
          return tools;
        },
        (err: unknown) => {
          const lost = this.lostDuringStart;
          this.lostDuringStart = undefined;
          if (lost !== undefined && this.closing === undefined && !this.running) this.connectionLost(lost);
          throw err;
        },
      )
      .finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async runStart(signal: AbortSignal | undefined): Promise<UpstreamTool[]> {
    const reply = await this.startChild(signal);
    this.running = true;
    this.childPid = reply.result.pid;
    this.serverCapabilities = reply.result.capabilities;
    const respawned = this.started;
    this.started = true;
    this.options.log('info', `Upstream '${this.name}' ${respawned ? 'respawned' : 'started'} (pid ${reply.result.pid})`, {
      upstream: this.name,
      pid: reply.result.pid,
      server_name: reply.result.server_name,
    });
    const tools = this.toTools(parsePayload(reply.payload, []));
    if (respawned) this.toolsMayHaveChanged();
    return tools;
  }

  /** The pump's `start`; a refusal as too soon after the last spawn waits out the rest of the limit, then tries again. */
  private async startChild(signal: AbortSignal | undefined) {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pump();
      if (this.closing !== undefined) throw new Error(`Upstream '${this.name}' is closed`);
      try {
        return await this.sendStart(client, signal);
      } catch (err) {
        const waitMs = respawnWaitMs(err);
        if (waitMs === undefined || attempt >= MAX_START_ATTEMPTS) throw err;
        this.options.log('info', `Upstream '${this.name}' respawns in ${waitMs}ms (at most one spawn per ${StdioLimits.MIN_RESPAWN_INTERVAL_MS}ms)`, {
          upstream: this.name,
          wait_ms: waitMs,
        });
        await this.pause(waitMs + RESPAWN_WAIT_MARGIN_MS, signal);
      }
    }
  }

  /** Resolves after `ms`; rejects when the upstream is closed or `signal` aborts meanwhile. */
  private async pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: signal === undefined ? this.closed.signal : AbortSignal.any([this.closed.signal, signal]) });
    } catch (err) {
      throw this.closing !== undefined ? new Error(`Upstream '${this.name}' is closed`) : (signal?.reason ?? err);
    }
  }

  private sendStart(client: Client<ProxyStdioProtocolT>, signal: AbortSignal | undefined) {
    const { command, args, env, cwd } = this.transport;
    const budget = this.timeoutMs > 0 ? 2 * this.timeoutMs + StdioLimits.SHUTDOWN_GRACE_MS + CHANNEL_MARGIN_MS : NO_DEADLINE_MS;
    const params = {
      name: this.name,
      command,
      args,
      env,
      ...(cwd !== undefined ? { cwd } : {}),
      timeout_ms: this.timeoutMs,
      protocol_version: UPSTREAM_PROTOCOL_VERSION,
      client_name: PROXY_CLIENT_NAME,
      client_version: this.options.version,
      capabilities: HUB_CLIENT_CAPABILITIES,
    };
    return this.pumpCall('start', () => client.requestWithPayload('start', params, { timeout: budget, ...(signal ? { signal } : {}) }));
  }

  /**
   * One JSON-RPC exchange; a child that is not running is respawned first. If it died before
   * the exit news arrived, the pump refuses without sending anything, and that one is retried.
   */
  private async call(method: string, params: unknown, cancellation?: Cancellation): Promise<unknown> {
    const payload = params === undefined ? undefined : Buffer.from(JSON.stringify(params));
    for (let attempt = 0; ; attempt++) {
      if (this.closing !== undefined) throw new Error(`Upstream '${this.name}' is closed`);
      // Not the caller's signal: a respawn shared by concurrent callers must not die with one of them.
      if (!this.running) await this.start();
      try {
        return await this.rpc(method, payload, cancellation);
      } catch (err) {
        if (attempt > 0 || !isNotRunning(err)) throw err;
        this.running = false;
      }
    }
  }

  private async rpc(method: string, payload: Uint8Array | undefined, cancellation: Cancellation | undefined): Promise<unknown> {
    const timeout = this.timeoutMs > 0 ? this.timeoutMs + CHANNEL_MARGIN_MS : NO_DEADLINE_MS;
    const client = this.client !== undefined && !this.client.closed ? this.client : await this.pump();
    const reply = await this.pumpCall(method, () =>
      client.requestWithPayload('rpc', { method }, { timeout, ...(payload ? { payload } : {}), ...(cancellation ? { cancellation } : {}) }),
    );
    const error = reply.result.error;
    if (error !== undefined) throw new UpstreamRpcError(error.code, error.message, error.data);
    return parsePayload(reply.payload, null);
  }

  /** A request to the pump; its link closing under it is named as such, not as a bare channel close. */
  private async pumpCall<T>(what: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      if (!(err instanceof SupervisorError) || err.code !== ErrorCode.CHANNEL_CLOSED || this.closing !== undefined) throw err;
      throw new SupervisorError(ErrorCode.CHANNEL_CLOSED, `Upstream '${this.name}': the stdio pump ended while '${what}' was pending (${err.message})`, {
        upstream: this.name,
        reason: 'pump_ended',
      });
    }
  }

  /** The channel to this upstream's pump, attached on first use (and again if its link closed). */
  private async pump(): Promise<Client<ProxyStdioProtocolT>> {
    if (this.client !== undefined && !this.client.closed) return this.client;
    this.attaching ??= this.attachPump().finally(() => (this.attaching = undefined));
    return this.attaching;
  }

  private async attachPump(): Promise<Client<ProxyStdioProtocolT>> {
    const attachment = await pumpHost.attach();
    // Closed while the host module loaded: a pump attached now would start a child nobody stops.
    if (this.closing !== undefined) {
      attachment.release();
      throw new Error(`Upstream '${this.name}' is closed`);
    }
    const client = connect(attachment.transport, ProxyStdioProtocol);
    const fields = { upstream: this.name };
    client.on('stderr', ({ line }) => this.options.log('info', `[${this.name} stderr] ${line}`, { ...fields, stream: 'stderr' }));
    client.on('log', ({ level, msg, fields: extra }) => this.options.log(level, msg, { ...fields, ...extra }));
    client.on('exited', ({ pid, code, signal, reason }) => {
      if (pid !== this.childPid) return;
      this.running = false;
      this.options.log(this.closing ? 'info' : 'warn', `Upstream '${this.name}' (pid ${pid}) ended: ${reason}`, { ...fields, pid, code, signal });
      if (this.closing === undefined) this.lost(`Upstream '${this.name}' (pid ${pid}) ended: ${reason}`);
      this.toolsMayHaveChanged();
    });
    client.on('message', ({ pid, method, id }, payload) => {
      const params = parsePayload(payload, undefined) as Record<string, unknown> | undefined;
      if (id === undefined) this.onServerNotification(method, params);
      else void this.serveRequest(client, pid, id, method, params);
    });
    client.onClose((reason) => {
      // This pump is gone either way.
      attachment.release();
      if (this.client !== client) return;
      const wasRunning = this.running;
      this.running = false;
      if (this.closing === undefined) {
        this.options.log('error', `Upstream '${this.name}': pump channel closed: ${reason.message}`, fields);
        // Nobody can reach that child through this link any more; the pump shuts it down after its grace, this is sooner.
        if (wasRunning && this.childPid !== null) signalGroup(this.childPid, 'SIGKILL');
        if (wasRunning) this.lost(`Upstream '${this.name}': its stdio pump went away (${reason.message})`);
      }
      if (wasRunning) this.toolsMayHaveChanged();
    });
    client.onError((err) => this.options.log('warn', `Upstream '${this.name}': pump channel: ${err.message}`, fields));
    this.attachment = attachment;
    this.client = client;
    return client;
  }

  private onServerNotification(method: string, params: Record<string, unknown> | undefined): void {
    if (method === 'notifications/progress') {
      const token = params?.['progressToken'];
      if (typeof token === 'string') this.progress.get(token)?.(params!);
      return;
    }
    this.tell(this.notificationListeners, 'notification', (listener) => listener(method, params));
  }

  /** The child's request, served by the handler; the answer quotes `pid` so a respawned child never gets it. */
  private async serveRequest(
    client: Client<ProxyStdioProtocolT>,
    pid: number,
    id: string | number,
    method: string,
    params: Record<string, unknown> | undefined,
  ): Promise<void> {
    let answer: { error?: { code: number; message: string; data?: unknown }; payload?: Uint8Array };
    try {
      if (this.requestHandler === undefined) throw new UpstreamRpcError(-32601, `Method not found: ${method}`);
      answer = { payload: Buffer.from(JSON.stringify((await this.requestHandler(method, params)) ?? {})) };
    } catch (err) {
      answer =
        err instanceof UpstreamRpcError
          ? { error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } }
          : { error: { code: -32603, message: (err as Error).message ?? String(err) } };
    }
    if (client.closed) return;
    try {
      await client.request(
        'answer',
        { id, pid, ...(answer.error ? { error: answer.error } : {}) },
        { timeout: STATUS_TIMEOUT_MS, ...(answer.payload ? { payload: answer.payload } : {}) },
      );
    } catch (err) {
      this.options.log('warn', `Upstream '${this.name}': answering its '${method}' failed: ${(err as Error).message}`, { upstream: this.name });
    }
  }

  private async shutdownPump(): Promise<void> {
    const { client, attachment } = this;
    if (client === undefined || attachment === undefined) return;
    try {
      if (!client.closed) await client.request('shutdown', {}, { timeout: StdioLimits.SHUTDOWN_GRACE_MS + CHANNEL_MARGIN_MS });
    } catch (err) {
      this.options.log('warn', `Upstream '${this.name}': shutdown: ${(err as Error).message}`, { upstream: this.name });
      // The pump could not do it; releasing it now would orphan the child: kill its group from here.
      if (this.running && this.childPid !== null) signalGroup(this.childPid, 'SIGKILL');
    } finally {
      this.running = false;
      client.dispose();
      attachment.release();
    }
  }

  /** The child ended unasked. A start in flight replaces it (the pump shut it down first) or fails: that start decides. */
  private lost(reason: string): void {
    if (this.starting !== undefined) this.lostDuringStart = reason;
    else this.connectionLost(reason);
  }

  private connectionLost(reason: string): void {
    this.tell(this.lostListeners, 'connection-lost', (listener) => listener(reason));
  }

  private toolsMayHaveChanged(): void {
    this.tell(this.toolsListeners, 'tools-changed', (listener) => listener());
  }

  /** Calls each listener; one that throws is logged and the rest still run. */
  private tell<L>(listeners: Iterable<L>, what: string, call: (listener: L) => void): void {
    for (const listener of listeners) {
      try {
        call(listener);
      } catch (err) {
        this.options.log('warn', `Upstream '${this.name}': ${what} listener threw: ${(err as Error).message}`, { upstream: this.name });
      }
    }
  }

  /** `tools/list`'s result (or the start payload's array) as tools; entries without a name are dropped. */
  private toTools(value: unknown): UpstreamTool[] {
    const list = Array.isArray(value) ? value : (value as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(list)) {
      this.options.log('warn', `Upstream '${this.name}' tools/list answer has no tools array; treating as no tools`, { upstream: this.name });
      return [];
    }
    const tools = list.filter((t): t is UpstreamTool => typeof t === 'object' && t !== null && typeof (t as { name?: unknown }).name === 'string');
    if (tools.length < list.length)
      this.options.log('warn', `Upstream '${this.name}' listed ${list.length - tools.length} tools without a name; ignored`, { upstream: this.name });
    return tools;
  }
}

function parsePayload(payload: Uint8Array | undefined, missing: unknown): unknown {
  if (payload === undefined) return missing;
  return JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
}

/** How long to wait before a start the pump refused as too soon after the last spawn; undefined for any other error. */
function respawnWaitMs(err: unknown): number | undefined {
  if (!(err instanceof SupervisorError)) return undefined;
  const data = err.data as { reason?: unknown; retry_after_ms?: unknown } | undefined;
  if (data?.reason !== 'respawn_rate_limit') return undefined;
  const wait = data.retry_after_ms;
  return typeof wait === 'number' && Number.isFinite(wait)
    ? Math.min(Math.max(0, wait), StdioLimits.MIN_RESPAWN_INTERVAL_MS)
    : StdioLimits.MIN_RESPAWN_INTERVAL_MS;
}

function isNotRunning(err: unknown): boolean {
  return err instanceof SupervisorError && (err.data as { reason?: unknown } | undefined)?.reason === 'not_running';
}
