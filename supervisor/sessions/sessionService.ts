/** The supervisor's session registry: creates sessions on the pty host, resolves their three addresses, keeps tombstones, publishes lifecycle events. */
import { addKeyed } from '../../shared/keyedSets.js';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, resolve } from 'node:path';

import type { Disposable } from '../../shared/disposable.js';
import { toDisposable } from '../../shared/disposable.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { PtyConstants, type PtyProtocolT } from '../../shared/protocol/pty.js';
import type { ParamsOf } from '../../shared/protocol/defineProtocol.js';
import type { EventBus } from '../events/eventBus.js';
import type { EventPayload } from '../events/eventMap.js';
import type { PtyHost } from '../hosts/ptyHost.js';
import { ApiError } from '../../shared/apiError.js';
import { clipClientInput, quoteClientInput } from '../../shared/quoteClientInput.js';
import { AliasAllocator } from './alias.js';
import { detectAgent } from './agentDetection.js';
import { foregroundPgid } from './foreground.js';
import { childEnv, RESERVED_ENV } from './childEnv.js';
import { freshRuntimeFields, inStandby, type SessionRecord, type ShellStateName } from './sessionRecord.js';
import { worktreeOf } from './sessionWorktree.js';
import { SessionInput } from './sessionInput.js';
import { AgentStateTracker, type IntentListener, type ParsedListener } from './agentStateTracker.js';
import type { ParsedEvent } from '../../shared/protocol/parsedEvents.js';
import { type CreateSessionFields, DEFAULT_TERMINAL, EnvLimits } from './sessionSchemas.js';
import type { AdoptResult } from '../hosts/ptyHost.js';
import { RECORD_SYNC_MS, adoptedRecord, recordJson } from './sessionAdoption.js';

type ScreenQueryParams = ParamsOf<PtyProtocolT, 'screenQuery'>;

export const SessionConstants = {
  /**
   * An exited session stays readable this long (TOMBSTONE_TTL_MS), unless the pty host's budget for
   * closed sessions (PtyConstants.TOMBSTONE_BUDGET_BYTES) drops its tombstone first.
   */
  TOMBSTONE_TTL_MS: 5 * 60_000,
  DEFAULT_ROWS: DEFAULT_TERMINAL.rows,
  DEFAULT_COLS: DEFAULT_TERMINAL.cols,
} as const;

/**
 * What a session is created with: the fields of POST /sessions (CreateSessionBody, checked at the
 * edge), typed for in-process callers. `rows` and `cols` stay unknown, checked here: the session
 * tool passes its arguments' values as they came. `env` is checked here too (checkEnv): its
 * reserved names and limits are more than a schema says, and the agent tool passes it through.
 */
export type CreateOptions = Omit<CreateSessionFields, 'rows' | 'cols'> & { rows?: unknown; cols?: unknown };

/** Output listeners of one session (WebSocket viewers): bytes with their absolute offset. */
export type OutputListener = (offset: number, bytes: Uint8Array) => void;
/** Listeners to a session's output without its bytes: the batch [offset, offset + bytes) was printed. */
export type ActivityListener = (offset: number, bytes: number) => void;
/**
 * `closed`: the session ended (its tombstone is set). `exit`, once per session after `closed`: its
 * exit status is final (ExitInfo.reported), at once when the child exited or the host died, or
 * later for a kill or close, from the host's report or the host's death.
 */
export type LifecycleListener = (event: 'exit' | 'closed', record: SessionRecord) => void;
/** Fires after a session's shell_state changed (busy/idle), once its input bookkeeping has seen the change. */
export type ShellStateListener = (record: SessionRecord) => void;
/** A viewer's input was refused (the program has not read PtyConstants.INPUT_BACKLOG_BYTES); `viewer` is its writeFromViewer tag. */
export type InputRefusedListener = (sessionId: string, viewer: number | undefined) => void;

/**
 * Output looks at which process group holds the terminal at most this often (one /proc stat read):
 * on activity, never on a timer. The program is classified again (its name and paths, three or four
 * more reads) only when that group changed, or after AGENT_RECLASSIFY_MS in the same group (a
 * program that exec()s another keeps its group: `exec claude` from a wrapper script).
 */
const AGENT_RECHECK_MS = 1_000;
const AGENT_RECLASSIFY_MS = 10_000;
/**
 * All sessions together look at their foreground at most about this often per second: with many
 * busy sessions each one looks less often (500 printing sessions: every 5 s instead of 500 stat
 * reads a second). A shell going idle still looks at once (onState).
 */
const FOREGROUND_CHECKS_PER_S = 100;
/** How often one printing session looks at its foreground with `liveSessions` live: AGENT_RECHECK_MS, longer past FOREGROUND_CHECKS_PER_S over all. */
export function foregroundRecheckMs(liveSessions: number): number {
  return Math.max(AGENT_RECHECK_MS, (liveSessions * 1000) / FOREGROUND_CHECKS_PER_S);
}

/** Records serialized per turn by the touched-record sync (one takes ~20-100 µs), and the pause before the next batch. */
const RECORD_SYNC_BATCH = 50;
const RECORD_SYNC_PAUSE_MS = 20;

/** A refused write waits for the program to read: about as long as a person takes to notice. */
const INPUT_BACKLOG_RETRY_AFTER_S = 1;

