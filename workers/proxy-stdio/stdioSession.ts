/**
 * One spawned upstream child and the JSON-RPC exchanges in flight with it. Any number of
 * exchanges run at once, matched by id (ids come from the pump, monotonic across respawns, so a
 * late reply can only ever match the request it answers, never a later one).
 *
 * Each exchange has ONE deadline, armed before its write and covering the write and the reads. At
 * the deadline the child is torn down: it may still answer the request we gave up on, and a child
 * that did not even take the request on its stdin may hold half a frame. Being out of time
 * outranks having a reply ready: stdout lines are handled in small batches (setImmediate) so the
 * deadline timers run between batches, and a reply found after its deadline counts as a timeout.
 * Lines that cannot be JSON-RPC messages (no `"id"` nor `"method"` in the bytes) are skipped before
 * they take queue space or get parsed, however many arrive. Notifications (and requests other than
 * `ping`) are handed to the `message` sink; notifications wait in their own small lossy queue
 * (lineQueue.ts), so however fast a server writes them they cost at most SIDE_MAX_LINES lines /
 * SIDE_MAX_BYTES of memory and one parse each for those that survive, and never evict an answer.
 * An exchange its caller cancels is cancelled at the server too (notifications/cancelled).
 */

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { statSync } from 'node:fs';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { StdioLimits } from '../../shared/protocol/proxyStdio.js';
import {
  answerLine,
  isNotificationOnly,
  type JsonRpcError,
  type JsonRpcReply,
  mayBeMessage,
  notificationLine,
  parseIncoming,
  requestLine,
} from './jsonRpcLines.js';
import { LineQueue } from './lineQueue.js';
import { withParentDeathSignal } from './parentDeath.js';
import { groupReaper } from './groupReaper.js';
import type { Cancellation } from '../../shared/cancellation.js';
import { signalGroup } from '../../shared/processGroup.js';
import { StderrRelay } from './stderrRelay.js';
import { StdinWriter, type StdinWrite } from './stdinWriter.js';

/** Lines handled per turn of the event loop before yielding to timers and I/O. */
const DRAIN_BATCH_LINES = 32;
/** … or this many bytes of them, whichever comes first (parsing cost follows the bytes). */
const DRAIN_BATCH_BYTES = 1024 * 1024;
/** After the child exited, how long its stdout may take to hand over what it wrote before dying. */
const EXIT_STDOUT_GRACE_MS = 200;
/** setTimeout's ceiling; a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export type LogLevel = 'info' | 'warn' | 'error';

export interface SessionSinks {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  stderr(line: string): void;
  exited(event: { pid: number; code: number | null; signal: string | null; reason: string }): void;
  /** A notification (no id) or a request other than ping (id set) from the child. */
  message(message: { method: string; id?: number | string; params?: unknown }): void;
}

export interface SessionSpec {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Default deadline per exchange; 0 = none. */
  timeoutMs: number;
}

/** Why an upstream call failed without an answer; `data.reason` lets the hub tell them apart. */
export type FailureReason = 'not_running' | 'timeout' | 'torn_down' | 'exited' | 'shutdown' | 'stdin';

export function upstreamFailure(code: string, message: string, upstream: string, reason: FailureReason): SupervisorError {
  return new SupervisorError(code, message, { upstream, reason });
}

interface Exchange {
  readonly id: number;
  readonly method: string;
  readonly timeoutMs: number;
  readonly deadlineAt: number;
  timer: NodeJS.Timeout | undefined;
  write: StdinWrite | undefined;
  readonly resolve: (reply: JsonRpcReply) => void;
  readonly reject: (error: Error) => void;
  /** Unsubscribes from the caller's Cancellation once the exchange is over. */
  offCancel: (() => void) | undefined;
}

type State = 'running' | 'closing' | 'exited';

