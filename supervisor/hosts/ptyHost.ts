/** Supervisor-side proxy of the pty host process: lazy start, heartbeat, restart budget, event forwarding. */
import type { Client } from '../../shared/channel.js';
import { connect } from '../../shared/channel.js';
import type { Disposable } from '../../shared/disposable.js';
import { toDisposable } from '../../shared/disposable.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { PtyProtocol } from '../../shared/protocol/pty.js';
import type { PtyProtocolT } from '../../shared/protocol/pty.js';
import type { EventListener, EventOf, ResultOf } from '../../shared/protocol/defineProtocol.js';
import { type AckLimiter, OutputAcks } from './outputAcks.js';
import type { StartedWorker, WorkerStarter } from './processStarter.js';
import { Heartbeat } from './heartbeat.js';
import { RestartBudget } from './restartBudget.js';

export const PtyHostConstants = {
  /** How often the supervisor asks the host whether it is alive. */
  HEARTBEAT_INTERVAL_MS: 5_000,
  /** A host busy with floods answers late; only this long a silence means wedged. */
  HEARTBEAT_TIMEOUT_MS: 15_000,
  /** At most this many restarts inside the window; past it the host stays down until the window moves. */
  RESTART_BUDGET: 5,
  RESTART_WINDOW_MS: 60_000,
  /** A stopping host gets this long to kill its sessions before SIGKILL. */
  STOP_GRACE_MS: 2_000,
  /** A host left running gets this long to read the last frames (the records) before the supervisor exits regardless. */
  DETACH_FLUSH_MS: 5_000,
} as const;

type PtyClient = Client<PtyProtocolT>;
/** The host → supervisor events a PtyHost relays, typed from the pty protocol's schemas. */
type EventName = 'data' | 'activity' | 'exit' | 'state' | 'inputRefused' | 'parsed' | 'screenMode' | 'tombstoneDropped' | 'watcherLines';
export type PtyHostListener<E extends EventName> = EventListener<PtyProtocolT, E>;
/** Listeners stored by event; each set holds listeners of its key's type (on() is the only writer). */
type AnyListener = (data: never, payload: Uint8Array | undefined) => void;

export interface HostLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface Running {
  worker: StartedWorker;
  client: PtyClient;
  heartbeat: Heartbeat;
  acks: OutputAcks;
  expectedExit: boolean;
}

/** What a detached host still held when this supervisor adopted it. */
export type AdoptResult = ResultOf<PtyProtocolT, 'adopt'>;

export interface PtyHostTimings {
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
}

export class PtyHost implements Disposable {
  private running: Running | null = null;
  private starting: Promise<PtyClient> | null = null;
  private readonly restarts = new RestartBudget(PtyHostConstants.RESTART_BUDGET, PtyHostConstants.RESTART_WINDOW_MS);
  private readonly listeners = new Map<EventName, Set<AnyListener>>();
  private readonly exitListeners = new Set<(info: { pid: number; code: number | null; signal: string | null }) => void>();
  private readonly startListeners = new Set<(client: PtyClient) => void>();
  private readonly adoptListeners = new Set<(adopted: AdoptResult) => void>();
  private disposed = false;
  /** Holds sessions' acks back for their viewers (limitAcks); without one, output is acked once handled. */
  private ackLimiter: AckLimiter | undefined;

  private readonly timings: PtyHostTimings;

  constructor(
    private readonly starter: WorkerStarter,
    private readonly log: HostLogger,
    timings: Partial<PtyHostTimings> = {},
  ) {
    this.timings = {
      heartbeatIntervalMs: timings.heartbeatIntervalMs ?? PtyHostConstants.HEARTBEAT_INTERVAL_MS,
      heartbeatTimeoutMs: timings.heartbeatTimeoutMs ?? PtyHostConstants.HEARTBEAT_TIMEOUT_MS,
    };
  }

  get pid(): number | null {
    return this.running?.worker.pid ?? null;
  }

  /** The client if the host runs now; never starts one (for cleanup that need not happen otherwise). */
  runningClient(): PtyClient | null {
    return this.running?.client ?? null;
  }

