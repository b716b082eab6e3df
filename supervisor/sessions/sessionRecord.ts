/** What the supervisor knows about one session: identity, addresses, metadata, and its exit tombstone. */
import type { Static } from 'typebox';

import type { AgentType } from './agentDetection.js';
import { backgroundWorkOf } from './backgroundWork.js';
import { foregroundForListing } from './foreground.js';
import { type AgentSignals, activeSubtasks, awaitingInput, emptySignals, rateLimited, signalFields } from './agentSignals.js';
import type { SessionStateSchema } from './sessionSchemas.js';
import { type SessionWorktree, worktreeBranch } from './sessionWorktree.js';

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
  /** The name was set by a person (PUT /sessions/:id/name with isCustom): titles do not replace it. */
  display_name_is_custom: boolean;
  /** The name came with the create request (`display_name`): a title may still replace it. */
  display_name_from_spawn: boolean;
  /** Created by an API client (REST or MCP) rather than by a desktop window: every session tuicd has today. */
  is_remote: boolean;
  /** A viewer shows the session (POST /sessions/:id/visible); false until one says so. */
  visible: boolean;
  cwd: string;
  /** The linked git worktree the cwd lies in, found at creation; null outside one. */
  worktree: SessionWorktree | null;
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
  /** When the foreground process group was last looked at (on output activity, at most once a second). */
  agent_checked_ms: number;
  /** The foreground process group the last classification saw; null before any, or when unknown. */
  agent_fg_pgid: number | null;
  /** When the foreground was last classified (its program named and its paths read). */
  agent_classified_ms: number;
  /** What the output parser found about the agent (agentSignals.ts). */
  signals: AgentSignals;
  /** The session's turn epoch (SessionInput.turnEpoch), mirrored for state derivation. */
  turn_epoch: number;
  /** The last submitted line of at least 10 words (GET /sessions/:id/last-prompt). */
  last_prompt: string | null;
  /** The program drew on the alternate screen last (a full-screen TUI), as the pty host reports it. */
  alt_screen: boolean;
  /** turn_epoch when the current agent appeared: its tasks are the turns submitted after (the command that started it is not one). */
  agent_epoch: number;
  /** User commands waiting in the session's typed queue (POST /sessions/:id/queue). */
  queued_commands: number;
  /** The session outlives its process: no tombstone expiry after it exits by itself. */
  keep_open: boolean;
}

export type AgentState = 'starting' | 'working' | 'awaiting_input' | 'completed' | 'idle' | 'exited';

/**
 * The agent works without output: subtasks its footer counts, an API retry it waits out, or a
 * meaningful process it started (backgroundWork.ts).
 */
function backgroundWork(r: SessionRecord, now: number): boolean {
  if (activeSubtasks(r.signals, now) > 0 || r.signals.retryHoldUntil > now) return true;
  const fg = foregroundForListing(r.pid, now);
  return backgroundWorkOf(fg?.pid ?? r.pid, now);
}

/** The current turn was closed by a `suggest:` marker. */
function completed(r: SessionRecord): boolean {
  return r.signals.completedEpoch !== null && r.signals.completedEpoch === r.turn_epoch;
}

/** What a session's record starts with before anything was seen: no state, no output, no agent signals, no turns. */
export function freshRuntimeFields(now: number) {
  return {
    shell_state: null,
    shell_state_since_ms: now,
    last_activity_ms: now,
    total_written: 0,
    paused: false,
    exit: null,
    agent_checked_ms: 0,
    agent_fg_pgid: null,
    agent_classified_ms: 0,
    signals: emptySignals(),
    turn_epoch: 0,
    agent_epoch: 0,
    last_prompt: null,
    alt_screen: false,
    queued_commands: 0,
  } satisfies Partial<SessionRecord>;
}

/**
 * agent_state, only with an agent known, first match wins: exited; an open question or choice
 * prompt; background work; completion declared for this turn; busy; idle; else starting.
 */
