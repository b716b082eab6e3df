/**
 * Task handles for long-running agents (the `task` tool): `agent action=spawn` creates one per live
 * PTY, the session's exit drives it to completed/failed whether or not anyone listens, and `task
 * action=get` polls it instead of holding a wait open past the 300 s ceiling. Terminal states never
 * change again. In memory only, reaped 24 h after creation by the MCP session reaper (a TUIC
 * restart tears down every PTY, so a persisted task would describe nothing).
 */
import { randomUUID } from 'node:crypto';

import type { Disposable } from '../../shared/disposable.js';
import { exitStatus } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';

export const TaskConstants = {
  /** TASK_TTL_SECS. */
  TTL_MS: 86_400 * 1000,
  /** TASK_POLL_INTERVAL_MS: what get tells a client to poll at. */
  POLL_INTERVAL_MS: 1000,
} as const;

/** The MCP Tasks vocabulary, as on the wire. */
export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL.has(status);
}

export interface TaskResult {
  session_id: string;
  exit_code: number;
}

export interface Task {
  readonly task_id: string;
  readonly session_id: string;
  /** The identity that created it (TUIC identity, or the MCP session id of a caller not yet bound). */
  readonly owner: string;
  readonly created_ms: number;
  status: TaskStatus;
  status_message?: string;
  result?: TaskResult;
  error_detail?: string;
}

/** Fields a transition may set alongside the status. */
export interface TransitionFields {
  status_message?: string;
  result?: TaskResult;
  error_detail?: string;
}

export interface TaskRegistryOptions {
  /** When given, the registry follows session exits itself. */
  sessions?: SessionService;
  now?: () => number;
}

export class TaskRegistry implements Disposable {
  private readonly tasks = new Map<string, Task>();
  private readonly now: () => number;
  private readonly subscription: Disposable | undefined;

  constructor(opts: TaskRegistryOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.subscription = opts.sessions?.onLifecycle((event, record) => {
      // `exit`, not `closed`: a kill or close closes the session before the host reports its status.
      if (event !== 'exit' || !record.exit) return;
      const code = exitStatus(record.exit);
      this.markSessionExited(record.session_id, code, record.exit.reason);
    });
  }

  get size(): number {
    return this.tasks.size;
  }

  /** A working task for a live PTY, owned by `ownerIdentity`. */
  create(sessionId: string, ownerIdentity: string): Task {
    const task: Task = {
      task_id: randomUUID(),
      session_id: sessionId,
      owner: ownerIdentity,
      created_ms: this.now(),
      status: 'working',
      status_message: 'agent running',
    };
    this.tasks.set(task.task_id, task);
    return task;
  }

  get(taskId: string): Task | undefined {
    return this.tasks.get(taskId);
  }

  /**
   * Moves a task to `to`; false (and nothing changes) when it is unknown or already terminal.
   * Check and write happen in one synchronous step, so of racing terminal transitions exactly one wins.
   */
  transition(taskId: string, to: TaskStatus, fields: TransitionFields = {}): boolean {
    const task = this.tasks.get(taskId);
    if (!task || isTerminal(task.status)) return false;
    task.status = to;
    if (fields.status_message !== undefined) task.status_message = fields.status_message;
    else delete task.status_message;
    if (fields.result !== undefined) task.result = fields.result;
    if (fields.error_detail !== undefined) task.error_detail = fields.error_detail;
    return true;
  }

  /** Cancels without touching the agent; false when the task was already terminal (its state stands). */
  cancel(taskId: string): boolean {
    return this.transition(taskId, 'cancelled', { status_message: 'cancelled by its owner; the agent was not stopped' });
  }

  /** Drives every live task of the session to completed (exit 0) or failed (anything else). */
  markSessionExited(sessionId: string, exitCode: number | null, reason = 'exit'): void {
    for (const task of this.tasks.values()) {
      if (task.session_id !== sessionId || isTerminal(task.status)) continue;
      if (exitCode === 0) {
        this.transition(task.task_id, 'completed', { status_message: 'agent exited with code 0', result: { session_id: sessionId, exit_code: 0 } });
        continue;
      }
      const detail =
        exitCode === null
          ? `session ended without an exit status (${reason})`
          : reason === 'exit'
            ? `agent exited with code ${exitCode}`
            : `session ${reason} (exit status ${exitCode})`;
      const fields: TransitionFields = { status_message: detail, error_detail: detail };
      // An unknown status has no result rather than a null exit_code.
      if (exitCode !== null) fields.result = { session_id: sessionId, exit_code: exitCode };
      this.transition(task.task_id, 'failed', fields);
    }
  }

  /** Drops tasks created more than TTL_MS before `nowMs`; returns how many. Called by the MCP session reaper. */
  reapExpired(nowMs: number): number {
    let reaped = 0;
    for (const [id, task] of this.tasks) {
      if (nowMs - task.created_ms >= TaskConstants.TTL_MS) {
        this.tasks.delete(id);
        reaped++;
      }
    }
    return reaped;
  }

  dispose(): void {
    this.subscription?.dispose();
    this.tasks.clear();
  }
}
