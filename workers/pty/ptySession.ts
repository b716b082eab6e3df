/**
 * One terminal: a node-pty child, its raw output ring, its text log, output coalescing, shell
 * busy/idle, flow control and staged shutdown. Takes node-pty from ./nodePty.ts (its only importer).
 * Exit tail: libuv takes POLLHUP plus a short read on a PTY master for EOF while bytes are still
 * buffered (libuv/libuv#4992; node-pty #72/#85/#726); holding the slave open keeps POLLHUP away.
 */

import { accessSync, closeSync, constants as fsConstants, openSync, readSync, statSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';

import type { Disposable } from '../../shared/disposable.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
// The group alone, never the bare pid: for a leader that already exited, whose pid may be reused.
import { signalGroup as signalGroupOnly } from '../../shared/processGroup.js';
import type { EventOf, ResultOf } from '../../shared/protocol/defineProtocol.js';
import { PtyConstants, type PtyProtocolT } from '../../shared/protocol/pty.js';
import type { CaptureWriter } from './captureWriter.js';
import { Coalescer } from './coalescer.js';
import { PendingText } from './deferredText.js';
import { InputQueue } from './inputQueue.js';
import { Listeners } from './listeners.js';
import { type IPty, spawn as spawnPty } from './nodePty.js';
import { lowerPriority } from './sessionPriority.js';
import { OutputRing, type RingRead, type RingReadOptions } from './outputRing.js';
import { ownString } from './ownString.js';
import { isClosingSignal, normalizeSignal, signalGroup } from './processGroup.js';
import { ScreenModel, type ScreenSnapshot, type ScreenSource } from './screenModel.js';
import type { ScreenAnswer, ScreenQuery } from './screenQueries.js';
import { ShellActivity, type ShellState } from './shellActivity.js';
import { OutputParser, type OutputParserOptions, type ParserScreen } from './agentParser/outputParser.js';
import type { PushedLines } from './ansiStrip.js';
import type { TextSink } from './textPipeline.js';
import type { ParsedEvent } from '../../shared/protocol/parsedEvents.js';

export const PtySessionConstants = {
  /** Output after the first chunk is held this long: 4095-byte reads at 25–50 k/s become ~250 messages/s (the useful window is 2–5 ms). */
  COALESCE_WINDOW_MS: 4,
  /** A batch this big leaves without waiting for the window: the catch-up chunk size, so batches and reads line up. */
  COALESCE_MAX_BYTES: PtyConstants.CATCH_UP_CHUNK_BYTES,
  /** A session asked to close (SIGHUP/SIGTERM) that is still alive after this gets SIGKILL (interactive bash ignores SIGTERM). */
  KILL_GRACE_MS: 3_000,
  /**
   * A closing signal is sent once more after this if the session still lives: bash can lose a SIGHUP
   * that lands while readline handles the Ctrl-C a close sends just before it (about 1 close in 70
   * on an idle machine), and would then sit at its prompt until the SIGKILL.
   */
  CLOSING_SIGNAL_REPEAT_MS: 500,
  /** TERM the child sees; the supervisor's env and every client renderer assume it. */
  TERM_NAME: 'xterm-256color',
  /** Used when neither the request nor the child env names a shell. */
  FALLBACK_SHELL: '/bin/sh',
} as const;

export const PTY_SPAWN_FAILED = ErrorCode.PTY_SPAWN_FAILED;

/** What a retired session's ring is: one byte of storage, never written. */
const RETIRED_RING = new OutputRing(1);

export type { ShellState } from './shellActivity.js';

export interface PtySpawnOptions {
  shell?: string;
  args?: string[];
  cwd: string;
  /** The complete child environment. */
  env: Record<string, string>;
  rows: number;
  cols: number;
  /** The agent the session starts as, if known: the parser's agent rules apply from the first byte. */
  agent_type?: string;
}

export type ExitInfo = Omit<EventOf<PtyProtocolT, 'exit'>, 'session_id'>;
export type LogRead = ResultOf<PtyProtocolT, 'readLog'>;

/** The text side (workers/pty/textPipeline.ts): stripped, redacted lines with a monotonic cursor. */
export interface TextLog {
  push(chunk: Uint8Array): void;
  read(options: { offset?: number; limit?: number }): LogRead;
  flush(): void;
  /** Taps completed lines and OSC strings for the output parser. */
  setSink?(sink: TextSink | undefined): void;
  readonly totalLines?: number;
  /** Memory the log holds, in bytes (GET /stats). */
  readonly heldBytes?: number;
}

/** `first`: the batch ended a quiet window (an echo, a prompt), so it should not wait for the end of the tick. */
type DataListener = (bytes: Uint8Array, offset: number, first: boolean) => void;

/**
 * Where a session's events go when one object serves every session (the host's PtyService): set once
 * with `observe`, it costs a session two fields, where a listener per event cost a closure, its
 * context, a listener list and a disposable each (~2 KB per idle session). `onData` and the other
 * `on…` methods stay for whoever else listens (tests); their lists are made on first use.
 */
export interface PtySessionObserver {
  /** A coalesced batch (as `onData`). */
  sessionData(session: PtySession, bytes: Uint8Array, offset: number, first: boolean): void;
  sessionState(session: PtySession, state: ShellState): void;
  sessionParsed(session: PtySession, events: ParsedEvent[]): void;
  sessionAltScreen(session: PtySession, active: boolean): void;
  /** Once, after the last batch (as `onExit`). */
  sessionExit(session: PtySession, info: ExitInfo): void;
}

/**
 * The raw ring as the screen reads it: up to the last batch handed on, never bytes still held by the
 * coalescer, so a tail read's screen rows and its log cursor describe the same moment.
 */
class BatchedOutput implements ScreenSource {
  /** Absolute offset just past the last coalesced batch handed on (text log, data event). */
  batchedTo = 0;

  constructor(
    /** Replaced by an empty one once the session is retired (its tombstone keeps the tail). */
    public ring: OutputRing,
  ) {}

  get totalWritten(): number {
    return this.batchedTo;
  }

  get oldestOffset(): number {
    return this.ring.oldestOffset;
  }

  read(options: RingReadOptions): RingRead {
    return this.ring.read(options);
  }
}

export class PtySession implements Disposable {
  readonly pid: number;
  private readonly output = new BatchedOutput(new OutputRing(PtyConstants.OUTPUT_RING_BYTES));
  /** The current screen, made on its first read (most sessions are never read) and rendered from the ring only then. */
  private screenModel: ScreenModel | undefined;
  /** The terminal's size, for a screen made later. */
  private rows: number;
  private cols: number;
  private readonly coalescer: Coalescer;
  /** Batches sent to the viewers whose text is not processed yet; drained before anything reads the text. */
  private readonly pendingText = new PendingText((bytes) => this.textStage(bytes));
  /** node-pty's data and exit subscriptions, released once the exit was reported. */
  private ptyData: Disposable | undefined;
  private ptyExit: Disposable | undefined;
  /** The host-wide observer (observe), and the key it knows this session by. */
  private observer: PtySessionObserver | undefined;
  private observerKey = '';
  private dataListeners: Listeners<[Uint8Array, number, boolean]> | undefined;
  private exitListeners: Listeners<[ExitInfo]> | undefined;
  private stateListeners: Listeners<[ShellState]> | undefined;
  private parsedListeners: Listeners<[ParsedEvent[]]> | undefined;
  private altListeners: Listeners<[boolean]> | undefined;
  /** Parser events found during the batch being handled (undefined outside one). */
  private parsedPending: ParsedEvent[] | undefined;
  /** The text side: stripped, redacted lines (workers/pty/textPipeline.ts); absent without a text stage. */
  private textLog: TextLog | undefined;
  /** Agent state from the output (workers/pty/agentParser); absent without a text stage. */
  private parser: OutputParser | undefined;
  /**
   * Builds the text stage (text log and parser) when it is first needed: the first output, a log
   * read, an agent, input or a resize. A session that has printed nothing holds no stripper, line
   * log or parser (about 5 KB); undefined once built, or when the session has none.
   */
  private makeTextLog: (() => TextLog) | undefined;
  private readonly activity = new ShellActivity(PtyConstants.SHELL_IDLE_MS, PtySession.stateChanged, this);
  private killTimer: NodeJS.Timeout | undefined;
  private repeatTimer: NodeJS.Timeout | undefined;
  /** node-pty closed the master (its read stream was destroyed) before the exit was reported. */
  private masterClosed = false;
  /**
   * Input is written on the master fd without blocking the loop, through a queue made on the first
   * write (a session nobody types into has none). node-pty's own write() is used only when a
   * node-pty version exposes no `fd` (it is not in the typings; then this is undefined), with
   * libuv's stall risk.
   */
  private readonly masterFd: number | undefined;
  private input: InputQueue | undefined;
  /** The master is closing or closed: no queue may be made for its fd any more. */
  private inputClosed = false;
  private paused = false;
  /** Held back by flow control: the supervisor has not acknowledged enough of what was sent. */
  private held = false;
  private exitInfo: ExitInfo | undefined;
  /** Made by the first whenExited() before the exit (the host's shutdown; most sessions never have one). */
  private exitPromise: Promise<ExitInfo> | undefined;
  private resolveExit: ((info: ExitInfo) => void) | undefined;
  /** Raw capture tap (diagnostics), off unless set: sees every write and read with its own boundaries. */
  private capture: CaptureWriter | undefined;
  private disposed = false;

  private constructor(
    private readonly pty: IPty,
    readonly shell: string,
    text: TextLog | (() => TextLog) | undefined,
    /** Our own fd on the PTY slave (see the header); closed once the exit was reported. */
    private slaveFd: number | undefined,
    size: { rows: number; cols: number },
  ) {
    this.pid = pty.pid;
    const masterFd = (pty as unknown as { fd?: unknown }).fd;
    this.masterFd = typeof masterFd === 'number' ? masterFd : undefined;
    this.rows = size.rows;
    this.cols = size.cols;
    if (typeof text === 'function') this.makeTextLog = text;
    else this.setTextLog(text);
    this.coalescer = new Coalescer({
      windowMs: PtySessionConstants.COALESCE_WINDOW_MS,
      maxBatchBytes: PtySessionConstants.COALESCE_MAX_BYTES,
      onFlush: this.onBatch,
    });
    // With `encoding: null` node-pty hands out Buffers; its typings only know strings.
    this.ptyData = pty.onData(this.onPtyData as unknown as (data: string) => void);
    // node-pty reports the exit only after its read stream closed: every byte read came before.
    this.ptyExit = pty.onExit(({ exitCode, signal }) => this.finish(exitCode, signal ?? 0));
    this.drainBeforeClose();
  }

  /**
   * With the slave held open the master never reaches EOF: 200 ms after the child exited node-pty
   * destroys its read stream, dropping whatever it had not read yet. A session paused or held by
   * flow control then lost all the child wrote last (a `printf big; exit 3` while paused). Just
   * before that destroy, take what the stream buffered and what the kernel still holds.
   */
  private drainBeforeClose(): void {
    const socket = (this.pty as unknown as { _socket?: NodeJS.ReadableStream & { destroy: (...args: unknown[]) => unknown; readableLength: number } })._socket;
    const fd = (this.pty as unknown as { fd?: unknown }).fd;
    if (socket === undefined || typeof socket.destroy !== 'function' || typeof fd !== 'number') return;
    const destroy = socket.destroy;
    socket.destroy = (...args: unknown[]) => {
      if (!this.disposed && this.exitInfo === undefined) {
        // read() emits 'data' for what it returns: the normal path (node-pty → onPtyData) takes it.
        while (socket.readableLength > 0 && socket.read() !== null);
        this.drainKernel(fd);
      }
      // The destroy closes the master fd, and the exit is reported only later: from here on its
      // number may belong to the next PTY opened (another session's), so nothing may use it.
      this.masterClosed = true;
      this.closeInput();
      return destroy.apply(socket, args);
    };
  }

  /** Reads the non-blocking master until EAGAIN (nothing left) or EIO (slave side gone). */
  private drainKernel(fd: number): void {
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch {
        return;
      }
      if (n <= 0) return;
      this.onPtyData(Buffer.from(buf.subarray(0, n)));
    }
  }

  /** The session's text log, and the output parser when the log has a sink for it. */
  private setTextLog(textLog: TextLog | undefined): void {
    this.textLog = textLog;
    if (textLog?.setSink === undefined) return;
    // One object serves as the parser's options and the pipeline's sink: methods, not 8 closures.
    const hooks = new PtySession.TextHooks(this);
    this.parser = new OutputParser(hooks);
    textLog.setSink(hooks);
  }

  /** Builds the text stage if it is still to be made (see makeTextLog). */
  private ensureText(): void {
    const make = this.makeTextLog;
    if (make === undefined) return;
    this.makeTextLog = undefined;
    this.setTextLog(make());
  }

  /**
   * Starts `shell` (else $SHELL of the child env, else /bin/sh) on a new PTY. `text`: its text log,
   * or what builds it when first needed.
   */
  static spawn(options: PtySpawnOptions, text?: TextLog | (() => TextLog)): PtySession {
    const shell = options.shell || options.env.SHELL || process.env.SHELL || PtySessionConstants.FALLBACK_SHELL;
    if (!isDirectory(options.cwd)) throw new SupervisorError(PTY_SPAWN_FAILED, `cwd '${options.cwd}' is not a directory`, { cwd: options.cwd });
    // node-pty only finds out in the forked child (execvp fails there, the "session" prints that and
    // exits 1): check first, so a shell that cannot start is a spawn failure and leaves nothing behind.
    if (!findExecutable(shell, options.env.PATH ?? process.env.PATH ?? '', options.cwd)) {
      throw new SupervisorError(PTY_SPAWN_FAILED, `cannot start '${shell}': not an executable file`, { shell });
    }
    let pty: IPty;
    try {
      pty = spawnPty(shell, options.args ?? [], {
        name: PtySessionConstants.TERM_NAME,
        cwd: options.cwd,
        env: options.env,
        rows: options.rows,
        cols: options.cols,
        // Buffers, not strings: faster, and multi-byte characters split across reads stay intact.
        // (node-pty then leaves IUTF8 off the termios: only canonical-mode erase of multi-byte input notices.)
        encoding: null,
      });
    } catch (err) {
      throw new SupervisorError(PTY_SPAWN_FAILED, `cannot start '${shell}': ${(err as Error).message}`, { shell });
    }
    lowerPriority(pty.pid);
    // Same tick as the spawn: libuv has not polled the master yet, so no early POLLHUP was seen.
    const session = new PtySession(pty, ownString(shell), text, holdSlave(pty), { rows: options.rows, cols: options.cols });
    if (options.agent_type) session.setAgent(options.agent_type);
    return session;
  }

  get exited(): ExitInfo | undefined {
    return this.exitInfo;
  }

  /** Resolves once the exit event has been fired (all output delivered first). */
  whenExited(): Promise<ExitInfo> {
    if (this.exitInfo !== undefined) return Promise.resolve(this.exitInfo);
    this.exitPromise ??= new Promise((resolve) => (this.resolveExit = resolve));
    return this.exitPromise;
  }

  get shellState(): ShellState {
    return this.activity.state;
  }

  /**
   * Sends every event of this session to `observer`, before any `on…` listener, with `key` to tell
   * sessions apart (`observerKey`). One observer per session: a second call replaces the first.
   */
  observe(observer: PtySessionObserver, key: string): void {
    this.observer = observer;
    this.observerKey = key;
  }

  /** The key given to `observe` ('' without one). */
  get key(): string {
    return this.observerKey;
  }

  /** Coalesced output: contiguous batches with the absolute offset of their first byte. */
  onData(listener: DataListener): Disposable {
    return (this.dataListeners ??= new Listeners()).add(listener);
  }

  /** Fires once, after the last `onData` batch. */
  onExit(listener: (info: ExitInfo) => void): Disposable {
    return (this.exitListeners ??= new Listeners()).add(listener);
  }

  /** The output parser's events, per batch or timer. */
  onParsed(listener: (events: ParsedEvent[]) => void): Disposable {
    return (this.parsedListeners ??= new Listeners()).add(listener);
  }

  /** The program switched to or from the alternate screen (terminal_mode). */
  onAltScreen(listener: (active: boolean) => void): Disposable {
    return (this.altListeners ??= new Listeners()).add(listener);
  }

  /**
   * The agent now in the foreground (the supervisor detects it), or null: agent rules, the screen
   * parse and AGENT_IDLE_MS apply only to agents.
   */
  setAgent(type: string | null): void {
    if (this.exitInfo !== undefined) return;
    // A parser made later starts with no agent: only an agent needs it now.
    if (type !== null) this.ensureText();
    this.pendingText.drain();
    this.activity.setIdleMs(type === null ? PtyConstants.SHELL_IDLE_MS : PtyConstants.AGENT_IDLE_MS);
    this.parser?.setAgent(type);
  }

  /** Fires on change only. */
  onState(listener: (state: ShellState) => void): Disposable {
    return (this.stateListeners ??= new Listeners()).add(listener);
  }

  /**
   * Input to the terminal; dropped once the child exited (like typing into a closed terminal).
   * False when refused: the program has not read PtyConstants.INPUT_BACKLOG_BYTES of earlier input.
   */
  write(bytes: Uint8Array): boolean {
    if (this.exitInfo !== undefined || this.masterClosed || bytes.length === 0) return true;
    if (this.inputBacklogBytes() >= PtyConstants.INPUT_BACKLOG_BYTES) return false;
    this.capture?.record('in', bytes);
    this.ensureText(); // the parser times answers and echo from input
    // The parser sees input and output in the order they happened.
    if (this.parser !== undefined) this.pendingText.drain();
    this.parser?.input(bytes);
    // A view, not a copy: an input payload's memory is never reused (a fresh read or frame).
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    if (this.masterFd === undefined) this.pty.write(view);
    else if (!this.inputClosed) (this.input ??= new InputQueue(this.masterFd)).write(view);
    return true;
  }

  /** Input accepted but not yet read by the program (see InputQueue). */
  inputBacklogBytes(): number {
    if (this.masterFd !== undefined) return this.input?.backlogBytes ?? 0;
    const pending = (this.pty as unknown as { _socket?: { writableLength?: unknown } })._socket?.writableLength;
    return typeof pending === 'number' ? pending : 0;
  }

  /** Starts (a writer) or stops (undefined) the raw capture tap; the previous writer is closed. */
  setCapture(writer: CaptureWriter | undefined): void {
    if (this.capture !== writer) this.capture?.close();
    this.capture = writer;
  }

  resize(rows: number, cols: number): void {
    if (this.exitInfo !== undefined || this.masterClosed) return;
    this.ensureText(); // the parser's resize grace
    this.pendingText.drain();
    this.pty.resize(cols, rows);
    this.rows = rows;
    this.cols = cols;
    this.screenModel?.resize(rows, cols);
    this.parser?.resized();
  }

  /** Stops reading the PTY: the kernel buffer fills and the child blocks on write. Nothing is lost. */
  pause(): void {
    if (this.exitInfo !== undefined || this.paused) return;
    this.paused = true;
    this.applyReading();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.applyReading();
  }

  /**
   * Flow control towards the supervisor (PtyConstants.UNACKED_OUTPUT_BYTES): held, the PTY is not
   * read, like `pause`, but independently of it; reading resumes only when neither holds it.
   */
  holdOutput(held: boolean): void {
    if (this.held === held) return;
    this.held = held;
    this.applyReading();
  }

  /** Reads unless paused or held; both setters change state before calling, and node-pty's pause/resume are idempotent. */
  private applyReading(): void {
    if (this.exitInfo !== undefined) return;
    if (this.paused || this.held) this.pty.pause();
    else this.pty.resume();
  }

  /**
   * Signals the whole process group (the shell leads it: node-pty's helper calls setsid). A closing
   * signal (default SIGHUP, as a terminal closing) escalates to SIGKILL after KILL_GRACE_MS, for the
   * whole group: a job that ignores SIGHUP outlives a shell that died of it.
   */
  kill(signal = 'SIGHUP'): void {
    const name = normalizeSignal(signal);
    if (this.exitInfo !== undefined) return;
    const closing = isClosingSignal(name);
    if (closing || name === 'SIGKILL') {
      // The session is going away: read what the child writes until then, whatever the pause or
      // the flow control says (at exit the rest is drained anyway). Other signals (SIGINT, SIGWINCH...)
      // leave both as they are.
      this.paused = false;
      this.held = false;
      this.applyReading();
    }
    signalGroup(this.pid, name);
    if (closing && this.killTimer === undefined) {
      this.killTimer = setTimeout(PtySession.escalate, PtySessionConstants.KILL_GRACE_MS, this);
      this.killTimer.unref();
      this.repeatTimer = setTimeout(() => this.repeatClosingSignal(name), PtySessionConstants.CLOSING_SIGNAL_REPEAT_MS);
      this.repeatTimer.unref();
    }
  }

  private repeatClosingSignal(name: NodeJS.Signals): void {
    this.repeatTimer = undefined;
    if (this.exitInfo === undefined) signalGroup(this.pid, name);
  }

  /** The grace after a closing signal is over: SIGKILL for the group, even if its leader has exited. The timer's argument is the session: no closure kept per session. */
  private static escalate(self: PtySession): void {
    self.killTimer = undefined;
    if (self.exitInfo === undefined) signalGroup(self.pid, 'SIGKILL');
    else signalGroupOnly(self.pid, 'SIGKILL');
  }

  /** ShellActivity's change callback, given the session: one function for every session. */
  private static stateChanged(state: ShellState, self: PtySession): void {
    self.observer?.sessionState(self, state);
    self.stateListeners?.fire(state);
  }

  /** Parser events found outside a batch (timers), or at a batch's end. */
  private fireParsed(events: ParsedEvent[]): void {
    this.observer?.sessionParsed(this, events);
    this.parsedListeners?.fire(events);
  }

  /**
   * The output parser's options and the text pipeline's sink, as one object per session whose
   * methods are shared on its prototype.
   */
  private static readonly TextHooks = class implements OutputParserOptions, TextSink {
    constructor(private readonly session: PtySession) {}

    /** Within a batch, events wait for its end: one `parsed` message per batch, not one per OSC. */
    emit(events: ParsedEvent[]): void {
      const pending = this.session.parsedPending;
      if (pending === undefined) this.session.fireParsed(events);
      else pending.push(...events);
    }

    /** A glance: after a flood the parser needs the screen's last repaints, not a 2 MiB replay. */
    readScreen(): ParserScreen {
      return this.session.screen.snapshot({ glance: true });
    }

    lineCount(): number {
      return this.session.textLog?.totalLines ?? 0;
    }

    onWorking(working: boolean): void {
      this.session.activity.hold(working);
    }

    text(lines: string): void {
      this.session.parser!.lines(lines);
    }

    wants(lines: PushedLines): boolean {
      return this.session.parser!.wantsText(lines);
    }

    osc(payload: string): void {
      this.session.parser!.osc(payload);
    }

    altScreen(active: boolean): void {
      const session = this.session;
      session.observer?.sessionAltScreen(session, active);
      session.altListeners?.fire(active);
    }
  };

  readRaw(options: RingReadOptions): { start: number; total_written: number; bytes: Buffer } {
    const { start, bytes } = this.output.ring.read(options);
    return { start, total_written: this.output.ring.totalWritten, bytes };
  }

  readLog(options: { offset?: number; limit?: number }): LogRead {
    this.ensureText();
    this.pendingText.drain();
    if (this.textLog !== undefined) return this.textLog.read(options);
    return { lines: [], offset: 0, total_lines: 0, oldest_offset: 0, partial: '' };
  }

  /** What the session holds, in bytes: its raw ring, its line log, its screen grid (GET /stats). */
  heldBytes(): { ring_bytes: number; log_bytes: number; screen_bytes: number } {
    return { ring_bytes: this.output.ring.heldBytes, log_bytes: this.textLog?.heldBytes ?? 0, screen_bytes: this.screenModel?.heldBytes ?? 0 };
  }

  /** A question about the current screen (GET /sessions/:id/terminal/*, kitty-flags). */
  screenQuery(q: ScreenQuery): ScreenAnswer {
    return this.screen.query(q);
  }

  /** The current screen; readable after the exit too (tombstone reads). A `glance` may be drawn from the last output only (ScreenModel.snapshot). */
  readScreen(options: { glance?: boolean } = {}): ScreenSnapshot {
    return this.screen.snapshot(options);
  }

  /**
   * The child exited and a tombstone took what is kept (workers/pty/tombstone.ts): the ring, the text
   * log, the parser and the grid are let go at once, even while a closing kill's escalation (which still runs, for
   * what else of the group ignored the signal) keeps this object alive a few seconds more.
   */
  retire(): void {
    if (this.exitInfo === undefined) throw new Error('PtySession.retire: the session has not exited');
    this.disposed = true;
    this.activity.dispose();
    this.coalescer.dispose();
    this.screenModel?.dispose();
    this.output.ring = RETIRED_RING;
    this.pendingText.clear();
    this.textLog = undefined;
    this.parser = undefined; // disposed at the exit
  }

  /** Releases everything; a child still running is killed outright (its output has nobody left to read it). */
  dispose(): void {
    this.disposed = true;
    if (this.exitInfo === undefined) signalGroup(this.pid, 'SIGKILL');
    else if (this.killTimer !== undefined) signalGroupOnly(this.pid, 'SIGKILL'); // a closing kill's escalation, due anyway
    this.clearTimers();
    this.closeInput();
    this.coalescer.dispose();
    this.releasePty();
    this.releaseSlave();
    this.capture?.close();
    this.pendingText.clear();
    this.parser?.dispose();
    this.screenModel?.dispose();
  }

  private get screen(): ScreenModel {
    this.screenModel ??= new ScreenModel(this.output, this.rows, this.cols);
    return this.screenModel;
  }

  private closeInput(): void {
    this.inputClosed = true;
    this.input?.close();
  }

  private readonly onPtyData = (chunk: Buffer): void => {
    // After the exit event the byte count is final; late bytes (none expected) would break it.
    if (this.exitInfo !== undefined) return;
    this.capture?.record('out', chunk);
    const offset = this.output.ring.append(chunk);
    this.activity.output(); // first: a `busy` event precedes the output that caused it
    this.coalescer.push(chunk, offset);
  };

  /**
   * One coalesced batch: the listeners send it on, and the text stage reads it later in this turn of
   * the event loop, after the channel wrote it (deferredText.ts), so no viewer waits on the stage.
   */
  private readonly onBatch = (bytes: Uint8Array, offset: number, first: boolean): void => {
    this.output.batchedTo = offset + bytes.length;
    if (this.makeTextLog !== undefined) this.ensureText();
    // Queued before the listeners run, so a read one of them makes already sees this batch.
    if (this.textLog !== undefined || this.parser !== undefined) this.pendingText.push(bytes);
    this.observer?.sessionData(this, bytes, offset, first);
    this.dataListeners?.fire(bytes, offset, first);
  };

  /** The text stage over one batch: line log (and its watchers), then the parser's end-of-batch checks. */
  private readonly textStage = (bytes: Uint8Array): void => {
    if (this.parser === undefined) {
      if (this.textLog !== undefined) this.pushText(bytes);
      return;
    }
    this.parsedPending = [];
    try {
      if (this.textLog !== undefined) this.pushText(bytes);
      this.parser.batchEnd(bytes);
    } finally {
      const events = this.parsedPending;
      this.parsedPending = undefined;
      if (events.length > 0) this.fireParsed(events);
    }
  };

  /** A failing text stage costs the session its log, never its raw output. */
  private pushText(bytes: Uint8Array): void {
    try {
      this.textLog!.push(bytes);
    } catch (err) {
      this.textLog = undefined;
      process.stderr.write(`pty host: text pipeline failed for pid ${this.pid}, its log stops here: ${(err as Error).stack ?? String(err)}\n`);
    }
  }

  /** Last batch, final idle, then exit: the supervisor sees every byte before it hears of the exit. */
  private finish(exitCode: number, signal: number): void {
    if (this.exitInfo !== undefined) return;
    // A pending kill escalation stays: what else of the group ignored the closing signal still gets SIGKILL.
    this.activity.dispose();
    this.coalescer.flush();
    this.coalescer.dispose();
    this.pendingText.drain();
    // Nothing was printed or read: the log stays empty, and reads answer so without building it.
    this.makeTextLog = undefined;
    if (this.textLog !== undefined) this.flushText();
    this.parser?.dispose();
    this.activity.stop();
    this.exitInfo = { exit_code: signal !== 0 ? null : exitCode, signal: signal !== 0 ? signal : null, total_written: this.output.ring.totalWritten };
    this.closeInput();
    this.releasePty();
    this.releaseSlave();
    this.capture?.close();
    this.observer?.sessionExit(this, this.exitInfo);
    this.exitListeners?.fire(this.exitInfo);
    this.resolveExit?.(this.exitInfo);
  }

  private releasePty(): void {
    const data = this.ptyData;
    const exit = this.ptyExit;
    this.ptyData = undefined;
    this.ptyExit = undefined;
    // Reverse order of subscription, each whatever the other does.
    try {
      exit?.dispose();
    } catch {
      // One failing disposer must not keep the other alive.
    }
    try {
      data?.dispose();
    } catch {
      // As above.
    }
  }

  private flushText(): void {
    try {
      this.textLog!.flush();
    } catch (err) {
      process.stderr.write(`pty host: text pipeline flush failed for pid ${this.pid}: ${(err as Error).message}\n`);
    }
  }

  private clearTimers(): void {
    this.activity.dispose();
    clearTimeout(this.killTimer);
    this.killTimer = undefined;
    clearTimeout(this.repeatTimer);
    this.repeatTimer = undefined;
  }

  private releaseSlave(): void {
    if (this.slaveFd === undefined) return;
    const fd = this.slaveFd;
    this.slaveFd = undefined;
    try {
      closeSync(fd);
    } catch {
      // EBADF cannot happen (only this object closes it); nothing else to do on a close error.
    }
  }
}

/**
 * Opens the session's PTY slave so the master never reports POLLHUP while the child lives: libuv
 * then reads until EAGAIN and node-pty's exit (which waits for its 200 ms socket destroy, since
 * the slave stays open) comes after the last byte. The fd is close-on-exec, so no child gets it.
 */
function holdSlave(pty: IPty): number | undefined {
  // `ptsName` is public on node-pty's UnixTerminal but missing from its typings.
  const ptsName = (pty as unknown as { ptsName?: string }).ptsName;
  if (ptsName === undefined) return undefined;
  try {
    return openSync(ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
  } catch (err) {
    process.stderr.write(`pty host: cannot hold ${ptsName} open (${(err as Error).message}); the last output before exit may be cut\n`);
    return undefined;
  }
}

/** Like execvp in the child (which has already changed to `cwd`): a name with a slash is the file itself, a bare name is looked up on `path`. */
function findExecutable(shell: string, path: string, cwd: string): boolean {
  if (shell.includes('/')) return isExecutableFile(resolve(cwd, shell));
  return path.split(delimiter).some((dir) => isExecutableFile(resolve(cwd, dir, shell)));
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // Missing or unreadable: either way the child could not start there.
  }
}