export class StdioSession {
  readonly pid: number;
  /** Resolves once the child exited and every exchange was settled. */
  readonly exited: Promise<void>;
  private readonly pending = new Map<number, Exchange>();
  private readonly lines: LineQueue;
  private readonly stdin: StdinWriter;
  private readonly stderr: StderrRelay;
  private state: State = 'running';
  /** Set when we end the child (teardown, shutdown): the reason `exited` reports. */
  private endReason: string | undefined;
  private endFailure: FailureReason = 'exited';
  private drainScheduled = false;
  private stdoutEnded = false;
  private exitStatus: { code: number | null; signal: string | null } | undefined;
  private exitGrace: NodeJS.Timeout | undefined;
  private unmatchedReplies = 0;
  private settleExited!: () => void;
  private shutdownPromise: Promise<void> | undefined;

  /** Spawns the child in its own process group; rejects with UPSTREAM_SPAWN_FAILED when it cannot start. */
  static async spawn(spec: SessionSpec, sinks: SessionSinks, nextId: () => number): Promise<StdioSession> {
    if (spec.cwd !== undefined && !isDirectory(spec.cwd)) {
      throw new SupervisorError(ErrorCode.UPSTREAM_SPAWN_FAILED, `Upstream '${spec.name}' cannot start: cwd '${spec.cwd}' is not a directory`);
    }
    const failed = (err: NodeJS.ErrnoException): SupervisorError => {
      const hint = err.code === 'ENOENT' ? ' (command not found on PATH)' : '';
      return new SupervisorError(ErrorCode.UPSTREAM_SPAWN_FAILED, `Upstream '${spec.name}' failed to start '${spec.command}': ${err.message}${hint}`, {
        upstream: spec.name,
        errno: err.code,
      });
    };
    let child: ChildProcessWithoutNullStreams;
    try {
      const exec = withParentDeathSignal(spec.command, spec.args, spec.env['PATH'], spec.cwd);
      child = spawn(exec.file, exec.args, { cwd: spec.cwd, env: spec.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (err) {
      // Bad arguments (an empty command, a NUL byte) throw instead of emitting; so does a command not found on PATH.
      throw failed(err as NodeJS.ErrnoException);
    }
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        child.off('spawn', onSpawn);
        reject(failed(err));
      };
      const onSpawn = (): void => {
        child.off('error', onError);
        resolve();
      };
      child.once('error', onError);
      child.once('spawn', onSpawn);
    });
    // Its group dies with this thread even if the thread never gets to shut it down.
    groupReaper.watch(child.pid!);
    return new StdioSession(spec, sinks, nextId, child);
  }

  private constructor(
    private readonly spec: SessionSpec,
    private readonly sinks: SessionSinks,
    private readonly nextId: () => number,
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    this.pid = child.pid!;
    this.exited = new Promise((resolve) => (this.settleExited = resolve));
    this.lines = new LineQueue({
      keep: mayBeMessage,
      side: isNotificationOnly,
      onOversized: () =>
        sinks.log('warn', `Upstream '${spec.name}' wrote a stdout line over ${StdioLimits.MAX_LINE_BYTES} bytes; discarded whole`, {
          upstream: spec.name,
          pid: this.pid,
        }),
    });
    this.stdin = new StdinWriter(child.stdin);
    this.stderr = new StderrRelay({
      emitLine: (line) => sinks.stderr(line),
      reportSuppressed: (count) =>
        sinks.log('warn', `Upstream '${spec.name}' stderr: ${count} lines not relayed (rate limit)`, { upstream: spec.name, suppressed: count }),
    });
    child.on('error', (err) => sinks.log('error', `Upstream '${spec.name}' process error: ${err.message}`, { upstream: spec.name }));
    child.stdout.on('data', this.onStdout);
    child.stdout.once('end', this.onStdoutEnd);
    child.stdout.once('close', this.onStdoutEnd);
    child.stdout.on('error', () => this.onStdoutEnd());
    child.stderr.on('data', (chunk: Buffer) => this.stderr.write(chunk));
    child.stderr.on('error', () => {});
    child.once('exit', this.onExit);
  }

