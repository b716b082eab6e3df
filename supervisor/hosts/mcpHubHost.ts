/**
 * Supervisor-side proxy of the upstream hub worker thread (workers/mcp): starts it when the first
 * upstream is configured, keeps the pushed merged tool list (so tools/list never waits on the
 * worker once the settle gate is open), serves it secrets on a second port, restarts it within a
 * budget (replaying every registered upstream), and publishes statuses on the event bus.
 */
import { MessageChannel, Worker } from 'node:worker_threads';

import type { Cancellation } from '../../shared/cancellation.js';
import { connect, serve, type Client, type Server } from '../../shared/channel.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { toDisposable, type Disposable } from '../../shared/disposable.js';
import { RawToolResult, textEnvelope, type ToolCallOutcome } from '../../shared/mcpEnvelope.js';
import { HubConstants, HubHostProtocol, McpHubProtocol, type HubHostProtocolT, type McpHubProtocolT } from '../../shared/protocol/mcpHub.js';
import type { UpstreamServerWire } from '../../shared/protocol/upstreamServer.js';
import { messagePortTransport, workerTransport } from '../../shared/transports/messagePort.js';
import type { EventBus } from '../events/eventBus.js';
import type { UpstreamToolSource } from '../mcp/upstreamTools.js';
import type { ToolDefinition } from '../mcp/tools/nativeTool.js';
import type { UpstreamDiffPlan } from '../upstreams/configDiff.js';
import { UpstreamNotFoundError, type UpstreamControl } from '../upstreams/upstreamControl.js';
import type { UpstreamStatusRow } from '../upstreams/upstreamStatus.js';
import type { HostLogger } from './ptyHost.js';

/** The hub's entry, by path: the supervisor never imports worker code. */
const HUB_ENTRY = new URL('../../workers/mcp/main.js', import.meta.url);

export const McpHubHostConstants = {
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
  /** Our own TCP port, for the circular-proxy check. */
  ownPort(): number | null;
  settleTimeoutMs?: number;
  /** Test knobs passed to the worker. */
  workerData?: { healthIntervalMs?: number; minRetryMs?: { http: number; stdio: number } };
}

interface Running {
  worker: Worker;
  hub: Client<McpHubProtocolT>;
  hostServer: Server<HubHostProtocolT>;
  expectedExit: boolean;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function asDefinition(tool: Record<string, unknown>): ToolDefinition {
  const description = typeof tool['description'] === 'string' ? tool['description'] : '';
  const schema = typeof tool['inputSchema'] === 'object' && tool['inputSchema'] !== null ? (tool['inputSchema'] as Record<string, unknown>) : { type: 'object' };
  return { ...(tool as object), name: String(tool['name']), description, inputSchema: schema };
}

export class McpHubHost implements UpstreamControl, UpstreamToolSource, Disposable {
  private running: Running | null = null;
  /** Everything registered on the hub, in order: replayed after a worker restart. */
  private readonly registered = new Map<string, UpstreamServerWire>();
  private bootComplete = false;
  private fragment = '';
  private defs: ToolDefinition[] | null = [];
  private fragmentJson = '[]';
  private readonly changeListeners = new Set<() => void>();
  private readonly restarts: number[] = [];
  private disposed = false;

  /** The settle gate (REFERENCE §7): closed until boot connects settle; re-armed by a later connect. */
  private gateOpen = false;
  private readonly gateWaiters = new Set<() => void>();

  constructor(private readonly opts: McpHubHostOptions) {}

  // ---- boot ---------------------------------------------------------------------------------------