export interface SessionServiceOptions {
  host: PtyHost;
  bus: EventBus;
  configDir: string;
  /** A named instance's name (sessions get it as TUIC_APP_INSTANCE); absent or null for the default. */
  instance?: string | null;
  env: NodeJS.ProcessEnv;
  maxSessions: () => number;
  /** config `standby_timeout_minutes`, in ms (0: never); absent = never. */
  standbyAfterMs?: () => number;
  /** Default shell from config (`shell`), else $SHELL, else /bin/sh. */
  defaultShell: () => string | null;
  /** Marker settings for an agent type (config `intent_tab_title`, `suggest_followups`, agents.json); both on when absent. */
  markers?: (agentType: string | null) => { intents: boolean; suggests: boolean };
  /** Told when sessions are created or forgotten: the garbage of a burst is collected once the process is idle (shared/idleGc.ts). */
  idleGc?: { touched(): void };
}

/**
 * A terminal dimension, checked: the REST routes' schemas check theirs, but the session tool passes
 * its arguments' rows and cols unchecked, and the pty host must never get a bad size. The texts are
 * the schemas' (sessionSchemas.ts). `fallback` undefined means the field is required.
 */
function dimension(value: unknown, name: 'rows' | 'cols', fallback?: number): number {
  if (value === undefined || value === null) {
    if (fallback === undefined) throw new ApiError('invalid_input', `${name} is required`, { extra: { field: name } });
    return fallback;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > PtyConstants.MAX_TERMINAL_DIMENSION) {
    throw new ApiError('invalid_input', `${name} must be between 1 and ${PtyConstants.MAX_TERMINAL_DIMENSION}, got ${clipClientInput(String(value))}`, {
      extra: { field: name },
    });
  }
  return value;
}

function expandHome(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? resolve(homedir(), p.slice(2)) : p;
}

/** A read request's range, with absent bounds left out (the contract's fields are optional, not nullable). */
function rangeParams(sessionId: string, offset: number | undefined, limit: number | undefined): { session_id: string; offset?: number; limit?: number } {
  const params: { session_id: string; offset?: number; limit?: number } = { session_id: sessionId };
  if (offset !== undefined) params.offset = offset;
  if (limit !== undefined) params.limit = limit;
  return params;
}