  get running(): boolean {
    return this.state === 'running';
  }

  get inFlight(): number {
    return this.pending.size;
  }

  get timeoutMs(): number {
    return this.spec.timeoutMs;
  }

  counters(): { dropped_lines: number; oversized_lines: number; queued_lines: number; queued_bytes: number; in_flight: number } {
    return {
      dropped_lines: this.lines.dropped,
      oversized_lines: this.lines.oversized,
      queued_lines: this.lines.length,
      queued_bytes: this.lines.bytes,
      in_flight: this.pending.size,
    };
  }

  /**
   * One exchange: resolves with the upstream's answer (a JSON-RPC error answer included), rejects
   * on the deadline, teardown, exit, or when the caller aborts (then the exchange is only
   * forgotten: its id is never reused, so a late answer to it matches nothing).
   */
  request(method: string, params: Uint8Array | undefined, timeoutMs: number, cancellation?: Cancellation): Promise<JsonRpcReply> {
    if (this.state !== 'running') return Promise.reject(this.notRunning(method));
    const id = this.nextId();
    const line = requestLine(id, method, params);
    return new Promise<JsonRpcReply>((resolve, reject) => {
      const exchange: Exchange = {
        id,
        method,
        timeoutMs,
        deadlineAt: timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY,
        timer: undefined,
        write: undefined,
        resolve,
        reject,
        offCancel: undefined,
      };
      // Armed before the write: a write that never completes is covered by the same deadline.
      if (timeoutMs > 0) exchange.timer = setTimeout(this.onDeadline, Math.min(timeoutMs, MAX_TIMER_MS), id);
      this.pending.set(id, exchange);
      try {
        exchange.write = this.stdin.write(line);
      } catch (err) {
        this.take(id);
        reject(
          upstreamFailure(
            ErrorCode.HANDLER_FAILED,
            `Upstream '${this.spec.name}': cannot send '${method}': ${(err as Error).message}`,
            this.spec.name,
            'stdin',
          ),
        );
        return;
      }
      if (cancellation !== undefined) {
        const reason = cancellation.cancelReason;
        if (reason !== undefined) this.abandon(id, reason);
        else exchange.offCancel = cancellation.onCancel((why) => this.abandon(id, why));
      }
    });
  }

  /** A JSON-RPC notification (no answer, no deadline of its own: the next exchange's write queues behind it). */
  notify(method: string, params?: Uint8Array): void {
    if (this.state !== 'running') throw this.notRunning(method);
    this.stdin.write(notificationLine(method, params));
  }

  /** Our answer to a request the child sent; nothing when it is no longer running (it cannot be waiting). */
  answer(id: number | string, result: Uint8Array | undefined, error?: JsonRpcError): void {
    if (this.state !== 'running') return;
    try {
      this.stdin.write(answerLine(id, result, error));
    } catch {
      // stdin closed, broken or its backlog full: the server's own timeout covers its request.
    }
  }

  /**
   * Ends the child now: SIGKILL to its group, every pending exchange failed with `reason`. The
   * `exited` sink fires once the process is gone. A no-op once the child is ending anyway.
   */
  teardown(reason: string, failure: FailureReason = 'torn_down'): void {
    if (this.state === 'exited' || this.endReason !== undefined) return;
    this.state = 'closing';
    this.endReason = `torn down: ${reason}`;
    this.endFailure = failure;
    this.sinks.log('warn', `Upstream '${this.spec.name}' torn down: ${reason}`, { upstream: this.spec.name, pid: this.pid });
    this.failAll((exchange) =>
      upstreamFailure(
        ErrorCode.HANDLER_FAILED,
        `Upstream '${this.spec.name}' torn down while '${exchange.method}' was pending: ${reason}`,
        this.spec.name,
        failure,
      ),
    );
    this.stdin.destroy();
    signalGroup(this.pid, 'SIGKILL');
  }

