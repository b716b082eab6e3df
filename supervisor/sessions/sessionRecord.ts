/** What the supervisor knows about one session: identity, addresses, metadata, and its exit tombstone. */
import type { AgentType } from './agentDetection.js';

export type ShellStateName = 'busy' | 'idle';

export interface ExitInfo {
  exit_code: number | null;
  /** Signal number that ended the process, when one did. */
  signal: number | null;
  reason: string;
  at_ms: number;
  /**
   * The status above is final: the host reported the exit, or the host died (no report will come).
   * False between a kill or close, which mark the session closed at once, and the host's report.
   */
  reported: boolean;
}

export interface SessionRecord {
  session_id: string;
  /** The stable identity agents see as $TUIC_SESSION (the caller's, else the session id). */
  tuic_session: string;
  alias: string;
  display_name: string;
  cwd: string;
  shell: string;
  pid: number;
  rows: number;
  cols: number;
  created_ms: number;
  shell_state: ShellStateName | null;
  /** When shell_state last changed (creation time before the first observation). */
  shell_state_since_ms: number;
  last_activity_ms: number;
  total_written: number;
  paused: boolean;
  /** Orchestrator-written description of the work assigned to this PTY (session submit/input pty_description). */
  pty_description?: string;
  /** Set once the process exited (or its host died): the tombstone that keeps output readable. */
  exit: ExitInfo | null;
  /** The agent running in the session now (agentDetection.ts), null for none. */
  agent_type: AgentType | null;
  /** The type the session was created as (POST /sessions `agent_type`): detection's fallback. */
  spawn_agent_type: AgentType | null;
  /** When the foreground was last classified (on output activity, at most once a second). */
  agent_checked_ms: number;
}

export type AgentState = 'starting' | 'working' | 'idle' | 'exited';

/**
 * REFERENCE §2.6, as far as tuicd observes yet: only with an agent known; exited, then the shell
 * state (busy → working, idle → idle), else starting. Questions, choice prompts and completion
 * markers come with the output parser.
 */
export function agentState(r: SessionRecord): AgentState | null {
  if (r.agent_type === null) return null;
  if (r.exit) return 'exited';
  if (r.shell_state === 'busy') return 'working';
  if (r.shell_state === 'idle') return 'idle';
  return 'starting';
}

/** The SessionState wire object (REFERENCE §2.6): always-present fields, optional ones omitted. */
export function sessionState(r: SessionRecord): Record<string, unknown> {
  const state: Record<string, unknown> = { awaiting_input: false, rate_limited: false, last_activity_ms: r.last_activity_ms };
  if (r.shell_state) state['shell_state'] = r.shell_state;
  const agent = agentState(r);
  if (agent !== null) state['agent_state'] = agent;
  if (r.agent_type !== null) state['agent_type'] = r.agent_type;
  return state;
}

/** GET /sessions row: optional fields omitted rather than null. */
export function sessionInfo(r: SessionRecord): Record<string, unknown> {
  const info: Record<string, unknown> = {
    session_id: r.session_id,
    cwd: r.cwd,
    display_name: r.display_name,
    display_name_is_custom: false,
    is_remote: true,
    alias: r.alias,
    tuic_session: r.tuic_session,
    pid: r.pid,
    rows: r.rows,
    cols: r.cols,
    paused: r.paused,
    total_written: r.total_written,
    state: sessionState(r),
  };
  if (r.exit) info['exit'] = { exit_code: r.exit.exit_code, reason: r.exit.reason };
  return info;
}

/** The exit status a caller sees: the code, or 128 + signal for a signalled process; null when unknown. */
export function exitStatus(exit: ExitInfo): number | null {
  if (exit.exit_code !== null) return exit.exit_code;
  return exit.signal !== null ? 128 + exit.signal : null;
}
