/**
 * The detached pty host's side of its life without a parent: it listens on a unix socket of its own
 * (owner-only, its name in an owner-only state file), serves one supervisor at a time, and outlives
 * it. While no supervisor is attached the sessions keep running and their output keeps going into
 * the rings (each session's output is acknowledged by the host itself, so flow control never holds a
 * session that nobody reads: the 2 MiB ring keeps the newest output, older bytes are dropped as for
 * a slow viewer). The next supervisor adopts the sessions (`adopt`). Left alone with no live
 * session the host exits at once; with sessions, after the orphan timeout, ending them. Sessions that
 * ended with nobody attached are named in a note the next supervisor reads (writeEnded).
 */
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { type Server as NetServer, type Socket, createServer } from 'node:net';

import type { Server } from '../../shared/channel.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import type { EventNameOf, EventOf, HandlersOf } from '../../shared/protocol/defineProtocol.js';
import { PTY_PROTOCOL_VERSION, PtyProtocol, type PtyProtocolT } from '../../shared/protocol/pty.js';
import { type PtyHostEnded, type PtyHostState, ptyHostEndedPath } from '../../shared/ptyHostFiles.js';
import { streamTransport } from '../../shared/transports/stream.js';
import type { Transport } from '../../shared/transports/transport.js';
import type { OutputWatchers } from './outputWatchers.js';
import type { PtyEventSink, PtyService } from './ptyService.js';
import { ownString } from './ownString.js';
import { serveSupervisor } from './supervisorLink.js';

type P = PtyProtocolT;

/** How long a fresh host waits for the supervisor that started it. */
const FIRST_ATTACH_MS = 15_000;
/**
 * What a connection may ask without becoming the host's supervisor: `tuicd status` looks at an
 * orphaned host this way, and a tuicd starting meanwhile still adopts it. Anything else (a request or
 * an event) binds the connection as the supervisor, or is refused while another one holds the host.
 */
const READ_ONLY_METHODS: ReadonlySet<string> = new Set(['processes']);

export interface HostListenerOptions {
  socketPath: string;
  /** The state file naming the socket and this host (JSON, mode 0600). */
  statePath: string;
  /** How long sessions wait for a supervisor after the last one left; then they end. */
  orphanTimeoutMs: number;
  instance: string | null;
  /** Ends every session and exits; `reason` is logged (there is no supervisor to tell). */
  stop: (code: number, reason: string) => void;
  /** Set by the attached supervisor; emptied when it leaves (matches would have nowhere to go). */
  outputWatchers: OutputWatchers;
}

export class HostListener implements PtyEventSink {
  /** The attached supervisor: the connection that acted first, until it closes. */
  private server: Server<P> | null = null;
  /** The attached supervisor's link, for flush(). */
  private transport: Transport | null = null;
  /** Every open connection: the supervisor's and any that only look. */
  private readonly links = new Set<Server<P>>();
  private net: NetServer | null = null;
  private service: PtyService | undefined;
  /** The supervisors' records, by session id (opaque to the host): handed to the next one on adopt. */
  private readonly records = new Map<string, string>();
  /** Sessions whose process exited while no supervisor was attached: nobody has been told yet. */
  private readonly exitedAlone = new Set<string>();
  private orphanTimer: NodeJS.Timeout | undefined;
  /** When the sessions end unless a supervisor adopts them; a connection that only looks (status) does not move it. */
  private orphanDeadline: number | undefined;
  private closing = false;
  /** The host is ending its sessions itself (stop): their exits are no news for the next supervisor. */
  private ending = false;

  constructor(private readonly opts: HostListenerOptions) {}