  /**
   * Closes stdin (EOF: the polite stop), waits up to SHUTDOWN_GRACE_MS for the child to exit, then
   * SIGKILLs the group. Idempotent: every call waits for the same exit.
   */
  shutdown(graceMs: number = StdioLimits.SHUTDOWN_GRACE_MS): Promise<void> {
    if (this.shutdownPromise !== undefined) return this.shutdownPromise;
    if (this.state === 'running') {
      this.state = 'closing';
      this.endReason = 'shut down';
      this.endFailure = 'shutdown';
      this.stdin.end();
      const kill = setTimeout(() => signalGroup(this.pid, 'SIGKILL'), graceMs);
      void this.exited.then(() => clearTimeout(kill));
    }
    this.shutdownPromise = this.exited;
    return this.shutdownPromise;
  }

  private readonly onStdout = (chunk: Buffer): void => {
    this.lines.write(chunk);
    if (this.lines.length > 0) this.scheduleDrain();
  };

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(this.drainBatch);
  }

  private readonly drainBatch = (): void => {
    this.drainScheduled = false;
    let bytes = 0;
    for (let n = 0; n < DRAIN_BATCH_LINES && bytes < DRAIN_BATCH_BYTES; n++) {
      const line = this.lines.shift();
      if (line === undefined) return;
      bytes += line.length;
      this.handleLine(line);
    }
    if (this.lines.length > 0) this.scheduleDrain();
  };

  private handleLine(line: Buffer): void {
    const incoming = parseIncoming(line);
    if (incoming === undefined) return; // Not JSON-RPC: skipped.
    if ('notification' in incoming) return this.sinks.message(incoming.notification);
    if ('request' in incoming) {
      const request = incoming.request;
      if (request.method === 'ping') return this.answer(request.id, undefined);
      return this.sinks.message(request);
    }
    const reply = incoming.reply;
    const exchange = this.pending.get(reply.id);
    if (exchange === undefined) {
      this.unmatchedReplies++; // An answer to an abandoned request: matches nothing, by construction.
      return;
    }
    if (Date.now() >= exchange.deadlineAt) {
      this.onDeadline(exchange.id);
      return;
    }
    this.take(reply.id);
    exchange.resolve(reply);
  }

  private readonly onDeadline = (id: number): void => {
    const exchange = this.pending.get(id);
    if (exchange === undefined) return;
    const counters = this.counters();
    const what =
      exchange.write?.flushed === false
        ? `'${exchange.method}' was not taken on its stdin within ${exchange.timeoutMs}ms (${this.stdin.backlogBytes} bytes still unwritten; is it reading?)`
        : `no answer to '${exchange.method}' within ${exchange.timeoutMs}ms`;
    this.sinks.log('warn', `Upstream '${this.spec.name}' timed out: ${what}; ${counters.dropped_lines} stdout lines dropped so far`, {
      upstream: this.spec.name,
      pid: this.pid,
      method: exchange.method,
      timeout_ms: exchange.timeoutMs,
      dropped_lines: counters.dropped_lines,
      oversized_lines: counters.oversized_lines,
      skipped_lines: this.lines.skipped,
      unmatched_replies: this.unmatchedReplies,
      in_flight: counters.in_flight,
    });
    // This exchange fails as a timeout; the others as victims of the teardown it causes.
    this.take(id);
    exchange.reject(
      upstreamFailure(ErrorCode.REQUEST_TIMEOUT, `Upstream '${this.spec.name}' timed out: ${what}; the upstream was torn down`, this.spec.name, 'timeout'),
    );
    this.teardown(`${what} (${counters.dropped_lines} stdout lines dropped)`);
  };

  private abandon(id: number, reason: Error): void {
    const exchange = this.take(id);
    if (exchange === undefined) return;
    // The server stops the work it would answer nobody for (initialize may not be cancelled).
    if (exchange.write !== undefined && exchange.method !== 'initialize' && this.state === 'running') {
      try {
        this.stdin.write(notificationLine('notifications/cancelled', Buffer.from(JSON.stringify({ requestId: id, reason: reason.message }))));
      } catch {
        // stdin gone: the child is ending anyway.
      }
    }
    exchange.reject(new SupervisorError(ErrorCode.REQUEST_CANCELLED, `Upstream '${this.spec.name}': '${exchange.method}' cancelled: ${reason.message}`));
  }

  private take(id: number): Exchange | undefined {
    const exchange = this.pending.get(id);
    if (exchange === undefined) return undefined;
    this.pending.delete(id);
    clearTimeout(exchange.timer);
    exchange.offCancel?.();
    return exchange;
  }

  private failAll(errorFor: (exchange: Exchange) => Error): void {
    for (const id of [...this.pending.keys()]) {
      const exchange = this.take(id)!;
      exchange.reject(errorFor(exchange));
    }
  }

  private readonly onStdoutEnd = (): void => {
    if (this.stdoutEnded) return;
    this.stdoutEnded = true;
    if (this.exitStatus !== undefined) this.finish();
    // Closing stdout while alive means no answer can ever come again.
    else if (this.state === 'running') {
      setTimeout(() => {
        if (this.exitStatus === undefined) this.teardown('it closed its stdout');
      }, EXIT_STDOUT_GRACE_MS).unref();
    }
  };

  private readonly onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
    this.exitStatus = { code, signal };
    if (this.state === 'running') this.state = 'closing';
    // Answers written just before exiting may still sit in the pipe: let stdout hand them over,
    // but not for long (a grandchild holding stdout open must not delay failing the calls).
    if (this.stdoutEnded) this.finish();
    else this.exitGrace = setTimeout(() => this.finish(), EXIT_STDOUT_GRACE_MS);
  };

  private finish(): void {
    if (this.state === 'exited') return;
    this.state = 'exited';
    clearTimeout(this.exitGrace);
    const { code, signal } = this.exitStatus!;
    this.lines.end();
    for (let line = this.lines.shift(); line !== undefined; line = this.lines.shift()) this.handleLine(line);
    this.lines.clear();
    const how = exitHow(this.exitStatus!);
    const reason = this.endReason ?? `exited on its own (${how})`;
    this.failAll((exchange) =>
      upstreamFailure(
        ErrorCode.HANDLER_FAILED,
        this.endReason === undefined
          ? `Upstream '${this.spec.name}' exited (${how}) while '${exchange.method}' was pending`
          : `Upstream '${this.spec.name}' ${this.endReason} while '${exchange.method}' was pending`,
        this.spec.name,
        this.endReason === undefined ? 'exited' : this.endFailure,
      ),
    );
    this.stdin.destroy();
    this.child.stdout.destroy();
    this.stderr.end();
    // The leader is gone; whatever it started in its group goes with it.
    signalGroup(this.pid, 'SIGKILL');
    groupReaper.release(this.pid);
    this.sinks.exited({ pid: this.pid, code, signal, reason });
    this.settleExited();
  }

  private notRunning(method: string): SupervisorError {
    // Why, when known: a child that died at once fails its handshake with its exit status, not a bare "not running".
    const exit = this.exitStatus;
    const why = this.endReason ?? (exit === undefined ? undefined : `exited on its own (${exitHow(exit)})`);
    return upstreamFailure(
      ErrorCode.HANDLER_FAILED,
      `Upstream '${this.spec.name}' is not running${why === undefined ? '' : ` (${why})`}; '${method}' not sent`,
      this.spec.name,
      'not_running',
    );
  }
}

/** `code 3` or `signal SIGKILL`. */
function exitHow(exit: { code: number | null; signal: string | null }): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