export class SessionService {
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly aliases = new AliasAllocator();
  /** Listeners to a session's bytes: while a session has one, the pty host sends them (`watch`). */
  private readonly outputListeners = new Map<string, Set<OutputListener>>();
  private readonly activityListeners = new Map<string, Set<ActivityListener>>();
  /** The per-session foreground recheck interval for the number of live sessions (FOREGROUND_CHECKS_PER_S), and when it was worked out. */
  private recheckIntervalMs = AGENT_RECHECK_MS;
  private foregroundRecheckAt = 0;
  private readonly lifecycleListeners = new Set<LifecycleListener>();
  private readonly shellStateListeners = new Set<ShellStateListener>();
  private readonly inputRefusedListeners = new Set<InputRefusedListener>();
  /** Per live or tombstoned session written to: writer lock, composer, turn epoch (dropped with the tombstone). */
  private readonly inputs = new Map<string, SessionInput>();
  private readonly tombstoneTimers = new Map<string, NodeJS.Timeout>();
  /** Ids whose spawn is on its way to the pty host: they hold a slot and their id like a live session. */
  private readonly spawning = new Set<string>();
  /** A shell state the host reported before the spawn's reply was handled (same channel read). */
  private readonly earlyState = new Map<string, ShellStateName>();
  readonly counters = {
    total_spawned: 0,
    failed_spawns: 0,
    bytes_emitted: 0,
    /** Output bytes that crossed the channel from the pty host: only watched sessions' (onOutput) do. */
    output_payload_bytes: 0,
    pauses_triggered: 0,
    /** Foreground process-group checks (one stat read each) made on output. */
    foreground_checks: 0,
    /** Full classifications of a session's foreground program. */
    agent_classifications: 0,
    /** Session records serialized to see whether the pty host's copy is stale (sessionAdoption.ts). */
    records_synced: 0,
  };
  private readonly agents: AgentStateTracker;
  /**
   * A digest of each session's record as the pty host last got it (sessionAdoption.ts): the JSON
   * itself was ~0.9 KB kept per session, 40 % of what an idle session holds in the supervisor.
   */
  private readonly recordsSent = new Map<string, number>();
  /**
   * Sessions something happened to (state, input, a reclassification, a call that changed the record) since the
   * last sync: only theirs are serialized again, RECORD_SYNC_MS after the first, so idle sessions
   * cost no timer, no wake-up and no garbage (every record re-serialized each second did).
   */
  private readonly touchedRecords = new Set<string>();
  private recordTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SessionServiceOptions) {
    opts.host.onAdopted((adopted) => this.adopt(adopted));
    // A state change (agent type, idle/working, parsed signals) reaches the host at once, not at the next sync.
    opts.bus.on('session-state-changed', (_name, e) => {
      const record = this.sessions.get(e.session_id);
      if (record) this.syncRecord(record);
    });
    this.agents = new AgentStateTracker({
      bus: opts.bus,
      sendAgent: (session_id, agent_type) => opts.host.runningClient()?.emit('agent', { session_id, agent_type }),
      lineCount: async (sessionId) => (await this.readLog(sessionId, undefined, 0)).total_lines,
      markers: opts.markers ?? (() => ({ intents: true, suggests: true })),
    });
    opts.host.on('parsed', (e) => {
      const record = this.sessions.get(e.session_id);
      if (!record) return;
      this.touch(record);
      this.agents.parsed(record, e.events);
    });
    opts.host.on('screenMode', (e) => {
      const record = this.sessions.get(e.session_id);
      if (!record || record.alt_screen === e.alt_screen) return;
      this.touch(record);
      record.alt_screen = e.alt_screen;
      this.publishState(record);
    });
    opts.host.on('data', (e, payload) => this.onData(e, payload));
    opts.host.on('activity', (e) => {
      const record = this.sessions.get(e.session_id);
      if (record) this.printed(record, e.offset, e.bytes);
    });
    opts.host.on('exit', (e) => this.onExit(e));
    opts.host.on('state', (e) => this.onState(e));
    opts.host.on('inputRefused', (e) => this.inputRefused(e.session_id, e.from));
    // The host's budget for closed sessions was full: that tombstone's output is gone, so is the record.
    opts.host.on('tombstoneDropped', (e) => {
      const record = this.sessions.get(e.session_id);
      if (record?.exit) this.forget(record, false);
    });
    opts.host.onHostExited(() => this.onHostExited());
  }

  /** Sessions whose process still runs. */
  get liveCount(): number {
    let n = 0;
    for (const r of this.sessions.values()) if (!r.exit) n++;
    return n;
  }

  /**
   * Closed sessions still addressable (tombstones), and the bytes the pty host keeps for them against
   * its budget (0 while no host runs: none is started to answer).
   */
  async closedStats(): Promise<{ sessions: number; bytes: number; budget_bytes: number }> {
    let sessions = 0;
    for (const r of this.sessions.values()) if (r.exit) sessions++;
    const client = this.opts.host.runningClient();
    const held = client === null ? undefined : await client.request('tombstones', {}).catch(() => undefined);
    return { sessions, bytes: held?.bytes ?? 0, budget_bytes: held?.budget_bytes ?? PtyConstants.TOMBSTONE_BUDGET_BYTES };
  }

  /** What each live session holds in the pty host (raw ring, line log, screen), in bytes; none while no host runs. */
  async sessionBytes(): Promise<Array<{ session_id: string; ring_bytes: number; log_bytes: number; screen_bytes: number }>> {
    const client = this.opts.host.runningClient();
    const held = client === null ? undefined : await client.request('memory', {}).catch(() => undefined);
    return held?.sessions ?? [];
  }

  /** Live sessions, and exited ones kept open (keep_open) until they are closed. */
  list(): SessionRecord[] {
    return [...this.sessions.values()].filter((r) => !r.exit || (r.keep_open && r.exit.reason === 'exit'));
  }

  /**
   * Resolves a session id, a tuic_session identity or an alias; tombstoned sessions included. A tab
   * that restarts its shell keeps its tuic_session, and a released alias may be handed out again,
   * so the same name can belong to a tombstone and a live session: the live one wins, else the newest tombstone.
   */
  resolve(ref: string): SessionRecord | undefined {
    const direct = this.sessions.get(ref);
    if (direct) return direct;
    let tombstone: SessionRecord | undefined;
    for (const r of this.sessions.values()) {
      if (r.tuic_session !== ref && r.alias !== ref) continue;
      if (!r.exit) return r;
      tombstone = r; // insertion order: the last one seen is the newest
    }
    return tombstone;
  }

  /** Like resolve, but a missing session is refused (not_found). */
  get(ref: string): SessionRecord {
    const r = this.resolve(ref);
    if (!r) throw new ApiError('not_found', 'Session not found');
    return r;
  }

  /**
   * The environment a process started for a session gets (its shell, a command run in its sandbox):
   * tuicd's own minus what would confuse it, naming the session and this tuicd; `extra` wins over ours.
   */
  childEnvFor(tuicSession: string, extra?: Readonly<Record<string, string>>): Record<string, string> {
    return childEnv(this.opts.env, { tuicSession, configDir: this.opts.configDir, instance: this.opts.instance ?? null, ...(extra ? { extra } : {}) });
  }

  async create(o: CreateOptions): Promise<SessionRecord> {
    if (o.env) checkEnv(o.env);
    const rows = dimension(o.rows, 'rows', SessionConstants.DEFAULT_ROWS);
    const cols = dimension(o.cols, 'cols', SessionConstants.DEFAULT_COLS);
    // Concurrent creates each wait on the spawn: counting the ones in flight keeps the cap and ids exact.
    if (this.liveCount + this.spawning.size >= this.opts.maxSessions()) throw new ApiError('busy', 'Max concurrent sessions reached');
    const cwd = this.checkCwd(o.cwd);
    let id = o.session_id ?? randomUUID();
    if (this.sessions.has(id) || this.spawning.has(id)) {
      if (o.session_id !== undefined) throw new ApiError('conflict', `session id ${id} is already in use`);
      id = randomUUID();
    }
    this.spawning.add(id);
    try {
      return await this.spawn(id, o, cwd, rows, cols);
    } finally {
      this.spawning.delete(id);
      this.earlyState.delete(id);
    }
  }

  private async spawn(id: string, o: CreateOptions, cwd: string, rows: number, cols: number): Promise<SessionRecord> {
    const shell = o.shell ? expandHome(o.shell) : (this.opts.defaultShell() ?? this.opts.env['SHELL'] ?? '/bin/sh');
    const args = (o.args ?? []).map(expandHome);
    const tuicSession = o.tuic_session || id;
    const agentType = o.agent_type ?? null;
    const client = await this.opts.host.client();
    let spawned;
    try {
      spawned = await client.request('spawn', {
        session_id: id,
        shell,
        args,
        cwd,
        env: this.childEnvFor(tuicSession, o.env ?? undefined),
        rows,
        cols,
        ...(agentType === null ? {} : { agent_type: agentType }),
        // Its bytes cross the channel only once a viewer asks for them (onOutput).
        unwatched: true,
      });
    } catch (err) {
      this.counters.failed_spawns++;
      // The host died or is restarting: the caller is told `unavailable` with a retry time, not a spawn failure.
      if (err instanceof SupervisorError && err.code !== ErrorCode.PTY_SPAWN_FAILED) throw err;
      // A shell that cannot start or a cwd that cannot be entered is the request's fault.
      const data = err instanceof SupervisorError ? (err.data as { shell?: unknown; cwd?: unknown } | undefined) : undefined;
      const badRequest = data?.shell !== undefined || data?.cwd !== undefined;
      throw new ApiError(badRequest ? 'invalid_input' : 'internal', `Failed to spawn ${quoteClientInput(shell)}: ${clipClientInput((err as Error).message)}`);
    }
    const alias = this.aliases.assign(cwd, o.alias);
    const now = Date.now();
    const record: SessionRecord = {
      session_id: id,
      tuic_session: tuicSession,
      alias,
      display_name: o.display_name || basename(shell),
      display_name_is_custom: false,
      display_name_from_spawn: Boolean(o.display_name),
      is_remote: true,
      visible: false,
      cwd,
      worktree: worktreeOf(cwd),
      shell: spawned.shell,
      pid: spawned.pid,
      rows,
      cols,
      created_ms: now,
      ...freshRuntimeFields(now),
      agent_type: agentType,
      spawn_agent_type: agentType,
      keep_open: o.keep_open === true,
    };
    this.sessions.set(id, record);
    if (this.outputListeners.has(id)) client.emit('watch', { session_id: id, watched: true });
    const early = this.earlyState.get(id);
    if (early !== undefined) {
      this.earlyState.delete(id);
      this.onState({ session_id: id, shell_state: early });
    }
    this.syncRecord(record);
    // A caller may fill in more right after (the agent spawner's description): synced with the next batch.
    this.touch(record);
    this.opts.idleGc?.touched();
    this.counters.total_spawned++;
    this.opts.bus.publish('session-created', { session_id: id, cwd, agent_type: record.agent_type, display_name: record.display_name });
    this.opts.bus.publish('term-alias-assigned', { session_id: id, alias });
    return record;
  }

  private checkCwd(raw: string | undefined): string {
    const cwd = raw ? expandHome(raw) : homedir();
    if (!isAbsolute(cwd)) throw new ApiError('invalid_input', `Working directory must be an absolute path: ${clipClientInput(cwd)}`);
    let st;
    try {
      st = statSync(cwd);
    } catch {
      throw new ApiError('invalid_input', `Working directory does not exist: ${clipClientInput(cwd)}`);
    }
    if (!st.isDirectory()) throw new ApiError('invalid_input', `Working directory is not a directory: ${clipClientInput(cwd)}`);
    return cwd;
  }

  /** A live session's host client; an exited one is refused (conflict; its output stays readable). */
  private async live(ref: string): Promise<{ record: SessionRecord; client: Awaited<ReturnType<PtyHost['client']>> }> {
    const record = this.liveRecord(ref);
    return { record, client: await this.opts.host.client() };
  }

  private liveRecord(ref: string): SessionRecord {
    const record = this.get(ref);
    if (record.exit) throw new ApiError('conflict', `Session has exited (${record.exit.reason})`);
    return record;
  }

  /**
   * A raw write (REST write, MCP input): waits its turn on the writer lock, then feeds the composer.
   * The lock is taken before anything is awaited, so a viewer's keystroke sent after this call
   * (writeFromViewer) sees the lock busy and queues behind it.
   */
  async write(ref: string, bytes: Uint8Array): Promise<void> {
    const record = this.liveRecord(ref);
    const input = this.inputOf(record);
    await input.lock.run(() => this.hostWrite(record, bytes, () => input.noteRawWrite(bytes)));
  }

  /**
   * What a WebSocket viewer types. The hot path of keystroke echo: with nobody holding or waiting
   * for the writer lock and the host up, the bytes leave at once as a one-way `input` event (no
   * promise, timer or reply on either side). Otherwise they queue like any write. Failures are
   * dropped, as typing into a closed terminal is, except a refusal for an unread input backlog:
   * onInputRefused hears it with `viewer`, the caller's tag, so the viewer can be told.
   */
  writeFromViewer(ref: string, bytes: Uint8Array, viewer?: number): void {
    const record = this.sessions.get(ref);
    const client = this.opts.host.runningClient();
    if (record !== undefined && record.exit === null && client !== null) {
      const input = this.inputOf(record);
      if (!input.lock.busy) {
        client.emit('input', viewer === undefined ? { session_id: record.session_id } : { session_id: record.session_id, from: viewer }, {
          payload: bytes,
          flush: true,
        });
        input.noteRawWrite(bytes);
        return;
      }
    }
    this.write(ref, bytes).catch((err: unknown) => {
      if (err instanceof ApiError && err.code === 'busy' && record !== undefined) this.inputRefused(record.session_id, viewer);
    });
  }

  onInputRefused(fn: InputRefusedListener): Disposable {
    this.inputRefusedListeners.add(fn);
    return toDisposable(() => this.inputRefusedListeners.delete(fn));
  }

  private inputRefused(sessionId: string, viewer: number | undefined): void {
    for (const fn of this.inputRefusedListeners) fn(sessionId, viewer);
  }

  /**
   * One `write` request; the host's refusal for an unread backlog becomes `busy`, retry after a second.
   * `written` runs as the host's reply is read, before the events it sent after it: the output the
   * bytes caused (a prompt drawn in answer to Enter) must count after the input, not be cleared by it.
   */
  private async hostWrite(record: SessionRecord, bytes: Uint8Array, written?: () => void): Promise<void> {
    const client = await this.opts.host.client();
    try {
      await client.request('write', { session_id: record.session_id }, { payload: bytes, onResult: written });
    } catch (err) {
      if (err instanceof SupervisorError && err.code === ErrorCode.INPUT_BACKLOG_FULL) {
        throw new ApiError('busy', err.message, { retryAfterS: INPUT_BACKLOG_RETRY_AFTER_S });
      }
      throw err;
    }
  }

  /** Several raw writes under one hold of the writer lock, so no other writer lands between them. */
  async writeSequence(ref: string, parts: readonly Uint8Array[]): Promise<void> {
    const record = this.liveRecord(ref);
    const input = this.inputOf(record);
    await input.lock.run(async () => {
      for (const bytes of parts) await this.hostWrite(record, bytes, () => input.noteRawWrite(bytes));
    });
  }

  /**
   * Writes with no bookkeeping: only for a caller that holds `inputOf(record).lock` (the framed submit),
   * which does its own in `written` (run as the host's reply is read, see hostWrite).
   */
  async writeHeld(record: SessionRecord, bytes: Uint8Array, written?: () => void): Promise<void> {
    await this.hostWrite(record, bytes, written);
  }

  /**
   * The session's input side, made on first use: a session nobody writes to holds none (its lock,
   * composer buffer and closures, about 0.9 KB, were made with every session).
   */
  inputOf(record: SessionRecord): SessionInput {
    let input = this.inputs.get(record.session_id);
    if (!input) this.inputs.set(record.session_id, (input = this.newInput(record)));
    return input;
  }

  /** Sets (non-empty string) or clears (null / '') the orchestrator's description; publishes pty-description-changed on change. */
  setDescription(ref: string, description: string | null): void {
    const record = this.get(ref);
    const next = description === null || description === '' ? undefined : description;
    if (record.pty_description === next) return;
    if (next === undefined) delete record.pty_description;
    else record.pty_description = next;
    const payload: EventPayload<'pty-description-changed'> = { session_id: record.session_id };
    if (next !== undefined) payload['pty_description'] = next;
    this.touch(record);
    this.opts.bus.publish('pty-description-changed', payload);
  }

  /** Whether the session is in standby now (sessionRecord.inStandby, with the configured timeout). */
  isStandby(record: SessionRecord): boolean {
    return inStandby(record, this.opts.standbyAfterMs?.() ?? 0);
  }

  /**
   * PUT /sessions/:id/name: a new display name; `isCustom` (default true) marks it as a person's
   * choice, which terminal titles leave alone.
   */
  rename(ref: string, name: string, isCustom = true): SessionRecord {
    const record = this.get(ref);
    record.display_name = name;
    record.display_name_is_custom = isCustom;
    record.display_name_from_spawn = false;
    this.touch(record);
    return record;
  }

  /** POST /sessions/:id/visible: whether a viewer shows the session now. */
  setVisible(ref: string, visible: boolean): void {
    const record = this.get(ref);
    record.visible = visible;
    this.touch(record);
  }

  /** Process ids of the sessions the pty host runs. */
  async processes(): Promise<Array<{ session_id: string; pid: number }>> {
    const client = await this.opts.host.client();
    return (await client.request('processes', {})).sessions;
  }

  async resize(ref: string, rowsRaw: unknown, colsRaw: unknown): Promise<void> {
    const rows = dimension(rowsRaw, 'rows');
    const cols = dimension(colsRaw, 'cols');
    const { record, client } = await this.live(ref);
    await client.request('resize', { session_id: record.session_id, rows, cols });
    record.rows = rows;
    record.cols = cols;
    this.touch(record);
  }

  async setPaused(ref: string, paused: boolean): Promise<void> {
    const { record, client } = await this.live(ref);
    await client.request(paused ? 'pause' : 'resume', { session_id: record.session_id });
    if (paused && !record.paused) this.counters.pauses_triggered++;
    record.paused = paused;
    this.touch(record);
  }

  /** DELETE: Ctrl-C, session-closed (`reason`, explicit_close for REST) before cleanup, then the process group is hung up. */
  async close(ref: string, reason = 'explicit_close'): Promise<void> {
    const record = this.get(ref);
    if (record.exit) {
      this.forget(record);
      return;
    }
    const client = await this.opts.host.client();
    await client.request('write', { session_id: record.session_id }, { payload: Buffer.from([0x03]) }).catch(() => undefined);
    this.markClosed(record, reason, null, null);
    await client.request('kill', { session_id: record.session_id }).catch(() => undefined);
  }

  /** SIGKILL to the session's process group; session-closed (killed) first. An exited session is left as it is. */
  async kill(ref: string): Promise<void> {
    const record = this.get(ref);
    if (record.exit) return;
    const client = await this.opts.host.client();
    this.markClosed(record, 'killed', null, null);
    await client.request('kill', { session_id: record.session_id, signal: 'SIGKILL' }).catch(() => undefined);
  }

  async readRaw(ref: string, offset: number | undefined, limit: number | undefined): Promise<{ start: number; total_written: number; bytes: Uint8Array }> {
    const record = this.get(ref);
    const client = await this.opts.host.client();
    const params = rangeParams(record.session_id, offset, limit);
    const { result, payload } = await client.requestWithPayload('readRaw', params).catch((err: unknown) => {
      throw this.hostError(err);
    });
    // An unwatched session's count trails its ring by up to one activity window: a read brings it up to date.
    if (result.total_written > record.total_written) record.total_written = result.total_written;
    return { ...result, bytes: payload ?? new Uint8Array(0) };
  }

  async readLog(ref: string, offset: number | undefined, limit: number | undefined) {
    const record = this.get(ref);
    const client = await this.opts.host.client();
    const params = rangeParams(record.session_id, offset, limit);
    return client.request('readLog', params).catch((err: unknown) => {
      throw this.hostError(err);
    });
  }

  /** The current screen: redacted rows, cursor, alternate screen (rendered by the pty host on demand). */
  async readScreen(ref: string) {
    const record = this.get(ref);
    const client = await this.opts.host.client();
    return client.request('readScreen', { session_id: record.session_id }).catch((err: unknown) => {
      throw this.hostError(err);
    });
  }

  /** A question about a live session's current screen (the pty host's grid answers it). */
  async screenQuery(ref: string, query: ScreenQueryParams['query']) {
    const { record, client } = await this.live(ref);
    return client.request('screenQuery', { session_id: record.session_id, query }).catch((err: unknown) => {
      throw this.hostError(err);
    });
  }

  private hostError(err: unknown): Error {
    if (err instanceof SupervisorError && err.code === ErrorCode.PTY_NOT_FOUND) return new ApiError('gone', 'Session output is no longer held by the pty host');
    return err as Error;
  }

  /**
   * The session's bytes as they are printed. The first listener has the pty host send them (`watch`),
   * the last one leaving stops that: a listener that reads the ring next gets every byte after it
   * from here (the channel keeps the order of the `watch` and the read).
   */
  onOutput(sessionId: string, fn: OutputListener): Disposable {
    const first = !this.outputListeners.has(sessionId);
    const added = addKeyed(this.outputListeners, sessionId, fn);
    if (first) this.sendWatch(sessionId, true);
    return toDisposable(() => {
      added.dispose();
      if (!this.outputListeners.has(sessionId)) this.sendWatch(sessionId, false);
    });
  }

  /** The session's output as it is printed, without its bytes (watched or not): no `watch` needed. */
  onActivity(sessionId: string, fn: ActivityListener): Disposable {
    return addKeyed(this.activityListeners, sessionId, fn);
  }

  private sendWatch(sessionId: string, watched: boolean): void {
    const record = this.sessions.get(sessionId);
    // A closed session prints nothing more; an unknown one is told when its spawn completes.
    if (record === undefined || record.exit) return;
    this.opts.host.runningClient()?.emit('watch', { session_id: sessionId, watched });
  }

  /** The output parser's events of one session, as they arrive (raw-mode `parsed` frames). */
  onParsed(sessionId: string, fn: ParsedListener): Disposable {
    return this.agents.onParsed(sessionId, fn);
  }

  /** The session's latest parsed events (debug agent_detection). */
  recentParsed(sessionId: string): Array<{ at_ms: number; event: ParsedEvent }> {
    return this.agents.recentEvents(sessionId);
  }

  /** Intent markers of any session's agent (the progress journal records them). */
  onIntent(fn: IntentListener): Disposable {
    return this.agents.onIntent(fn);
  }

  /** Every write's bytes reach the agent state after the input bookkeeping (turn epoch, composer). */
  private newInput(record: SessionRecord): SessionInput {
    const input: SessionInput = new SessionInput((bytes, submitted) => {
      this.touch(record);
      record.turn_epoch = input.turnEpoch;
      this.agents.input(record, bytes, submitted);
    });
    // Made on first use: it goes on from the record's turns (an adopted session's included).
    input.turnEpoch = record.turn_epoch;
    return input;
  }

  onLifecycle(fn: LifecycleListener): Disposable {
    this.lifecycleListeners.add(fn);
    return toDisposable(() => this.lifecycleListeners.delete(fn));
  }

  onShellState(fn: ShellStateListener): Disposable {
    this.shellStateListeners.add(fn);
    return toDisposable(() => this.shellStateListeners.delete(fn));
  }

  /** Input bookkeeping changed readiness without a shell-state change (a submit claim ended): shell-state listeners re-check. */
  notifyReadiness(record: SessionRecord): void {
    for (const fn of this.shellStateListeners) fn(record);
  }

  /** Registered listeners, for tests that prove a wait subscribed to nothing or cleaned up. */
  get listenerCounts(): { lifecycle: number; shellState: number; output: number } {
    let output = 0;
    for (const set of this.outputListeners.values()) output += set.size;
    for (const set of this.activityListeners.values()) output += set.size;
    return { lifecycle: this.lifecycleListeners.size, shellState: this.shellStateListeners.size, output };
  }

  private onData(e: { session_id: string; offset: number }, payload?: Uint8Array): void {
    const record = this.sessions.get(e.session_id);
    if (!record || !payload) return;
    this.counters.output_payload_bytes += payload.length;
    const set = this.outputListeners.get(e.session_id);
    if (set) for (const fn of set) fn(e.offset, payload);
    // After the fan-out: about one keystroke in a hundred would otherwise wait on /proc reads before its echo went out.
    this.printed(record, e.offset, payload.length);
  }

  /** A batch of output [offset, offset + bytes), its bytes sent (`data`) or not (`activity`). */
  private printed(record: SessionRecord, offset: number, bytes: number): void {
    // Output changes only fields the host's copy leaves out (recordJson): no sync for it, so 500
    // busy sessions do not make a sync of 500 records every second.
    // Never back: a raw read may have brought the count past a window's notice still on its way.
    if (offset + bytes > record.total_written) record.total_written = offset + bytes;
    const now = Date.now();
    record.last_activity_ms = now;
    this.counters.bytes_emitted += bytes;
    const set = this.activityListeners.get(record.session_id);
    if (set) for (const fn of set) fn(offset, bytes);
    if (now - record.agent_checked_ms >= this.foregroundInterval(now)) this.checkForeground(record, now);
  }

  /** AGENT_RECHECK_MS, or longer with so many live sessions that all of them would look more than FOREGROUND_CHECKS_PER_S times a second. */
  private foregroundInterval(now: number): number {
    if (now - this.foregroundRecheckAt >= AGENT_RECHECK_MS) {
      this.foregroundRecheckAt = now;
      this.recheckIntervalMs = foregroundRecheckMs(this.liveCount);
    }
    return this.recheckIntervalMs;
  }

  private onState(e: { session_id: string; shell_state: ShellStateName }): void {
    const record = this.sessions.get(e.session_id);
    if (!record && this.spawning.has(e.session_id)) {
      // The host's first state can arrive with its spawn reply, before the record exists: kept for it.
      this.earlyState.set(e.session_id, e.shell_state);
      return;
    }
    if (!record || record.exit || record.shell_state === e.shell_state) return;
    this.touch(record);
    record.shell_state = e.shell_state;
    record.shell_state_since_ms = Date.now();
    this.inputs.get(record.session_id)?.onShellState(e.shell_state);
    // A program that went quiet may have been an agent exiting to its shell: look again.
    this.redetectAgent(record, record.shell_state_since_ms, false);
    this.publishState(record);
    for (const fn of this.shellStateListeners) fn(record);
  }

  /** On output: the foreground group (one stat read); the program again only when it changed or the last look is old. */
  private checkForeground(record: SessionRecord, now: number): void {
    record.agent_checked_ms = now;
    this.counters.foreground_checks++;
    const pgid = foregroundPgid(record.pid);
    if (pgid === record.agent_fg_pgid && now - record.agent_classified_ms < AGENT_RECLASSIFY_MS) return;
    this.redetectAgent(record, now);
  }

  /**
   * Classifies the session's foreground again (a handful of small /proc reads); publishes a change
   * of agent_type unless the caller publishes the state itself.
   */
  private redetectAgent(record: SessionRecord, now: number, publish = true): void {
    record.agent_checked_ms = now;
    record.agent_classified_ms = now;
    this.counters.agent_classifications++;
    this.touch(record);
    const { agentType, foreground } = detectAgent(record.pid, record.spawn_agent_type);
    record.agent_fg_pgid = foreground?.pid ?? null;
    if (agentType === record.agent_type) return;
    record.agent_type = agentType;
    record.agent_epoch = record.turn_epoch;
    this.agents.agentChanged(record);
    if (publish) this.publishState(record);
  }

  /** Something outside the session service changed a field of the state (its queued commands). */
  republish(record: SessionRecord): void {
    this.touch(record);
    this.publishState(record);
  }

  /** session-state-changed with the full SessionState (deduplicated). */
  private publishState(record: SessionRecord): void {
    this.agents.publish(record);
  }

  private onExit(e: { session_id: string; exit_code: number | null; signal: number | null; total_written: number }): void {
    const record = this.sessions.get(e.session_id);
    if (!record) return;
    this.touch(record);
    record.total_written = e.total_written;
    this.opts.bus.publish('pty-exit', { session_id: e.session_id, exit_code: e.exit_code });
    if (!record.exit) {
      this.markClosed(record, 'exit', e.exit_code, e.signal, true);
      return;
    }
    // Closed or killed first: the tombstone learns the real status now.
    if (record.exit.reported) return;
    record.exit.exit_code = e.exit_code;
    record.exit.signal = e.signal;
    this.statusFinal(record);
  }

  private onHostExited(): void {
    for (const record of this.sessions.values()) {
      if (!record.exit) this.markClosed(record, 'pty_host_exited', null, null, true);
      // Killed or closed, its report still to come: it never will.
      else if (!record.exit.reported) this.statusFinal(record);
    }
  }

  private statusFinal(record: SessionRecord): void {
    record.exit!.reported = true;
    for (const fn of this.lifecycleListeners) fn('exit', record);
  }

  private markClosed(record: SessionRecord, reason: string, exitCode: number | null, signal: number | null, reported = false): void {
    if (record.exit) return;
    this.touch(record);
    record.exit = { exit_code: exitCode, signal, reason, at_ms: Date.now(), reported };
    if (record.shell_state !== 'idle') record.shell_state_since_ms = record.exit.at_ms;
    record.shell_state = 'idle';
    this.agents.exited(record);
    this.publishState(record);
    this.aliases.release(record.alias);
    this.opts.bus.publish('session-closed', { session_id: record.session_id, reason });
    for (const fn of this.lifecycleListeners) fn('closed', record);
    // Its status is final already (the child exited, the host died): `exit` now, as for a kill's report.
    if (reported) this.statusFinal(record);
    // keep_open: a process that ended by itself leaves its terminal readable until someone closes it.
    if (record.keep_open && reason === 'exit') return;
    const timer = setTimeout(() => this.forget(record), SessionConstants.TOMBSTONE_TTL_MS);
    timer.unref();
    this.tombstoneTimers.set(record.session_id, timer);
  }

  /** `tellHost` false: the host dropped the session itself (tombstoneDropped). */
  private forget(record: SessionRecord, tellHost = true): void {
    // A forgotten session's report never comes (the host drops it, and onExit would not find it).
    if (record.exit && !record.exit.reported) this.statusFinal(record);
    clearTimeout(this.tombstoneTimers.get(record.session_id));
    this.tombstoneTimers.delete(record.session_id);
    this.sessions.delete(record.session_id);
    this.inputs.delete(record.session_id);
    this.recordsSent.delete(record.session_id);
    this.touchedRecords.delete(record.session_id);
    this.opts.idleGc?.touched();
    this.agents.forget(record.session_id);
    if (!tellHost) return;
    // Only a running host holds buffers worth dropping; never start one just to forget.
    this.opts.host
      .runningClient()
      ?.request('forget', { session_id: record.session_id })
      .catch(() => undefined);
  }

  /**
   * The sessions a detached pty host kept when the previous supervisor went away: same ids, pids,
   * aliases and agent state; one that exited meanwhile is closed as it would have been.
   */
  private adopt(adopted: AdoptResult): void {
    const now = Date.now();
    this.recordsSent.clear();
    for (const s of adopted.sessions) {
      if (this.sessions.has(s.session_id)) continue;
      const record = adoptedRecord(s, now);
      record.alias = this.aliases.assign(record.cwd, record.alias);
      this.sessions.set(record.session_id, record);
      if (s.exit !== null) this.onExit({ session_id: s.session_id, exit_code: s.exit.exit_code, signal: s.exit.signal, total_written: s.total_written });
    }
    this.syncRecords();
  }

  /** Sends the host every record that changed since it last got it (a detached host keeps them for the next supervisor). */
  syncRecords(): void {
    if (this.opts.host.runningClient() === null) return;
    for (const record of this.sessions.values()) this.syncRecord(record);
  }

  /** Something may have changed the record: it is compared with the host's copy within RECORD_SYNC_MS. */
  private touch(record: SessionRecord): void {
    this.touchedRecords.add(record.session_id);
    if (this.recordTimer !== undefined) return;
    this.recordTimer = setTimeout(() => this.syncTouched(), RECORD_SYNC_MS);
    this.recordTimer.unref();
  }

  /** At most RECORD_SYNC_BATCH records per turn, the rest RECORD_SYNC_PAUSE_MS later: no long turn when hundreds were touched at once. */
  private syncTouched(): void {
    this.recordTimer = undefined;
    let synced = 0;
    for (const id of this.touchedRecords) {
      if (synced === RECORD_SYNC_BATCH) {
        this.recordTimer = setTimeout(() => this.syncTouched(), RECORD_SYNC_PAUSE_MS);
        this.recordTimer.unref();
        return;
      }
      this.touchedRecords.delete(id);
      const record = this.sessions.get(id);
      if (record) this.syncRecord(record);
      synced++;
    }
  }

  private syncRecord(record: SessionRecord): void {
    const client = this.opts.host.runningClient();
    if (client === null) return;
    this.counters.records_synced++;
    const json = recordJson(record);
    if (json.length > PtyConstants.RECORD_MAX_CHARS) return;
    const digest = textDigest(json);
    if (this.recordsSent.get(record.session_id) === digest) return;
    this.recordsSent.set(record.session_id, digest);
    client.emit('record', { session_id: record.session_id, record: json });
  }

  dispose(): void {
    clearTimeout(this.recordTimer);
    this.agents.dispose();
    for (const t of this.tombstoneTimers.values()) clearTimeout(t);
    this.tombstoneTimers.clear();
  }
}