  /** The connected client, starting the host on first use (and after a crash, within the budget). */
  client(): Promise<PtyClient> {
    if (this.disposed) return Promise.reject(new SupervisorError(ErrorCode.WORKER_EXITED, 'pty host is shut down'));
    if (this.running) return Promise.resolve(this.running.client);
    this.starting ??= this.start().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  on<E extends EventName>(event: E, fn: PtyHostListener<E>): Disposable {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as AnyListener);
    return toDisposable(() => set.delete(fn as AnyListener));
  }

  private emit<E extends EventName>(event: E, data: EventOf<PtyProtocolT, E>, payload?: Uint8Array): void {
    for (const fn of this.listeners.get(event) ?? []) (fn as PtyHostListener<E>)(data, payload);
  }

  /**
   * Lets `limiter` hold sessions' acks back (their live viewers, streaming/viewerFlow.ts), so a
   * session's producer slows to what they take; `releaseAcks` says when a session's limit rose.
   */
  limitAcks(limiter: AckLimiter): void {
    this.ackLimiter = limiter;
  }

  releaseAcks(sessionId: string): void {
    this.running?.acks.release(sessionId);
  }

  /** Fires when a running host dies unexpectedly; the owner closes the sessions it held. */
  onHostExited(fn: (info: { pid: number; code: number | null; signal: string | null }) => void): Disposable {
    this.exitListeners.add(fn);
    return toDisposable(() => this.exitListeners.delete(fn));
  }

  /**
   * Runs when a host (the first, or a replacement) is ready, before any request reaches it: what the
   * host must know before its first session (output watchers) is sent here.
   */
  onStarted(fn: (client: PtyClient) => void): Disposable {
    this.startListeners.add(fn);
    return toDisposable(() => this.startListeners.delete(fn));
  }

  /**
   * Fires once per adopted host, before any request of this supervisor reaches it: the sessions it
   * held. Their output events may come first (the owner ignores sessions it does not know yet).
   */
  onAdopted(fn: (adopted: AdoptResult) => void): Disposable {
    this.adoptListeners.add(fn);
    return toDisposable(() => this.adoptListeners.delete(fn));
  }

  private async start(): Promise<PtyClient> {
    const waitMs = this.restarts.take();
    if (waitMs !== null) {
      const waitS = Math.ceil(waitMs / 1000);
      // retry_after_s: a temporary refusal, which HTTP answers with 503 and Retry-After.
      throw new SupervisorError(ErrorCode.WORKER_EXITED, `pty host started ${this.restarts.used} times in the last minute; next try in ${waitS}s`, {
        retry_after_s: waitS,
      });
    }
    const worker = await this.starter.start();
    const client = connect(worker.transport, PtyProtocol);
    for (const event of ['activity', 'exit', 'state', 'inputRefused', 'parsed', 'screenMode', 'tombstoneDropped', 'watcherLines'] as const) {
      client.on(event, (data) => this.emit(event, data));
    }
    const acks = new OutputAcks(client, { ackLimit: (sessionId) => this.ackLimiter?.ackLimit(sessionId) ?? Number.POSITIVE_INFINITY });
    client.on('data', (data, payload) => {
      try {
        this.emit('data', data, payload);
      } finally {
        // Fanned out (viewers queue or drop on their own): the host may send this much more. Acked
        // even when a listener threw (the channel reports it): a lost ack would hold the session's
        // output for good.
        if (payload !== undefined) acks.add(data.session_id, data.offset, payload.length);
      }
    });
    const running: Running = {
      worker,
      client,
      // Checked once it is the running host (after the handshake), until it exits or is replaced.
      heartbeat: new Heartbeat({
        intervalMs: this.timings.heartbeatIntervalMs,
        timeoutMs: this.timings.heartbeatTimeoutMs,
        ping: (timeout) => client.request('ping', {}, { timeout }),
        active: () => this.running === running,
        onMissed: (err) => {
          this.log.error({ host_pid: worker.pid, err: String(err) }, 'pty host missed its heartbeat; killing it');
          worker.kill('SIGKILL');
        },
      }),
      acks,
      expectedExit: false,
    };
    void worker.exited.then(({ code, signal }) => this.onWorkerExit(running, code, signal));
    let adopted: AdoptResult | undefined;
    try {
      await client.ready;
      if (worker.adopted) adopted = await client.request('adopt', {});
    } catch (err) {
      running.expectedExit = true;
      if (!worker.adopted) {
        worker.kill('SIGKILL');
        throw err;
      }
      // A running host refused the adoption (or closed on us): another live supervisor holds it, and keeps it.
      running.heartbeat.dispose();
      worker.release?.();
      client.dispose();
      throw new SupervisorError(
        ErrorCode.WORKER_EXITED,
        `the pty host ${worker.pid} of this config dir is held by another running supervisor; refusing to adopt it (${(err as Error).message})`,
      );
    }
    if (this.disposed) {
      // Stopped while adopting: the host stays as it was, for the next supervisor.
      running.expectedExit = true;
      running.heartbeat.dispose();
      worker.release?.();
      client.dispose();
      throw new SupervisorError(ErrorCode.WORKER_EXITED, 'pty host is shut down');
    }
    this.running = running;
    if (adopted !== undefined) {
      this.log.info({ host_pid: worker.pid, sessions: adopted.sessions.length }, 'pty host adopted');
      for (const fn of this.adoptListeners) fn(adopted);
    } else this.log.info({ host_pid: worker.pid }, 'pty host started');
    for (const fn of this.startListeners) {
      try {
        fn(client);
      } catch (err) {
        this.log.error({ host_pid: worker.pid, err: String(err) }, 'pty host start listener failed');
      }
    }
    return client;
  }

