/**
 * One ACP connection: the configured agent executable run as a child in its own process group with
 * the connection's root as working directory, spoken to through the SDK's client side over its
 * stdio (ndJsonStream: the SDK frames and checks every message). A connection lives across
 * generations: a reconnect settles the child and starts a new one under the same id. Everything the
 * agent says in order — updates, turn starts and ends, questions, state changes — becomes a frame
 * of the connection's journal, which its viewers read; a few of them wake `/events` (`acp-notice`).
 */
import { isInside, realPathOrAncestor } from '../fs/rootGate.js';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';

import {
  type AgentCapabilities,
  type AuthMethod,
  type ClientCapabilities,
  type ClientConnection,
  type ContentBlock,
  client,
  type Implementation,
  ndJsonStream,
  PROTOCOL_VERSION,
  type SessionNotification,
} from '@agentclientprotocol/sdk';

import { ApiError } from '../../shared/apiError.js';
import { signalGroup } from '../../shared/processGroup.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { VERSION } from '../../shared/version.js';
import type { EventBus } from '../events/eventBus.js';
import type { Logger } from '../log.js';
import type { SessionService } from '../sessions/sessionService.js';
import { AcpTerminals, readTextFile, writeTextFile } from './acpClientMethods.js';
import { type AcpErrorContext, acpError, agentFailure } from './acpError.js';
import type { AcpEndFrame, AcpEvent, AcpEventFrame, AcpGapFrame, AcpState } from './acpFrames.js';
import { AcpInteractions, type PendingInteraction } from './acpInteractions.js';
import { AcpJournal } from './acpJournal.js';
import { AcpViewers } from './acpViewers.js';

export const AcpTimings = {
  /** An agent that has not answered initialize by then is not one. */
  INITIALIZE_TIMEOUT_MS: 30_000,
  /** After SIGTERM to the group, SIGKILL. */
  KILL_GRACE_MS: 2_000,
  /**
   * A call other than a turn the agent has not answered by then is answered `upstream_timeout`
   * (generous: a load replays a whole history first); a turn has no limit, cancel ends it.
   */
  CALL_TIMEOUT_MS: 120_000,
  /** Bytes of the agent's stderr kept for the snapshot. */
  STDERR_TAIL_CHARS: 8 * 1024,
  /** After the agent exited, how long its stdout may take to hand over what it wrote before dying. */
  EXIT_STDOUT_GRACE_MS: 200,
} as const;

/** What tuicd serves the agent: files under the root, terminals, and form questions. */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
  elicitation: { form: {} },
};

/** ego's own extensions: the route verb, the extension method, the capability flag under `agentCapabilities._meta.ego`. */
export const EGO_EXTENSIONS = {
  pause: { method: '_ego/session/pause', capability: 'pause' },
  'resume-turn': { method: '_ego/session/resume_turn', capability: 'resumeTurn' },
  compact: { method: '_ego/session/compact', capability: 'compact' },
} as const;
export type EgoExtension = keyof typeof EGO_EXTENSIONS;

export interface AcpConnectionDeps {
  bus: EventBus;
  log: Logger;
  sessions: SessionService;
  /** The environment the agent inherits. */
  env: NodeJS.ProcessEnv;
}

interface Generation {
  readonly number: number;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly conn: ClientConnection;
  /** The child exited (or was told to end): calls refuse with transport_closed. */
  closed: boolean;
  exit: { code: number | null; signal: string | null } | null;
  readonly exited: Promise<void>;
  stderrTail: string;
  /** Why it ended when tuicd ended it (killed, deleted, reconnect, shutdown); null when it ended by itself. */
  endedBy: string | null;
}

interface KnownSession {
  sessionId: string;
  cwd: string;
  turn: { turnId: string } | null;
}