  /** Registers the saved upstreams without waiting for any handshake, then marks boot complete. */
  async boot(servers: readonly UpstreamServerWire[]): Promise<void> {
    for (const server of servers) {
      try {
        await this.connectOne(server);
      } catch (err) {
        this.opts.log.error({ upstream: server.name, err: (err as Error).message }, 'upstream not registered at boot');
      }
    }
    this.bootComplete = true;
    if (this.running) await this.running.hub.request('initialConnectComplete', {});
    else this.openGate();
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

  async call(upstream: string, tool: string, args: Record<string, unknown>, cancellation?: Cancellation): Promise<ToolCallOutcome> {
    if (!this.registered.has(upstream) || !this.running) return textEnvelope({ error: `Unknown upstream '${upstream}'` });
    try {
      const reply = await this.running.hub.requestWithPayload('call', { upstream, tool }, { payload: encoder.encode(JSON.stringify(args)), timeout: 2 ** 31 - 1, ...(cancellation ? { cancellation } : {}) });
      return new RawToolResult(decoder.decode(reply.payload));
    } catch (err) {
      return textEnvelope({ error: `Upstream '${upstream}' call to '${tool}' failed: ${(err as Error).message}` });
    }
  }

  onChanged(listener: () => void): Disposable {
    this.changeListeners.add(listener);
    return toDisposable(() => this.changeListeners.delete(listener));
  }

  // ---- UpstreamControl ----------------------------------------------------------------------------

  /**
   * Every removed or changed upstream goes before any connects (as apply_config_diff does): a save
   * may hand one upstream's old name to another. One refused connect does not stop the others; the
   * first refusal is reported once all were tried.
   */
  async applyPlan(plan: UpstreamDiffPlan): Promise<void> {
    for (const s of plan.disconnect) await this.disconnectOne(s.name);
    for (const { before } of plan.reconnect) await this.disconnectOne(before.name);
    let refused: unknown;
    for (const s of [...plan.reconnect.map((r) => r.after), ...plan.connect]) {
      try {
        await this.connectOne(s);
      } catch (err) {
        this.opts.log.error({ upstream: s.name, err: (err as Error).message }, 'upstream not connected after a save');
        refused ??= err;
      }
    }
    if (refused !== undefined) throw refused;
  }

  async reconnect(name: string): Promise<void> {
    if (!this.registered.has(name) || !this.running) throw new UpstreamNotFoundError(name);
    try {
      await this.running.hub.request('reconnect', { name });
    } catch (err) {
      if (err instanceof SupervisorError && err.code === ErrorCode.UPSTREAM_NOT_FOUND) throw new UpstreamNotFoundError(name);
      throw err;
    }
  }

  async status(): Promise<UpstreamStatusRow[]> {
    if (!this.running) return [];
    return (await this.running.hub.request('status', {})).upstreams;
  }

  async stop(): Promise<void> {
    this.disposed = true;
    this.openGate();
    const running = this.running;
    this.running = null;
    if (!running) return;
    running.expectedExit = true;
    try {
      await running.hub.request('shutdown', {}, { timeout: McpHubHostConstants.STOP_GRACE_MS });
    } catch {
      // A wedged hub: terminate() below still ends the thread; stdio children die with their pipes.
    }
    running.hub.dispose();
    running.hostServer.dispose();
    await running.worker.terminate();
  }

  dispose(): void {
    void this.stop();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private async connectOne(server: UpstreamServerWire): Promise<void> {
    const hub = await this.hub();
    await hub.request('connect', { server, own_port: this.opts.ownPort() });
    this.registered.set(server.name, server);
    // Connecting after boot re-arms the gate: the next tools/list waits for this handshake (≤ 3 s).
    if (this.bootComplete && server.enabled) this.gateOpen = false;
  }

  private async disconnectOne(name: string): Promise<void> {
    if (!this.registered.delete(name) || !this.running) return;
    try {
      await this.running.hub.request('disconnect', { name });
    } catch (err) {
      this.opts.log.warn({ upstream: name, err: (err as Error).message }, 'upstream disconnect failed');
    }
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

  private hub(): Promise<Client<McpHubProtocolT>> {
    if (this.disposed) return Promise.reject(new Error('the upstream hub is shut down'));
    if (this.running) return Promise.resolve(this.running.hub);
    return Promise.resolve(this.start().hub);
  }

  private start(): Running {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(HUB_ENTRY, {
      workerData: { hostPort: port2, version: this.opts.version, ...this.opts.workerData },
      transferList: [port2],
    });
    const hub = connect(workerTransport(worker), McpHubProtocol);
    const hostServer = serve(messagePortTransport(port1), HubHostProtocol, {
      credential: async ({ account }) => ({ value: await this.opts.credential(account) }),
    });
    const running: Running = { worker, hub, hostServer, expectedExit: false };
    hub.on('tools', (data, payload) => this.onTools(data, payload));
    hub.on('status', ({ name, status, last_error }) => {
      this.opts.bus.publish('upstream-status-changed', { name, status });
      if (last_error !== null && status !== 'ready') this.opts.log.warn({ upstream: name, status, last_error }, 'upstream status changed');
      else this.opts.log.info({ upstream: name, status }, 'upstream status changed');
    });
    hub.on('log', ({ level, msg, fields }) => this.opts.log[level]({ source: 'mcp-hub', ...fields }, msg));
    worker.on('error', (err) => this.opts.log.error({ err }, 'upstream hub worker crashed'));
    worker.once('exit', (code) => this.onExit(running, code));
    this.running = running;
    return running;
  }

  /** An unexpected exit: restart within the budget and register every upstream again. */
  private onExit(running: Running, code: number): void {
    running.hostServer.dispose();
    if (this.running !== running) return;
    this.running = null;
    if (running.expectedExit || this.disposed) return;
    this.opts.log.error({ code, upstreams: this.registered.size }, 'upstream hub worker exited; restarting it');
    // Its tools are gone with it until the replay below reconnects them.
    this.onTools({ settled: false }, encoder.encode('[]'));
    const now = Date.now();
    while (this.restarts.length > 0 && now - this.restarts[0]! > McpHubHostConstants.RESTART_WINDOW_MS) this.restarts.shift();
    if (this.restarts.length >= McpHubHostConstants.RESTART_BUDGET) {
      this.opts.log.error({ budget: McpHubHostConstants.RESTART_BUDGET }, 'upstream hub restart budget exhausted; upstream tools stay unavailable until the next save or reconnect');
      return;
    }
    this.restarts.push(now);
    const servers = [...this.registered.values()];
    this.registered.clear();
    void (async () => {
      for (const server of servers) await this.connectOne(server).catch((err: Error) => this.opts.log.error({ upstream: server.name, err: err.message }, 'upstream not re-registered after a hub restart'));
      if (this.running) await this.running.hub.request('initialConnectComplete', {}).catch(() => undefined);
    })();
  }
}