  private onWorkerExit(running: Running, code: number | null, signal: string | null): void {
    running.heartbeat.dispose();
    running.client.dispose();
    if (this.running === running) this.running = null;
    if (running.expectedExit || this.disposed) return;
    this.log.error({ host_pid: running.worker.pid, code, signal }, 'pty host exited unexpectedly');
    for (const fn of this.exitListeners) fn({ pid: running.worker.pid, code, signal });
  }

  /**
   * The end of this supervisor's hold on its host (stop or detach): no new start, a host still
   * starting becomes the running one (or fails) first, and its exit is expected from here on.
   */
  private async takeForShutdown(): Promise<Running | null> {
    this.disposed = true;
    await this.starting?.catch(() => undefined);
    const running = this.running;
    this.running = null;
    if (running) {
      running.expectedExit = true;
      running.heartbeat.dispose();
    }
    return running;
  }

  /** Stops the host: closing the channel makes it kill its sessions; SIGKILL after a grace. */
  async stop(): Promise<void> {
    const running = await this.takeForShutdown();
    if (!running) return;
    running.client.dispose();
    running.worker.kill('SIGTERM');
    const timer = setTimeout(() => running.worker.kill('SIGKILL'), PtyHostConstants.STOP_GRACE_MS);
    await running.worker.exited;
    clearTimeout(timer);
  }

  /**
   * Leaves the host running with its sessions for the next supervisor to adopt: the channel closes,
   * nothing is killed. A host still starting is released too.
   */
  async detach(): Promise<void> {
    const running = await this.takeForShutdown();
    if (!running) return;
    running.worker.release?.();
    // The close ends our side after the queued frames (the last records) are written; the process
    // exits right after this resolves, which would drop what is still queued: wait until the link is
    // closed (a wedged host that reads nothing is given up on after DETACH_FLUSH_MS).
    running.client.dispose();
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      (running.worker.linkClosed ?? Promise.resolve()).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PtyHostConstants.DETACH_FLUSH_MS))),
    ]);
    clearTimeout(timer);
    if (!closed) this.log.warn({ host_pid: running.worker.pid }, 'pty host did not read the last frames in time; its sessions may miss the latest records');
    this.log.info({ host_pid: running.worker.pid }, 'pty host left running with its sessions');
  }

  dispose(): void {
    void this.stop();
  }
}
