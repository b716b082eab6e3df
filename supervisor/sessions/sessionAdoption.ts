/**
 * Sessions outlive the supervisor in a detached pty host: the supervisor's record of each one
 * (aliases, names, agent type and parsed signals, turn epochs, cwd…) travels to the host as opaque
 * JSON (`record` events, sent when it changed) and comes back to the next supervisor on `adopt`.
 * What the host knows better (pid, bytes written, busy/idle, whether the child exited) wins over
 * the record; a session without a record (the supervisor died before sending one) gets a blank one.
 */
import type { AdoptResult } from '../hosts/ptyHost.js';
import { emptySignals } from './agentSignals.js';
import { freshRuntimeFields, type SessionRecord } from './sessionRecord.js';

type AdoptedSession = AdoptResult['sessions'][number];

/** How often changed records are sent to the host: what a crash may lose is this much of the newest state. */
export const RECORD_SYNC_MS = 1_000;

/**
 * Fields that move with every batch of output or every detection tick: left out, so a busy session's
 * record reads the same from one sync to the next and is not sent again each second. The host knows
 * the bytes written; the others restart from the adoption.
 */
/** The record as the host keeps it (a copy without those fields: JSON.stringify with a replacer function is several times slower). */
export function recordJson(record: SessionRecord): string {
  const { total_written: _written, last_activity_ms: _activity, agent_checked_ms: _checked, ...kept } = record;
  return JSON.stringify(kept);
}

function blankRecord(s: AdoptedSession, now: number): SessionRecord {
  return {
    session_id: s.session_id,
    tuic_session: s.session_id,
    alias: '',
    display_name: s.shell.split('/').pop() || 'shell',
    display_name_is_custom: false,
    display_name_from_spawn: false,
    is_remote: true,
    visible: false,
    worktree: null,
    cwd: '/',
    shell: s.shell,
    pid: s.pid,
    rows: 24,
    cols: 80,
    created_ms: now,
    ...freshRuntimeFields(now),
    agent_type: null,
    spawn_agent_type: null,
    keep_open: false,
  };
}

/** The record stored with the session, if it is one of ours; else null (blank it). */
function parseRecord(s: AdoptedSession): Partial<SessionRecord> | null {
  if (s.record === undefined) return null;
  try {
    const parsed = JSON.parse(s.record) as unknown;
    if (typeof parsed !== 'object' || parsed === null || (parsed as { session_id?: unknown }).session_id !== s.session_id) return null;
    return parsed as Partial<SessionRecord>;
  } catch {
    return null;
  }
}

/**
 * The adopted session's record, as live (the caller replays an exit the host reports). Agent
 * detection goes on from where it was (same process, same foreground group).
 */
export function adoptedRecord(s: AdoptedSession, now = Date.now()): SessionRecord {
  const record: SessionRecord = { ...blankRecord(s, now), ...parseRecord(s) };
  record.session_id = s.session_id;
  if (s.exit === null) record.pid = s.pid;
  record.total_written = s.total_written;
  if (s.shell_state !== null && s.shell_state !== record.shell_state) {
    record.shell_state = s.shell_state;
    record.shell_state_since_ms = now;
  }
  record.signals = { ...emptySignals(), ...record.signals };
  record.exit = null;
  return record;
}
