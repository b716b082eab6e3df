/**
 * The pty host's request handlers: a map of sessions keyed by the supervisor's session id, every
 * method taking the id first, and the sessions' output/exit/state forwarded as channel events.
 */

import type { Disposable } from '../../shared/disposable.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { type HandlerContext, type HandlersOf, type ParamsOf, type ResultOf, withPayload } from '../../shared/protocol/defineProtocol.js';
import type { EventNameOf, EventOf } from '../../shared/protocol/defineProtocol.js';
import { PtyConstants, type PtyProtocolT } from '../../shared/protocol/pty.js';
import { mkdirSync } from 'node:fs';

import { CaptureWriter } from './captureWriter.js';
import { ownString } from './ownString.js';
import type { ParsedEvent } from '../../shared/protocol/parsedEvents.js';
import { type ExitInfo, PTY_SPAWN_FAILED, PtySession, PtySessionConstants, type PtySessionObserver, type ShellState, type TextLog } from './ptySession.js';
import { Tombstone } from './tombstone.js';

type P = PtyProtocolT;
type Params<M extends keyof HandlersOf<P>> = ParamsOf<P, M>;
type Result<M extends keyof HandlersOf<P>> = ResultOf<P, M>;

/** Where events go: the channel server (structurally), or a recorder in tests. */
export interface PtyEventSink {
  emit<E extends EventNameOf<P>>(event: E, data: EventOf<P, E>, options?: { payload?: Uint8Array; flush?: boolean }): void;
}

export interface PtyServiceOptions {
  /** Builds each session's text log; absent, readLog answers with an empty log. */
  createTextLog?: (sessionId: string) => TextLog;
  /** What all tombstones together may hold (default PtyConstants.TOMBSTONE_BUDGET_BYTES). */
  tombstoneBudgetBytes?: number;
  /** Told what ended sessions and dropped tombstones free, and of each spawn's garbage, to collect once the host is idle. */
  idleGc?: { freed(bytes: number): void; touched(): void };
  /** The host's event-loop delay p99 (ms), for `loopDelay`; absent, 0 (a service run inside a test). */
  loopDelayP99Ms?: () => number;
}

const OK = Object.freeze({});

/**
 * An unwatched session's `activity` notices leave at most once per this window: the first batch
 * after a quiet window at once (a submit waiting for the echo of its Enter sees it), the rest of
 * the window's batches in one notice at its end. 500 sessions printing every 100 ms send 2,000
 * notices a second instead of 5,000.
 */
export const ACTIVITY_WINDOW_MS = 250;