  /** The sink the service emits into: the attached supervisor, or nobody (output acknowledged here). */
  emit<E extends EventNameOf<P>>(event: E, data: EventOf<P, E>, options?: { payload?: Uint8Array; flush?: boolean }): void {
    // The host let go of the session (its tombstone fell out of the budget): its record goes too.
    if (event === 'tombstoneDropped') this.records.delete((data as EventOf<P, 'tombstoneDropped'>).session_id);
    const server = this.server;
    if (server !== null && !server.closed) {
      server.emit(event, data, options);
      return;
    }
    if (event === 'data' && options?.payload !== undefined) {
      // After the service counted the bytes (it emits first, counts after).
      const id = (data as EventOf<P, 'data'>).session_id;
      const bytes = options.payload.length;
      queueMicrotask(() => this.service?.ack(id, bytes));
    } else if (event === 'exit') {
      this.exitedAlone.add((data as EventOf<P, 'exit'>).session_id);
      queueMicrotask(() => this.checkOrphan());
    }
  }

  /** Puts what was sent to the attached supervisor this turn on the wire now (Transport.flush). */
  flush(): void {
    if (this.server !== null && !this.server.closed) this.transport?.flush();
  }

  start(service: PtyService): void {
    this.service = service;
    rmSync(this.opts.socketPath, { force: true });
    const net = createServer((sock) => this.accept(sock));
    this.net = net;
    // The socket is created owner-only (no window in which another user could connect).
    const umask = process.umask(0o177);
    try {
      net.listen(this.opts.socketPath, () => {
        chmodSync(this.opts.socketPath, 0o600);
        this.writeState();
        // The supervisor that started this host connects within moments; one that died meanwhile never will.
        this.orphanTimer = setTimeout(() => this.opts.stop(0, 'pty host: no supervisor connected after the start; exiting'), FIRST_ATTACH_MS);
      });
    } finally {
      process.umask(umask);
    }
    net.on('error', (err) => this.opts.stop(1, `pty host: cannot listen on ${this.opts.socketPath}: ${err.message}`));
  }