export function agentState(r: SessionRecord, now = Date.now()): AgentState | null {
  if (r.agent_type === null) return null;
  if (r.exit) return 'exited';
  if (awaitingInput(r.signals) || r.signals.choice !== null) return 'awaiting_input';
  if (backgroundWork(r, now)) return 'working';
  if (completed(r)) return 'completed';
  if (r.shell_state === 'busy') return 'working';
  if (r.shell_state === 'idle') return 'idle';
  return 'starting';
}

/**
 * Whether the session's agent is on a task: a turn was submitted to it and not declared complete.
 * A rate-limit notice counts only then (history an agent replays at start is not a task).
 */
export function taskActive(r: SessionRecord): boolean {
  return r.agent_type !== null && !r.exit && !completed(r) && r.turn_epoch > r.agent_epoch;
}

/** A session's state as the schema declares it, plus the agent fields only some states carry (question_text, progress…). */
export type SessionState = Static<typeof SessionStateSchema> & Record<string, unknown>;

/** The SessionState wire object (SessionStateSchema): always-present fields, optional ones omitted. */
export function sessionState(r: SessionRecord, now = Date.now()): SessionState {
  const state: Record<string, unknown> = {
    awaiting_input: awaitingInput(r.signals),
    rate_limited: rateLimited(r.signals, now),
    last_activity_ms: r.last_activity_ms,
    ...signalFields(r.signals, now, r.turn_epoch),
  };
  if (r.shell_state) state['shell_state'] = completed(r) && !r.exit ? 'idle' : r.shell_state;
  const agent = agentState(r, now);
  if (agent !== null) state['agent_state'] = agent;
  if (r.agent_type !== null && !r.exit && backgroundWork(r, now)) state['background_work'] = true;
  if (r.agent_type !== null) state['agent_type'] = r.agent_type;
  if (r.last_prompt !== null) state['last_prompt'] = r.last_prompt;
  if (r.queued_commands > 0) state['queued_commands'] = r.queued_commands;
  if (!r.exit)
    state['terminal_mode'] = r.alt_screen ? { FullscreenTui: { app_hint: r.agent_type ?? foregroundForListing(r.pid)?.name ?? '', depth: 1 } } : 'Shell';
  // The agent fields signalFields adds are the schema's open part (additionalProperties).
  return state as SessionState;
}

/**
 * In standby: alive, at its prompt (idle) and untouched (no output, no input) for `afterMs`
 * (config `standby_timeout_minutes`; 0 never). A client may stop streaming such a session.
 */
export function inStandby(r: SessionRecord, afterMs: number, now = Date.now()): boolean {
  return afterMs > 0 && !r.exit && r.shell_state === 'idle' && now - r.last_activity_ms >= afterMs;
}

/** worktree_path and worktree_branch of a session in a linked worktree (the branch read now: it can change). */
export function worktreeFields(r: SessionRecord): { worktree_path?: string; worktree_branch?: string } {
  if (r.worktree === null) return {};
  const branch = worktreeBranch(r.worktree);
  return branch === null ? { worktree_path: r.worktree.path } : { worktree_path: r.worktree.path, worktree_branch: branch };
}

/** GET /sessions row: optional fields omitted rather than null; `standby` only when true. */
export function sessionInfo(r: SessionRecord, standby = false): Record<string, unknown> {
  const info: Record<string, unknown> = {
    session_id: r.session_id,
    cwd: r.cwd,
    ...worktreeFields(r),
    display_name: r.display_name,
    display_name_is_custom: r.display_name_is_custom,
    is_remote: r.is_remote,
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
  if (r.display_name_from_spawn) info['display_name_from_spawn'] = true;
  if (r.pty_description !== undefined) info['pty_description'] = r.pty_description;
  if (r.keep_open) info['keep_open'] = true;
  if (standby) info['standby'] = true;
  return info;
}

/** The exit status a caller sees: the code, or 128 + signal for a signalled process; null when unknown. */
export function exitStatus(exit: ExitInfo): number | null {
  if (exit.exit_code !== null) return exit.exit_code;
  return exit.signal !== null ? 128 + exit.signal : null;
}