export class PtyService implements HandlersOf<P>, Disposable, PtySessionObserver {
  private readonly sessions = new Map<string, PtySession>();
  /** Output sent per session and not yet acknowledged by the supervisor (PtyConstants.UNACKED_OUTPUT_BYTES). */
  private readonly unacked = new Map<string, number>();
  /**
   * Live sessions whose bytes no one on the supervisor needs (no viewer): their output leaves as
   * `activity` notices, without the payload and owing no ack (the `watch` event).
   */
  private readonly unwatched = new Set<string>();
  /** Unwatched sessions' batches held for the end of the window (ACTIVITY_WINDOW_MS), and when each last sent a notice. */
  private readonly pendingActivity = new Map<string, { offset: number; bytes: number }>();
  private readonly activitySentAt = new Map<string, number>();
  private activityTimer: NodeJS.Timeout | undefined;
  /** Raw capture (diagnostics): off by default; `filter` null = every session, later ones included. */
  private captureState: { enabled: boolean; filter: string | null; dir: string | null } = { enabled: false, filter: null, dir: null };
  private readonly captures = new Map<string, CaptureWriter>();
  /** Exited sessions, oldest first (a Map keeps insertion order): what their reads still answer from. */
  private readonly closed = new Map<string, Tombstone>();
  private tombstoneBytes = 0;
  /**
   * Parser events not sent yet, per session. The text stage runs after a batch has left, so its
   * events would leave alone, a write (and a wake-up of the supervisor) of their own per batch: they
   * wait for the session's next frame and leave in its write, or leave together at the end of one
   * coalescing window when no frame comes.
   */
  private readonly parsedQueue = new Map<string, ParsedEvent[]>();
  private parsedTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly events: PtyEventSink,
    private readonly options: PtyServiceOptions = {},
  ) {}

  ping(): Result<'ping'> {
    return { pid: process.pid };
  }

  spawn(params: Params<'spawn'>): Result<'spawn'> {
    // Kept for the session's life (map keys, every event), so not a slice of this request.
    const id = ownString(params.session_id);
    if (this.sessions.has(id)) throw new SupervisorError(PTY_SPAWN_FAILED, `session '${id}' already exists in this pty host`, { session_id: id });
    // An id the supervisor forgot may come back: its old tombstone must not answer for the new session.
    const stale = this.closed.get(id);
    if (stale !== undefined) this.dropTombstone(id, stale);
    const createTextLog = this.options.createTextLog;
    // Built on the session's first output or read (PtySession.makeTextLog).
    const session = PtySession.spawn(params, createTextLog === undefined ? undefined : () => createTextLog(id));
    this.sessions.set(id, session);
    this.options.idleGc?.touched();
    this.unacked.set(id, 0);
    if (params.unwatched === true) this.unwatched.add(id);
    // This service hears every session's events itself (the session-…  methods), keyed by id.
    session.observe(this, id);
    if (this.captureState.enabled && (this.captureState.filter === null || this.captureState.filter === id)) this.startCapture(id, session);
    return { pid: session.pid, shell: session.shell };
  }

  /** A session's batch. Payloads are handed to the transport as they are: the coalescer never reuses a batch. */
  sessionData(session: PtySession, payload: Uint8Array, offset: number, first: boolean): void {
    const id = session.key;
    this.sendParsed(id);
    if (this.unwatched.has(id)) {
      this.noteActivity(id, offset, payload.length, first);
      return;
    }
    this.sendActivity(id);
    this.events.emit('data', { session_id: id, offset }, { payload, flush: first });
    const unacked = (this.unacked.get(id) ?? 0) + payload.length;
    this.unacked.set(id, unacked);
    if (unacked > PtyConstants.UNACKED_OUTPUT_BYTES) session.holdOutput(true);
  }

  // Every other event of a session leaves after the parser events found before it.

  sessionState(session: PtySession, shell_state: ShellState): void {
    this.sendParsed(session.key);
    this.sendActivity(session.key);
    this.events.emit('state', { session_id: session.key, shell_state });
  }

  sessionParsed(session: PtySession, events: ParsedEvent[]): void {
    this.queueParsed(session.key, events);
  }

  sessionAltScreen(session: PtySession, alt_screen: boolean): void {
    this.sendParsed(session.key);
    this.sendActivity(session.key);
    this.events.emit('screenMode', { session_id: session.key, alt_screen });
  }

  sessionExit(session: PtySession, info: ExitInfo): void {
    const id = session.key;
    this.sendParsed(id);
    this.sendActivity(id);
    this.events.emit('exit', { session_id: id, ...info });
    this.entomb(id, session);
  }

  /**
   * A viewer's keystrokes (the `input` event): a session that closed meanwhile drops them, like a
   * closed terminal. Refused ones are reported with the event's `from` tag (no reply to carry it).
   */
  input(sessionId: string, payload: Uint8Array | undefined, from: number | undefined): void {
    const session = this.sessions.get(sessionId);
    if (payload === undefined || session === undefined || session.write(payload)) return;
    this.events.emit('inputRefused', { session_id: sessionId, ...(from === undefined ? {} : { from }), backlog_bytes: session.inputBacklogBytes() });
  }

  /** Whether the supervisor needs a live session's bytes from the next batch on (`watch`); unknown sessions are gone already. */
  watch(sessionId: string, watched: boolean): void {
    if (!this.sessions.has(sessionId)) return;
    if (watched) this.unwatched.delete(sessionId);
    else this.unwatched.add(sessionId);
  }

  /** The supervisor detected a (different) agent in the session's foreground; unknown sessions are gone already. */
  setAgent(sessionId: string, agentType: string | null): void {
    this.sessions.get(sessionId)?.setAgent(agentType);
  }

  write(params: Params<'write'>, ctx: HandlerContext): Result<'write'> {
    const session = this.terminal(params.session_id);
    if (session !== undefined && ctx.payload !== undefined && !session.write(ctx.payload)) {
      const backlog = session.inputBacklogBytes();
      throw new SupervisorError(
        ErrorCode.INPUT_BACKLOG_FULL,
        `session ${params.session_id} has ${backlog} bytes of input its program has not read yet (limit ${PtyConstants.INPUT_BACKLOG_BYTES}); the write was refused`,
        { backlog_bytes: backlog },
      );
    }
    return OK;
  }

  resize(params: Params<'resize'>): Result<'resize'> {
    this.terminal(params.session_id)?.resize(params.rows, params.cols);
    return OK;
  }

  pause(params: Params<'pause'>): Result<'pause'> {
    this.terminal(params.session_id)?.pause();
    return OK;
  }

  resume(params: Params<'resume'>): Result<'resume'> {
    this.terminal(params.session_id)?.resume();
    return OK;
  }

  kill(params: Params<'kill'>): Result<'kill'> {
    this.terminal(params.session_id)?.kill(params.signal);
    return OK;
  }

  readRaw(params: Params<'readRaw'>) {
    const { start, total_written, bytes } = this.readable(params.session_id).readRaw(params);
    return withPayload<Result<'readRaw'>>({ start, total_written }, bytes);
  }

  readLog(params: Params<'readLog'>): Result<'readLog'> {
    return this.readable(params.session_id).readLog(params);
  }

  readScreen(params: Params<'readScreen'>): Result<'readScreen'> {
    return this.readable(params.session_id).readScreen();
  }

  /** Live sessions only: a tombstone keeps its final rows, not the grid the questions need. */
  screenQuery(params: Params<'screenQuery'>): Result<'screenQuery'> {
    const session = this.terminal(params.session_id);
    if (session === undefined)
      throw new SupervisorError(ErrorCode.PTY_NOT_FOUND, `session '${params.session_id}' has exited`, { session_id: params.session_id });
    return session.screenQuery(params.query);
  }

  /** The supervisor handled `bytes` more of a session's output: below half the window, reading resumes. */
  ack(sessionId: string, bytes: number): void {
    const session = this.sessions.get(sessionId);
    // A session forgotten meanwhile, or one of a previous host: nothing to release.
    if (session === undefined) return;
    const unacked = Math.max(0, (this.unacked.get(sessionId) ?? 0) - bytes);
    this.unacked.set(sessionId, unacked);
    if (unacked <= PtyConstants.UNACKED_OUTPUT_BYTES / 2) session.holdOutput(false);
  }

  /** An unwatched session's batch: a notice now if its last one is a window old, else held for the window's end. */
  private noteActivity(id: string, offset: number, bytes: number, first: boolean): void {
    const pending = this.pendingActivity.get(id);
    if (pending !== undefined) {
      pending.bytes = offset + bytes - pending.offset;
      return;
    }
    const now = Date.now();
    const sentAt = this.activitySentAt.get(id);
    if (sentAt === undefined || now - sentAt >= ACTIVITY_WINDOW_MS || now < sentAt) {
      this.activitySentAt.set(id, now);
      this.events.emit('activity', { session_id: id, offset, bytes }, { flush: first });
      return;
    }
    this.pendingActivity.set(id, { offset, bytes });
    this.activityTimer ??= setTimeout(this.sendAllActivity, ACTIVITY_WINDOW_MS - (now - sentAt));
  }

  /** The session's held notice, before anything else of it leaves (its data, state, exit). */
  private sendActivity(id: string): void {
    if (this.pendingActivity.size === 0) return;
    const pending = this.pendingActivity.get(id);
    if (pending === undefined) return;
    this.pendingActivity.delete(id);
    this.activitySentAt.set(id, Date.now());
    this.events.emit('activity', { session_id: id, offset: pending.offset, bytes: pending.bytes });
  }

  private readonly sendAllActivity = (): void => {
    this.activityTimer = undefined;
    for (const id of [...this.pendingActivity.keys()]) this.sendActivity(id);
  };

  private queueParsed(id: string, events: ParsedEvent[]): void {
    const queued = this.parsedQueue.get(id);
    if (queued === undefined) this.parsedQueue.set(id, events);
    else for (const e of events) queued.push(e);
    this.parsedTimer ??= setTimeout(this.sendAllParsed, PtySessionConstants.COALESCE_WINDOW_MS);
  }

  /** The session's queued parser events, in one `parsed` message. */
  private sendParsed(id: string): void {
    if (this.parsedQueue.size === 0) return;
    const events = this.parsedQueue.get(id);
    if (events === undefined) return;
    this.parsedQueue.delete(id);
    this.events.emit('parsed', { session_id: id, events });
  }

  private readonly sendAllParsed = (): void => {
    this.parsedTimer = undefined;
    for (const id of [...this.parsedQueue.keys()]) this.sendParsed(id);
  };

  /** Drops a session's buffers or its tombstone; one still running is killed first (nobody will read it any more). */
  /** Forgets everything kept per live session (it was forgotten or has ended), and counts its memory freed. */
  private dropLive(id: string, session: PtySession): void {
    this.sessions.delete(id);
    this.unacked.delete(id);
    this.unwatched.delete(id);
    this.pendingActivity.delete(id);
    this.activitySentAt.delete(id);
    this.parsedQueue.delete(id);
    this.freed(session);
  }

  forget(params: Params<'forget'>): Result<'forget'> {
    const tombstone = this.closed.get(params.session_id);
    if (tombstone !== undefined) {
      this.dropTombstone(params.session_id, tombstone);
      return OK;
    }
    const session = this.get(params.session_id);
    this.dropLive(params.session_id, session);
    session.dispose();
    return OK;
  }

  /** Enable: fresh files for the matching live sessions (and, for all, sessions spawned later). Disable: closes every file. */
  capture(params: Params<'capture'>): Result<'capture'> {
    const dir = params.dir ?? '';
    if (params.enabled && dir === '') throw new SupervisorError(ErrorCode.INVALID_MESSAGE, 'capture needs a directory', {});
    if (params.enabled && params.session_id !== undefined) this.readable(params.session_id); // an unknown id refuses before anything changes
    for (const [id, writer] of this.captures) {
      writer.close();
      this.sessions.get(id)?.setCapture(undefined);
    }
    if (!params.enabled) {
      this.captureState = { ...this.captureState, enabled: false };
      return this.captureStatus();
    }
    this.captures.clear();
    this.captureState = { enabled: true, filter: params.session_id ?? null, dir };
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // Each writer reports the open failure in its own status.
    }
    for (const [id, session] of this.sessions) {
      if (session.exited !== undefined || (this.captureState.filter !== null && this.captureState.filter !== id)) continue;
      this.startCapture(id, session);
    }
    return this.captureStatus();
  }

  tombstones(): Result<'tombstones'> {
    return { count: this.closed.size, bytes: this.tombstoneBytes, budget_bytes: this.budget };
  }

  captureStatus(): Result<'captureStatus'> {
    const { enabled, filter, dir } = this.captureState;
    return { enabled, session_id: filter, dir, sessions: [...this.captures.values()].map((w) => w.status()) };
  }

  loopDelay(): Result<'loopDelay'> {
    return { p99_ms: this.options.loopDelayP99Ms?.() ?? 0 };
  }

  memory(): Result<'memory'> {
    const sessions: Result<'memory'>['sessions'] = [];
    for (const [session_id, session] of this.sessions) if (session.exited === undefined) sessions.push({ session_id, ...session.heldBytes() });
    return { sessions };
  }

  processes(): Result<'processes'> {
    const sessions: Array<{ session_id: string; pid: number }> = [];
    for (const [session_id, session] of this.sessions) if (session.exited === undefined) sessions.push({ session_id, pid: session.pid });
    return { host_pid: process.pid, sessions };
  }

  /**
   * A new supervisor takes the host over: every session held (tombstones included), and its flow
   * control starts afresh: what went to the previous supervisor unacknowledged is not owed by this one.
   * The supervisor's records are the caller's to add (the listener keeps them).
   */
  adopt(): Result<'adopt'> {
    const sessions: Result<'adopt'>['sessions'] = [];
    for (const [session_id, session] of this.sessions) {
      this.ack(session_id, Number.MAX_SAFE_INTEGER);
      // The new supervisor has no viewers yet: it says `watch` when one comes.
      this.unwatched.add(session_id);
      const { total_written } = session.readRaw({ limit: 0 });
      sessions.push({ session_id, pid: session.pid, shell: session.shell, total_written, shell_state: session.shellState, exit: null });
    }
    for (const [session_id, tombstone] of this.closed) {
      const { exit_code, signal, total_written } = tombstone.exit;
      sessions.push({ session_id, pid: 0, shell: '', total_written, shell_state: null, exit: { exit_code, signal } });
    }
    return { host_pid: process.pid, sessions };
  }

  /** Sessions whose child is still running. */
  get live(): PtySession[] {
    return [...this.sessions.values()].filter((s) => s.exited === undefined);
  }

  /**
   * Host shutdown: every live session gets `signal` (SIGHUP: their terminal is going away), and
   * SIGKILL once `graceMs` passed; resolves when all exited or were SIGKILLed.
   */
  async shutdown(graceMs: number, signal: NodeJS.Signals = 'SIGHUP'): Promise<void> {
    const live = this.live;
    for (const session of live) session.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.all(live.map((s) => s.whenExited())), grace]);
    clearTimeout(timer);
    this.dispose();
  }

  /** Kills whatever still runs and releases every session. */
  dispose(): void {
    for (const session of this.sessions.values()) session.dispose();
    this.sessions.clear();
    this.unacked.clear();
    this.unwatched.clear();
    this.pendingActivity.clear();
    this.activitySentAt.clear();
    clearTimeout(this.activityTimer);
    this.activityTimer = undefined;
    this.parsedQueue.clear();
    clearTimeout(this.parsedTimer);
    this.parsedTimer = undefined;
    this.closed.clear();
    this.tombstoneBytes = 0;
  }

  private get budget(): number {
    return this.options.tombstoneBudgetBytes ?? PtyConstants.TOMBSTONE_BUDGET_BYTES;
  }

  /**
   * The child exited (its exit event has just left): a tombstone keeps the tail, the session's big
   * buffers are freed, and the oldest tombstones go while all of them hold more than the budget.
   */
  private entomb(id: string, session: PtySession): void {
    if (this.sessions.get(id) !== session) return; // forgotten (disposed) meanwhile
    let tombstone: Tombstone | undefined;
    try {
      tombstone = new Tombstone({
        exited: session.exited!,
        readRaw: (o) => session.readRaw(o),
        readLog: (o) => session.readLog(o),
        // A glance: a session that ended after a flood would otherwise replay its whole 2 MiB ring
        // through a grid here (~100 ms of this loop, every other session's output waiting).
        readScreen: () => session.readScreen({ glance: true }),
      });
    } catch (err) {
      process.stderr.write(`pty host: cannot keep a tombstone of session ${id}; its output is dropped: ${(err as Error).stack ?? String(err)}\n`);
    }
    this.dropLive(id, session);
    session.retire();
    if (tombstone === undefined) {
      this.events.emit('tombstoneDropped', { session_id: id });
      return;
    }
    this.closed.set(id, tombstone);
    this.tombstoneBytes += tombstone.bytes;
    for (const [oldId, old] of this.closed) {
      if (this.tombstoneBytes <= this.budget) break;
      this.dropTombstone(oldId, old);
      this.events.emit('tombstoneDropped', { session_id: oldId });
    }
  }

  private dropTombstone(id: string, tombstone: Tombstone): void {
    this.closed.delete(id);
    this.tombstoneBytes -= tombstone.bytes;
    this.options.idleGc?.freed(tombstone.bytes);
  }

  /** A session's buffers are about to be let go. */
  private freed(session: PtySession): void {
    if (this.options.idleGc === undefined) return;
    const held = session.heldBytes();
    this.options.idleGc.freed(held.ring_bytes + held.log_bytes + held.screen_bytes);
  }

  /** A session's reads: the live session, or what its tombstone kept. */
  private readable(id: string): PtySession | Tombstone {
    return this.closed.get(id) ?? this.get(id);
  }

  /**
   * The live session for an operation on its terminal; undefined for an exited one (its tombstone
   * takes no input, size or signal: the operation is dropped, as the exited session did).
   */
  private terminal(id: string): PtySession | undefined {
    if (this.closed.has(id)) return undefined;
    return this.get(id);
  }

  private startCapture(id: string, session: PtySession): void {
    const writer = new CaptureWriter(this.captureState.dir!, id);
    this.captures.set(id, writer);
    session.setCapture(writer);
  }

  private get(id: string): PtySession {
    const session = this.sessions.get(id);
    if (session === undefined) throw new SupervisorError(ErrorCode.PTY_NOT_FOUND, `no pty session '${id}' in this host`, { session_id: id });
    return session;
  }
}