export class AcpConnection {
  readonly id = randomUUID();
  readonly journal = new AcpJournal();
  readonly viewers: AcpViewers;
  readonly interactions: AcpInteractions;
  private readonly terminals: AcpTerminals;
  private gen: Generation | null = null;
  private generationNumber = 0;
  private state: AcpState = 'starting';
  private stateReason: string | null = null;
  private protocolVersion: number | null = null;
  private agentInfo: Implementation | null = null;
  private agentCapabilities: AgentCapabilities = {};
  private authMethods: AuthMethod[] = [];
  private readonly known = new Map<string, KnownSession>();
  private deleted = false;
  /** The deletion under way: a second DELETE (or shutdown) waits for the same one. */
  private deletion: Promise<void> | undefined;
  /**
   * Open, reconnect, kill and delete run one after another: two reconnects at once would each
   * start a child and only the last would stay known (the other left running until tuicd exits).
   */
  private lifecycle: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: AcpConnectionDeps,
    private root: string,
  ) {
    this.viewers = new AcpViewers(this.journal, (after) => this.gapFrame(after));
    this.interactions = new AcpInteractions(
      (interaction) => {
        const seq = this.emit({ type: 'interaction_raised', interaction });
        this.notice('interaction_pending', seq, interaction.sessionId, interaction.requestId);
      },
      (interaction, reason, answer) => {
        const seq = this.emit({ type: 'interaction_settled', requestId: interaction.requestId, sessionId: interaction.sessionId, reason, answer });
        this.notice('interaction_settled', seq, interaction.sessionId, interaction.requestId);
      },
    );
    this.terminals = new AcpTerminals(deps.sessions, () => this.root);
  }

  get generation(): number {
    return this.generationNumber;
  }

  get isDeleted(): boolean {
    return this.deleted;
  }

  /** The first generation: launches `executable` in `root` and runs initialize. Throws (and leaves the state `failed`) when the agent does not come up. */
  open(executable: string, root: string): Promise<void> {
    return this.serialized(() => this.start(executable, root, 'connect'));
  }

  /** Settles the current generation and starts the next one, after any lifecycle call under way. */
  reconnect(executable: string, root: string): Promise<void> {
    return this.serialized(async () => {
      if (this.deleted) throw this.deletedError('reconnect');
      await this.endCurrent('reconnect');
      await this.start(executable, root, 'reconnect');
    });
  }

  private serialized<T>(run: () => Promise<T>): Promise<T> {
    const next = this.lifecycle.then(run);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }

  private deletedError(operation: string): ApiError {
    return acpError('not_found', 'the connection was deleted', { connectionId: this.id, operation });
  }

  private async start(executable: string, root: string, operation: string): Promise<void> {
    if (this.deleted) throw this.deletedError(operation);
    this.root = root;
    const number = ++this.generationNumber;
    const previous = number - 1;
    this.state = 'starting';
    this.stateReason = null;
    this.known.clear();
    if (previous > 0) this.emit({ type: 'generation', previous });
    const ctx: AcpErrorContext = { connectionId: this.id, operation: 'initialize' };
    let child: ChildProcess;
    try {
      child = spawn(executable, [], { cwd: root, env: this.deps.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (err) {
      throw this.fail(acpError('initialization_failed', `the agent did not start: ${(err as Error).message}`, ctx));
    }
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    try {
      await spawned;
    } catch (err) {
      throw this.fail(acpError('initialization_failed', `the agent did not start: ${(err as Error).message}`, ctx));
    }
    const gen = this.attach(number, child);
    this.gen = gen;
    // Deleted while the child was being spawned: it goes at once (delete ends only what it saw).
    if (this.deleted) {
      await this.endGeneration(gen, 'deleted');
      throw this.deletedError(operation);
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        gen.conn.agent.request('initialize', {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: CLIENT_CAPABILITIES,
          clientInfo: { name: 'tuicd', version: VERSION },
        }),
        gen.exited.then(() => {
          throw acpError('initialization_failed', `the agent exited before answering initialize (${describeExit(gen)})${stderrHint(gen)}`, ctx);
        }),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(acpError('initialization_failed', `the agent did not answer initialize within ${AcpTimings.INITIALIZE_TIMEOUT_MS / 1000} s`, ctx)),
            AcpTimings.INITIALIZE_TIMEOUT_MS,
          );
        }),
      ]);
      if (answer.protocolVersion !== PROTOCOL_VERSION)
        throw acpError('unsupported_protocol', `the agent speaks ACP version ${String(answer.protocolVersion)}; tuicd speaks ${PROTOCOL_VERSION}`, ctx, {
          agentProtocolVersion: answer.protocolVersion,
        });
      this.protocolVersion = answer.protocolVersion;
      this.agentInfo = answer.agentInfo ?? null;
      this.agentCapabilities = answer.agentCapabilities ?? {};
      this.authMethods = answer.authMethods ?? [];
    } catch (err) {
      if (this.deleted) {
        await this.endGeneration(gen, 'deleted');
        throw this.deletedError(operation);
      }
      const failure = err instanceof ApiError ? err : agentFailure(err, ctx, transportGone(gen));
      const wrapped =
        failure.code === 'unsupported_protocol' || failure.code === 'initialization_failed'
          ? failure
          : acpError('initialization_failed', `initialize failed: ${failure.message}`, ctx);
      await this.endGeneration(gen, 'initialize failed');
      throw this.fail(wrapped);
    } finally {
      clearTimeout(timer);
    }
    this.state = 'ready';
    const seq = this.emit({ type: 'state', state: 'ready' });
    this.notice('ready', seq);
    this.deps.log.info({ acp_connection: this.id, generation: number, pid: gen.pid, agent: this.agentInfo?.name }, 'ACP agent ready');
  }

  snapshot(): Record<string, unknown> {
    const gen = this.gen;
    return {
      id: this.id,
      generation: this.generationNumber,
      state: this.state,
      ...(this.stateReason === null ? {} : { reason: this.stateReason }),
      root: this.root,
      pid: gen && !gen.closed ? gen.pid : null,
      protocolVersion: this.protocolVersion,
      agentInfo: this.agentInfo,
      agentCapabilities: this.agentCapabilities,
      authMethods: this.authMethods,
      clientCapabilities: CLIENT_CAPABILITIES,
      sessions: [...this.known.values()].map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, turnId: s.turn?.turnId ?? null })),
      pendingInteractions: this.interactions.list().length,
      terminals: this.terminals.ids(),
      lastSeq: this.journal.lastSeq,
      firstSeq: this.journal.firstSeq,
      journal: { frames: this.journal.size.frames, chars: this.journal.size.chars },
      viewers: this.viewers.count,
      exit: gen?.exit ?? null,
      stderrTail: gen?.stderrTail ?? '',
    };
  }

  // --- sessions -------------------------------------------------------------------------------

  async listSessions(): Promise<Record<string, unknown>> {
    const gen = this.live('session/list');
    const attached = [...this.known.values()].map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, turnId: s.turn?.turnId ?? null }));
    if (!this.agentCapabilities.sessionCapabilities?.list) return { sessions: attached.map((s) => ({ ...s, attached: true })), listedByAgent: false };
    const answer = await this.call(gen, 'session/list', undefined, () => gen.conn.agent.request('session/list', { cwd: this.root }));
    const byId = new Map(attached.map((s) => [s.sessionId, s]));
    const sessions = answer.sessions.map((s) => ({ ...s, attached: byId.has(s.sessionId), turnId: byId.get(s.sessionId)?.turnId ?? null }));
    for (const s of attached) if (!answer.sessions.some((a) => a.sessionId === s.sessionId)) sessions.push({ ...s, attached: true });
    return { sessions, listedByAgent: true, ...(answer.nextCursor ? { nextCursor: answer.nextCursor } : {}) };
  }

  async newSession(cwd: string | undefined): Promise<Record<string, unknown>> {
    const gen = this.live('session/new');
    const dir = this.cwdInRoot(cwd, 'session/new');
    const answer = await this.call(gen, 'session/new', undefined, () => gen.conn.agent.request('session/new', { cwd: dir, mcpServers: [] }));
    this.known.set(answer.sessionId, { sessionId: answer.sessionId, cwd: dir, turn: null });
    return { ...answer };
  }

  /** session/load: the agent replays the session's history as updates (on the stream) before it answers. */
  async loadSession(sessionId: string): Promise<Record<string, unknown>> {
    const gen = this.live('session/load', sessionId);
    if (!this.agentCapabilities.loadSession) throw this.unavailable('session/load', sessionId, 'loadSession');
    const answer = await this.call(gen, 'session/load', sessionId, () => gen.conn.agent.request('session/load', { sessionId, cwd: this.root, mcpServers: [] }));
    this.known.set(sessionId, { sessionId, cwd: this.root, turn: null });
    return { sessionId, ...(answer ?? {}) };
  }

  async resumeSession(sessionId: string): Promise<Record<string, unknown>> {
    const gen = this.live('session/resume', sessionId);
    if (!this.agentCapabilities.sessionCapabilities?.resume) throw this.unavailable('session/resume', sessionId, 'sessionCapabilities.resume');
    const answer = await this.call(gen, 'session/resume', sessionId, () =>
      gen.conn.agent.request('session/resume', { sessionId, cwd: this.root, mcpServers: [] }),
    );
    this.known.set(sessionId, { sessionId, cwd: this.root, turn: null });
    return { sessionId, ...answer };
  }

  /** session/fork is not in ACP v1's stable set: forwarded only to an agent that advertises it. */
  async forkSession(sessionId: string): Promise<Record<string, unknown>> {
    const gen = this.live('session/fork', sessionId);
    const caps = this.agentCapabilities.sessionCapabilities as Record<string, unknown> | undefined;
    if (!caps?.['fork']) throw this.unavailable('session/fork', sessionId, 'sessionCapabilities.fork');
    const answer = await this.call(gen, 'session/fork', sessionId, () =>
      gen.conn.agent.request<{ sessionId: string }>('session/fork', { sessionId, cwd: this.root, mcpServers: [] }),
    );
    if (typeof answer?.sessionId !== 'string')
      throw acpError('protocol_violation', 'the agent answered session/fork without a sessionId', {
        connectionId: this.id,
        sessionId,
        operation: 'session/fork',
      });
    this.known.set(answer.sessionId, { sessionId: answer.sessionId, cwd: this.root, turn: null });
    return { ...answer };
  }

  async closeSession(sessionId: string): Promise<Record<string, unknown>> {
    const gen = this.live('session/close', sessionId);
    if (!this.agentCapabilities.sessionCapabilities?.close) throw this.unavailable('session/close', sessionId, 'sessionCapabilities.close');
    await this.call(gen, 'session/close', sessionId, () => gen.conn.agent.request('session/close', { sessionId }));
    this.forget(sessionId);
    return { ok: true };
  }

  async deleteSession(sessionId: string): Promise<Record<string, unknown>> {
    const gen = this.live('session/delete', sessionId);
    if (!this.agentCapabilities.sessionCapabilities?.delete) throw this.unavailable('session/delete', sessionId, 'sessionCapabilities.delete');
    await this.call(gen, 'session/delete', sessionId, () => gen.conn.agent.request('session/delete', { sessionId }));
    this.forget(sessionId);
    return { ok: true };
  }

  /**
   * Starts a turn and answers at once: the turn can outlast any HTTP request. Its updates, and its
   * end with the stop reason (or the error), come on the stream after the `turn_started` frame whose seq this returns.
   */
  prompt(sessionId: string, prompt: ContentBlock[]): { sessionId: string; turnId: string; seq: number } {
    const gen = this.live('session/prompt', sessionId);
    const session = this.attached(sessionId, 'session/prompt');
    if (session.turn !== null)
      throw acpError('conflict', `session ${quoteClientInput(sessionId)} is running turn ${session.turn.turnId}; cancel it or wait for its end`, {
        connectionId: this.id,
        sessionId,
        operation: 'session/prompt',
      });
    const turnId = randomUUID();
    session.turn = { turnId };
    const seq = this.emit({ type: 'turn_started', sessionId, turnId, prompt });
    const ended = (stopReason: AcpEventFrame['event'] & { type: 'turn_ended' }): void => {
      if (session.turn?.turnId === turnId) session.turn = null;
      this.emit(stopReason);
    };
    gen.conn.agent.request('session/prompt', { sessionId, prompt }).then(
      (answer) => ended({ type: 'turn_ended', sessionId, turnId, stopReason: answer.stopReason }),
      (err: unknown) => {
        const failure = agentFailure(err, { connectionId: this.id, sessionId, operation: 'session/prompt' }, transportGone(gen));
        ended({ type: 'turn_ended', sessionId, turnId, stopReason: null, error: { code: failure.code, message: failure.message } });
      },
    );
    return { sessionId, turnId, seq };
  }

  /** session/cancel, and the session's waiting questions answered `cancelled` (as the protocol asks of a client). */
  async cancel(sessionId: string): Promise<Record<string, unknown>> {
    const gen = this.live('session/cancel', sessionId);
    const session = this.attached(sessionId, 'session/cancel');
    await this.call(gen, 'session/cancel', sessionId, () => gen.conn.agent.notify('session/cancel', { sessionId }));
    this.interactions.cancelAll('cancelled', sessionId);
    return { ok: true, turnId: session.turn?.turnId ?? null };
  }

  async setConfig(
    sessionId: string,
    body: { configId?: string | undefined; value?: string | boolean | undefined; modeId?: string | undefined },
  ): Promise<Record<string, unknown>> {
    const gen = this.live('session/set_config_option', sessionId);
    this.attached(sessionId, 'session/set_config_option');
    if (body.modeId !== undefined) {
      const answer = await this.call(gen, 'session/set_mode', sessionId, () => gen.conn.agent.request('session/set_mode', { sessionId, modeId: body.modeId! }));
      return { ...(answer ?? {}) };
    }
    if (body.configId === undefined || body.value === undefined)
      throw acpError('invalid_input', 'config needs {configId, value} or {modeId}', {
        connectionId: this.id,
        sessionId,
        operation: 'session/set_config_option',
      });
    const params =
      typeof body.value === 'boolean'
        ? { sessionId, configId: body.configId, type: 'boolean' as const, value: body.value }
        : { sessionId, configId: body.configId, value: body.value };
    const answer = await this.call(gen, 'session/set_config_option', sessionId, () => gen.conn.agent.request('session/set_config_option', params));
    return { ...(answer as object) };
  }

  /** ego's extensions, forwarded as extension methods to an agent that advertises them. */
  async extension(sessionId: string, verb: EgoExtension): Promise<Record<string, unknown>> {
    const { method, capability } = EGO_EXTENSIONS[verb];
    const gen = this.live(method, sessionId);
    this.attached(sessionId, method);
    const ego = (this.agentCapabilities._meta as { ego?: Record<string, unknown> } | null | undefined)?.ego;
    if (ego?.[capability] !== true) throw this.unavailable(method, sessionId, `_meta.ego.${capability}`);
    const answer: unknown = await this.call(gen, method, sessionId, () => gen.conn.agent.request(method, { sessionId }));
    return typeof answer === 'object' && answer !== null ? { ...answer } : {};
  }

  // --- lifecycle ------------------------------------------------------------------------------

  /** Ends the child (SIGTERM to its group, SIGKILL after a grace); the connection stays for a reconnect. */
  kill(reason = 'killed'): Promise<void> {
    return this.serialized(() => this.endCurrent(reason));
  }

  /**
   * Ends the child and the connection: its viewers get an `end` frame and are closed. A child
   * starting (a reconnect under way) is ended too, without waiting for its initialize.
   */
  delete(reason = 'deleted'): Promise<void> {
    this.deletion ??= (async () => {
      this.deleted = true;
      if (this.gen !== null) void this.endGeneration(this.gen, reason);
      await this.serialized(() => this.endCurrent(reason));
      const generation = this.generationNumber;
      const entry = this.journal.append((seq) => {
        const frame: AcpEndFrame = { kind: 'end', seq, connectionId: this.id, generation, reason };
        return JSON.stringify(frame);
      });
      this.viewers.publish(entry.seq, entry.text);
      this.viewers.closeAll(`connection ${reason}`);
    })();
    return this.deletion;
  }

  private async endCurrent(reason: string): Promise<void> {
    if (this.gen !== null) await this.endGeneration(this.gen, reason);
  }

  // --- internals ------------------------------------------------------------------------------

  private attach(number: number, child: ChildProcess): Generation {
    const pid = child.pid!;
    child.stdin!.on('error', () => undefined); // EPIPE once the agent is gone: its exit says the rest
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const app = client({ name: 'tuicd' })
      .onNotification('session/update', ({ params }) => this.onUpdate(number, params))
      .onRequest('session/request_permission', ({ params, signal }) => this.interactions.ask('permission', params.sessionId, number, params, signal))
      .onRequest('elicitation/create', ({ params, signal }) =>
        this.interactions.ask('elicitation', (params as { sessionId?: string }).sessionId ?? null, number, params, signal),
      )
      .onNotification('elicitation/complete', () => undefined)
      .onRequest('fs/read_text_file', ({ params }) => readTextFile(this.root, params))
      .onRequest('fs/write_text_file', ({ params }) => writeTextFile(this.root, params))
      .onRequest('terminal/create', ({ params }) => this.terminals.create(params))
      .onRequest('terminal/output', ({ params }) => this.terminals.output(params.terminalId))
      .onRequest('terminal/wait_for_exit', ({ params, signal }) => this.terminals.waitForExit(params.terminalId, signal))
      .onRequest('terminal/kill', ({ params }) => this.terminals.kill(params.terminalId))
      .onRequest('terminal/release', ({ params }) => this.terminals.release(params.terminalId));
    const conn = app.connect(
      ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>),
    );
    const gen: Generation = { number, child, pid, conn, closed: false, exit: null, exited, stderrTail: '', endedBy: null };
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      gen.stderrTail = (gen.stderrTail + chunk).slice(-AcpTimings.STDERR_TAIL_CHARS);
    });
    // Updates and the turn's answer written just before the exit may still sit in the stdout pipe:
    // the connection closes once stdout has handed them over, or after a short grace (a grandchild
    // holding stdout open must not keep a dead agent's turn running).
    let stdoutClosed = false;
    child.stdout!.once('close', () => (stdoutClosed = true));
    child.once('exit', (code, signal) => {
      gen.closed = true;
      gen.exit = { code, signal };
      // Whatever the agent started goes with it.
      signalGroup(pid, 'SIGKILL');
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        conn.close(new Error(`the agent exited (${describeExit(gen)})`));
        markExited();
        this.onGenerationEnded(gen);
      };
      if (stdoutClosed) end();
      else {
        const grace = setTimeout(end, AcpTimings.EXIT_STDOUT_GRACE_MS);
        child.stdout!.once('close', () => {
          clearTimeout(grace);
          // Let the SDK read what the pipe handed over before the connection closes.
          setImmediate(end);
        });
      }
    });
    return gen;
  }

  private onUpdate(generation: number, notification: SessionNotification): void {
    if (this.gen?.number !== generation) return;
    this.emit({ type: 'session_update', sessionId: notification.sessionId, notification });
  }

  /** The child is gone: questions settled, terminals ended, the state says why. */
  private onGenerationEnded(gen: Generation): void {
    if (this.gen !== gen) return;
    this.interactions.cancelAll('closed');
    this.terminals.dispose();
    for (const s of this.known.values()) s.turn = null;
    if (this.state === 'starting') return; // start() reports it
    const reason = gen.endedBy ?? `exited (${describeExit(gen)})`;
    this.state = 'closed';
    this.stateReason = reason;
    const seq = this.emit({ type: 'state', state: 'closed', reason, exitCode: gen.exit?.code ?? null, signal: gen.exit?.signal ?? null });
    this.notice('settled', seq);
    this.deps.log.info({ acp_connection: this.id, generation: gen.number, reason }, 'ACP agent ended');
  }

  private async endGeneration(gen: Generation, reason: string): Promise<void> {
    if (!gen.closed) {
      gen.endedBy = reason;
      gen.closed = true;
      signalGroup(gen.pid, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(gen.pid, 'SIGKILL'), AcpTimings.KILL_GRACE_MS);
      await gen.exited;
      clearTimeout(timer);
    } else await gen.exited;
  }

  private fail(err: ApiError): ApiError {
    this.state = 'failed';
    this.stateReason = err.message;
    const seq = this.emit({ type: 'state', state: 'failed', reason: err.message });
    this.notice('settled', seq);
    return err;
  }

  /** The live generation, or transport_closed (after a kill, a crash, before a reconnect). */
  private live(operation: string, sessionId?: string): Generation {
    const gen = this.gen;
    if (this.deleted) throw acpError('not_found', 'the connection was deleted', { connectionId: this.id, sessionId, operation });
    if (gen === null || gen.closed || this.state !== 'ready')
      throw acpError('transport_closed', `the agent is not running (${this.stateReason ?? this.state}); reconnect for a new generation`, {
        connectionId: this.id,
        sessionId,
        operation,
      });
    return gen;
  }

  private attached(sessionId: string, operation: string): KnownSession {
    const session = this.known.get(sessionId);
    if (session === undefined)
      throw acpError('not_found', `session ${quoteClientInput(sessionId)} is not attached to this generation; create, load or resume it first`, {
        connectionId: this.id,
        sessionId,
        operation,
      });
    return session;
  }

  private forget(sessionId: string): void {
    this.known.delete(sessionId);
    this.interactions.cancelAll('cancelled', sessionId);
  }

  private unavailable(operation: string, sessionId: string | undefined, capability: string): ApiError {
    return acpError('capability_unavailable', `the agent does not advertise ${capability}`, { connectionId: this.id, sessionId, operation }, { capability });
  }

  private cwdInRoot(cwd: string | undefined, operation: string): string {
    if (cwd === undefined) return this.root;
    // Real paths, as the fs routes compare them: a symlink below the root that leads out is outside.
    if (!isAbsolute(cwd) || !isInside(realPathOrAncestor(resolve(cwd)), realPathOrAncestor(this.root)))
      throw acpError('invalid_input', `cwd must be the connection root or a directory below it: ${quoteClientInput(cwd)}`, {
        connectionId: this.id,
        operation,
      });
    return resolve(cwd);
  }

  /** One call to the agent, bounded in time, its failure sorted into a code. */
  private async call<T>(gen: Generation, operation: string, sessionId: string | undefined, run: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const ctx = { connectionId: this.id, sessionId, operation };
    try {
      return await Promise.race([
        run(),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(acpError('upstream_timeout', `the agent did not answer ${operation} within ${AcpTimings.CALL_TIMEOUT_MS / 1000} s`, ctx)),
            AcpTimings.CALL_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (err) {
      throw agentFailure(err, ctx, transportGone(gen));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Appends an event frame to the journal and sends it to the viewers; returns its seq. */
  private emit(event: AcpEvent): number {
    const generation = this.generationNumber;
    const entry = this.journal.append((seq) => {
      const frame: AcpEventFrame = { kind: 'event', seq, connectionId: this.id, generation, atMs: Date.now(), event };
      return JSON.stringify(frame);
    });
    this.viewers.publish(entry.seq, entry.text);
    return entry.seq;
  }

  private gapFrame(after: number): string {
    const frame: AcpGapFrame = {
      kind: 'gap',
      connectionId: this.id,
      after,
      firstAvailable: this.journal.firstSeq,
      message: 'the journal no longer holds the frames after this cursor: reconnect and load the session',
    };
    return JSON.stringify(frame);
  }

  private notice(event: 'ready' | 'settled' | 'interaction_pending' | 'interaction_settled', seq: number, sessionId?: string | null, requestId?: string): void {
    this.deps.bus.publish('acp-notice', {
      event,
      connection_id: this.id,
      generation: Math.max(1, this.generationNumber),
      seq,
      ...(sessionId ? { session_id: sessionId } : {}),
      ...(requestId ? { request_id: requestId } : {}),
    });
  }
}

/** The child exited or its pipe closed (the SDK closes the connection when the agent's stdout ends, before the exit is reported). */
function transportGone(gen: Generation): boolean {
  return gen.closed || gen.conn.signal.aborted;
}

function describeExit(gen: Generation): string {
  if (gen.exit === null) return 'still running';
  return gen.exit.signal !== null ? `signal ${gen.exit.signal}` : `code ${String(gen.exit.code)}`;
}

function stderrHint(gen: Generation): string {
  const tail = gen.stderrTail.trim().split('\n').slice(-3).join(' | ');
  return tail === '' ? '' : `; stderr: ${tail.slice(-500)}`;
}

export type { PendingInteraction };