  /**
   * Ends the sessions for `code` with nobody attached to be told: the next supervisor reads the
   * sessions and the reason from `<state>.ended.json` (0600) and closes them with that reason. The
   * sessions that exited meanwhile are named too (reason `exit`): their tombstones end with the host.
   */
  writeEnded(code: string, message: string): void {
    if (this.server !== null && !this.server.closed) return;
    const sessions: PtyHostEnded['sessions'] = this.service!.processes().sessions.map(({ session_id }) => ({ session_id }));
    for (const session_id of this.exitedAlone) sessions.push(code === 'exit' ? { session_id } : { session_id, reason: 'exit' });
    if (sessions.length === 0) return;
    const path = ptyHostEndedPath(this.opts.statePath);
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      const ended: PtyHostEnded = { reason: code, message, at_ms: Date.now(), sessions };
      writeFileSync(tmp, `${JSON.stringify(ended)}\n`, { mode: 0o600 });
      renameSync(tmp, path);
    } catch (err) {
      process.stderr.write(`pty host: cannot record the ended sessions: ${(err as Error).message}\n`);
    }
  }

  /** The host is about to end its sessions (told to stop, the orphan timeout, replaced): no exit is noted from here on. */
  markEnding(): void {
    this.ending = true;
    clearTimeout(this.orphanTimer);
  }

  /** Removes the socket and the state file (when still this host's). */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    clearTimeout(this.orphanTimer);
    for (const link of this.links) link.dispose();
    this.net?.close();
    try {
      const state = JSON.parse(readFileSync(this.opts.statePath, 'utf8')) as Partial<PtyHostState>;
      if (state.pid === process.pid) rmSync(this.opts.statePath, { force: true });
    } catch {
      // Gone already, or another host's.
    }
    rmSync(this.opts.socketPath, { force: true });
  }

  private writeState(): void {
    const state: PtyHostState = {
      pid: process.pid,
      socket: this.opts.socketPath,
      protocol_version: PTY_PROTOCOL_VERSION,
      instance: this.opts.instance,
      started_ms: Date.now(),
    };
    const tmp = `${this.opts.statePath}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
    renameSync(tmp, this.opts.statePath);
  }

  private accept(sock: Socket): void {
    if (this.closing) {
      sock.destroy();
      return;
    }
    const transport = streamTransport(sock, sock);
    const bind = (): boolean => this.bind(server, transport);
    const server: Server<P> = serveSupervisor({
      transport,
      service: this.service!,
      handlers: this.handlers(bind),
      outputWatchers: this.opts.outputWatchers,
      mayAct: bind,
      // The id is kept as long as the session: its own characters, not a slice of the decoded message.
      onRecord: (session_id, record) => this.records.set(this.records.has(session_id) ? session_id : ownString(session_id), record),
    });
    this.links.add(server);
    server.onClose(() => {
      this.links.delete(server);
      if (this.server !== server) return;
      this.server = null;
      this.transport = null;
      this.opts.outputWatchers.set([]);
      // Output sent and not yet acknowledged will never be: the sessions read on (nobody holds them).
      for (const { session_id } of this.service!.processes().sessions) this.service!.ack(session_id, Number.MAX_SAFE_INTEGER);
      this.checkOrphan();
    });
  }

  /**
   * `server` acts on the host: it becomes the attached supervisor unless another live one is; false
   * then (a second supervisor is refused, the holder keeps the host).
   */
  private bind(server: Server<P>, transport: Transport): boolean {
    if (this.server === server) return true;
    if (this.closing || server.closed || (this.server !== null && !this.server.closed)) return false;
    this.server = server;
    this.transport = transport;
    clearTimeout(this.orphanTimer);
    this.orphanTimer = undefined;
    return true;
  }

  /**
   * The service's handlers for one connection, with `adopt` completed by the records this listener
   * keeps; each request but the read-only ones binds the connection first (`bind`), or is refused.
   */
  private handlers(bind: () => boolean): HandlersOf<P> {
    const service = this.service!;
    const handlers: Record<string, (...a: unknown[]) => unknown> = {};
    for (const method of Object.keys(PtyProtocol.spec.requests)) {
      const fn = (service as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!;
      handlers[method] = fn.bind(service);
    }
    handlers['forget'] = (...a: unknown[]) => {
      const params = a[0] as { session_id: string };
      try {
        return service.forget(params);
      } finally {
        this.records.delete(params.session_id);
        this.exitedAlone.delete(params.session_id);
      }
    };
    handlers['adopt'] = () => {
      this.orphanDeadline = undefined;
      // Their exits are in the answer (tombstones): this supervisor is told.
      this.exitedAlone.clear();
      const result = service.adopt();
      const known = new Set(result.sessions.map((s) => s.session_id));
      for (const id of this.records.keys()) if (!known.has(id)) this.records.delete(id);
      for (const s of result.sessions) {
        const record = this.records.get(s.session_id);
        if (record !== undefined) s.record = record;
      }
      return result;
    };
    for (const [method, fn] of Object.entries(handlers)) {
      if (READ_ONLY_METHODS.has(method)) continue;
      handlers[method] = (...a: unknown[]) => {
        if (!bind()) throw new SupervisorError(ErrorCode.HANDLER_FAILED, `this pty host (pid ${process.pid}) is held by another running supervisor`);
        return fn(...a);
      };
    }
    return handlers as unknown as HandlersOf<P>;
  }

  /** No supervisor attached: exit now without live sessions, else after the orphan timeout. */
  private checkOrphan(): void {
    if (this.closing || this.ending || (this.server !== null && !this.server.closed)) return;
    if (this.service!.live.length === 0) {
      // The last session exited with nobody attached: noted for the next supervisor, then nothing is left to keep.
      this.writeEnded('exit', 'every session exited while no supervisor was attached');
      this.opts.stop(0, 'pty host: no supervisor and no live session left; exiting');
      return;
    }
    if (this.orphanTimer !== undefined) return;
    const now = Date.now();
    this.orphanDeadline ??= now + this.opts.orphanTimeoutMs;
    this.orphanTimer = setTimeout(
      () => {
        const seconds = Math.round(this.opts.orphanTimeoutMs / 1000);
        const message = `no supervisor adopted these sessions within services.orphan_timeout_min (${seconds >= 60 ? `${Math.round(seconds / 6) / 10} min` : `${seconds} s`})`;
        this.writeEnded('orphan_timeout', message);
        this.opts.stop(0, `pty host: ${message}; ending them`);
      },
      Math.max(0, this.orphanDeadline - now),
    );
  }
}