/**
 * 52 bits of two FNV-1a hashes of a string's UTF-16 units. Two records that differ and share it
 * would leave the host's copy one change behind, until the next: about one chance in 2^52 per change.
 */
export function textDigest(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0) * 0x100000 + ((b >>> 0) & 0xfffff);
}

const ENV_NAME = new RegExp(EnvLimits.NAME_PATTERN);

/**
 * `env`: an object of at most EnvLimits.MAX_VARS NAME → string, no NUL, not the TUIC_* identity.
 * The schema of POST /sessions says the shape; the reserved names and the limits are checked only
 * here, and the whole of it for the agent tool, which passes its unchecked argument.
 */
export function checkEnv(env: unknown): void {
  const invalid = (message: string, field = 'env') => new ApiError('invalid_input', message, { extra: { field } });
  if (typeof env !== 'object' || env === null || Array.isArray(env)) throw invalid(`env must be an object of names to strings, got ${quoteClientInput(env)}`);
  const entries = Object.entries(env);
  if (entries.length > EnvLimits.MAX_VARS) throw invalid(`env has ${entries.length} variables; at most ${EnvLimits.MAX_VARS}`);
  for (const [name, value] of entries) {
    if (!ENV_NAME.test(name)) throw invalid(`env name ${quoteClientInput(name)} must be letters, digits and _, not starting with a digit`, `env.${name}`);
    if ((RESERVED_ENV as readonly string[]).includes(name)) throw invalid(`env may not set ${name}: tuicd sets it to name the session`, `env.${name}`);
    if (typeof value !== 'string' || value.includes('\0') || Buffer.byteLength(value) > EnvLimits.VALUE_MAX_BYTES) {
      throw invalid(`env ${name} must be a string of at most ${EnvLimits.VALUE_MAX_BYTES} bytes without NUL`, `env.${name}`);
    }
  }
}
