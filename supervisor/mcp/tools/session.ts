/**
 * `session`: the terminal sessions this server runs, for an agent: list, create, submit a command
 * with a receipt, raw input, output (text tail or deltas, raw bytes), status, wait, resize, close,
 * kill, pause/resume, process stats. Every session_id accepts the three addresses
 * SessionService.resolve knows; a reference that resolves to nothing passes through and the action
 * reports its own error. The input schema is the argument check; what stays here is per action
 * (which arguments an action needs) and about state (the session exists, is not the caller's own).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { Type } from 'typebox';

import { ApiError } from '../../../shared/apiError.js';
import { PtyConstants } from '../../../shared/protocol/pty.js';
import { ProcessStats } from '../../processStats.js';
import { foregroundForListing, foregroundOf } from '../../sessions/foreground.js';
import { readScreenTail } from '../../sessions/screenTail.js';
import { exitStatus, sessionState, type SessionRecord, worktreeFields } from '../../sessions/sessionRecord.js';
import type { SessionService } from '../../sessions/sessionService.js';
import { SessionConstants } from '../../sessions/sessionService.js';
import { WAIT_UNTIL, clampWaitTimeout, waitForSession, type WaitUntil } from '../../sessions/sessionWaiter.js';
import { clientSubmit, commandText, framedLine, SubmitConstants } from '../../sessions/submission.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { CallerContext, NativeTool, ToolValue } from './nativeTool.js';
import { SPECIAL_KEY_NAMES, translateSpecialKey } from './specialKeys.js';

interface SessionToolDeps {
  sessions: SessionService;
}

const SessionToolConstants = {
  /** output text mode: lines when `limit` is absent. */
  OUTPUT_DEFAULT_LINES: 50,
  /** output raw mode: bytes when `limit` is absent. */
  OUTPUT_DEFAULT_BYTES: 8192,
  /** The pty host keeps this many log lines; a larger limit reads no more. */
  OUTPUT_MAX_LINES: 10_000,
} as const;

/** Write and lifecycle actions a remote (non-loopback) caller may not use. */
const LOOPBACK_ONLY: ReadonlySet<string> = new Set(['create', 'submit', 'input', 'kill', 'close', 'pause', 'resume']);
const LOOPBACK_REFUSAL = 'This session action is restricted to localhost connections';
/** What every refused or failed read of a missing session says: it never existed, or its tombstone expired. */

const NOT_FOUND_OR_REAPED = { reason: 'session_not_found_or_reaped' } as const;

/** Agents whose composer only prefills: text and Enter in one chunk is a paste, the Enter a newline in it. */
const PREFILL_ONLY_AGENTS: ReadonlySet<string> = new Set(['codex', 'opencode']);
const ENTER_KEY = translateSpecialKey('enter');

function runsPrefillOnlyAgent(record: SessionRecord): boolean {
  const name = foregroundOf(record.pid)?.name.toLowerCase();
  return name !== undefined && PREFILL_ONLY_AGENTS.has(name);
}

/**
 * The legacy combined text + Enter into a prefill-only agent, whose composer would take the Enter
 * as a newline in a paste: Ctrl-U, the text (one bracketed paste when multi-line), the
 * INJECT_ENTER_GAP, then CR — under one hold of the writer lock, with the same raw bookkeeping as
 * any input write. Write-only: no receipt.
 */
async function writePrefillInput(sessions: SessionService, record: SessionRecord, text: string): Promise<void> {
  const first = await framedLine(sessions, record, text);
  const input = sessions.inputOf(record);
  // A function, not a property read: the exit can land during the awaits in between.
  const refuseIfExited = (when: string): void => {
    if (record.exit) throw new ToolError('conflict', `Session has exited (${record.exit.reason})${when}`);
  };
  await input.lock.run(async () => {
    refuseIfExited('');
    await sessions.writeHeld(record, first, () => input.noteRawWrite(first));
    await sleep(SubmitConstants.ENTER_GAP_MS);
    refuseIfExited(' before Enter');
    await sessions.writeHeld(record, ENTER_KEY, () => input.noteRawWrite(ENTER_KEY));
  });
}

/** The arguments as the schema checked them. */
interface SessionArgs {
  action: string;
  session_id?: string;
  input?: string;
  special_key?: string;
  /** undefined keeps, null or "" clears, a string sets. */
  pty_description?: string | null;
  until?: WaitUntil;
  timeout_ms?: number;
  rows?: number;
  cols?: number;
  shell?: string;
  cwd?: string;
  limit?: number;
  from_line?: number;
  format?: 'text' | 'raw';
  since_cursor?: number;
}

/** The session an action addresses; the schema made it a string, the action needs it. */
function requireSessionId(args: SessionArgs): string {
  const ref = args.session_id;
  if (ref === undefined || ref === '') throw new ToolError('invalid_input', `Action '${args.action}' requires 'session_id'`, { field: 'session_id' });
  return ref;
}

/** `'<key>' must be a string`: the wording the session tool has always used for a mistyped text argument. */
const textArg = (key: string, options: Record<string, unknown> = {}) => Type.String({ ...options, errorMessage: `'${key}' must be a string` });

/** An integer argument at least `min`, in the session tool's wording. */
const intArg = (key: string, min: number, options: Record<string, unknown> = {}) =>
  Type.Integer({ ...options, minimum: min, errorMessage: `'${key}' must be an integer >= ${min}, got {json}` });

/** A terminal dimension, in the wording the session routes use too. */
const dimension = (key: 'rows' | 'cols') =>
  Type.Integer({
    minimum: 1,
    maximum: PtyConstants.MAX_TERMINAL_DIMENSION,
    errorMessage: `${key} must be between 1 and ${PtyConstants.MAX_TERMINAL_DIMENSION}, got {got}`,
  });

/** The caller's own terminal: the PTY its identity is bound to (never compared by raw PTY id alone). */
function isCallerSession(record: SessionRecord, caller: CallerContext): boolean {
  if (caller.boundSessionId !== null) return record.session_id === caller.boundSessionId;
  return caller.tuicSession !== null && record.tuic_session === caller.tuicSession;
}

function isSelf(ref: string, record: SessionRecord | undefined, caller: CallerContext): boolean {
  if (record) return isCallerSession(record, caller);
  return caller.boundSessionId !== null && ref === caller.boundSessionId;
}

function listEntry(record: SessionRecord, caller: CallerContext, standby: boolean): Record<string, unknown> {
  const entry: Record<string, unknown> = { session_id: record.session_id, is_caller: isCallerSession(record, caller) };
  if (record.alias) entry['alias'] = record.alias;
  if (record.display_name) entry['display_name'] = record.display_name;
  if (record.pty_description !== undefined) entry['pty_description'] = record.pty_description;
  if (record.cwd) entry['cwd'] = record.cwd;
  Object.assign(entry, worktreeFields(record));
  const fg = foregroundForListing(record.pid);
  if (fg) entry['foreground_process'] = fg.name;
  const state = sessionState(record);
  if (state['shell_state']) entry['shell_state'] = state['shell_state'];
  if (state['agent_state'] !== undefined) entry['agent_state'] = state['agent_state'];
  if (state['awaiting_input'] === true) entry['awaiting_input'] = true;
  if (state['background_work'] === true) entry['background_work'] = true;
  if (standby) entry['standby'] = true;
  entry['tuic_session'] = record.tuic_session;
  return entry;
}

function statusOf(record: SessionRecord, standby: boolean): Record<string, unknown> {
  const state = sessionState(record);
  const status: Record<string, unknown> = {
    session_id: record.session_id,
    background_work: state['background_work'] === true,
    awaiting_input: state['awaiting_input'],
    rate_limited: state['rate_limited'],
    delivery_uncertain: false,
    last_activity_ms: record.last_activity_ms,
    standby,
  };
  for (const field of ['question_text', 'question_confident', 'retry_after_ms', 'choice_prompt', 'agent_intent', 'last_error'] as const) {
    if (state[field] !== undefined) status[field] = state[field];
  }
  if (state['shell_state']) status['shell_state'] = state['shell_state'];
  if (state['agent_state'] !== undefined) status['agent_state'] = state['agent_state'];
  if (record.agent_type !== null) status['agent_type'] = record.agent_type;
  const code = record.exit ? exitStatus(record.exit) : null;
  if (code !== null) status['exit_code'] = code;
  if (!record.exit && record.shell_state === 'idle') status['idle_since_ms'] = record.shell_state_since_ms;
  if (!record.exit && record.shell_state === 'busy') status['busy_duration_ms'] = Math.max(0, Date.now() - record.shell_state_since_ms);
  return status;
}

function exitFields(record: SessionRecord): { exited: boolean; exit_code?: number } {
  const code = record.exit ? exitStatus(record.exit) : null;
  return code === null ? { exited: record.exit !== null } : { exited: true, exit_code: code };
}

const DESCRIPTION_NOTES = `Rules:
- Run a command with one submit. Never split command text and Enter across two calls (input, then special_key=enter).
- retry_safe:true: nothing was written (reason: shell_busy, agent_busy, turn_in_flight, foreground_job_running, shell_state_unconfirmed, composer_partial, session_exited, session_not_found; queued_commands_pending: commands queued for the session (POST /sessions/:id/queue) go first; confident_dialog: an agent's approval or choice prompt is open, answer it with input); wait until=idle or clear the line (special_key=ctrl+u), then submit again. retry_safe:false: bytes were written; read output before resending. acknowledged only proves the terminal moved, not that the command succeeded.
- foreground_job_running: a program other than the shell or a known agent holds the terminal (idle waits for it too); talk to it with input.
- special_key: ${SPECIAL_KEY_NAMES.join(', ')}.
- pty_description (submit, input): a string sets, null or "" clears, omitted keeps.
- exit_code appears once known; 128+N when signal N killed the process. An exited session stays readable for ${SessionConstants.TOMBSTONE_TTL_MS / 60_000} minutes.
- You cannot close or kill your own session (is_caller).
- create, submit, input, close, kill, pause, resume: local callers only.`;

export function createSessionTool(deps: SessionToolDeps): NativeTool {
  const { sessions } = deps;
  const stats = new ProcessStats();

  const output = async (args: SessionArgs): Promise<ToolValue> => {
    const ref = requireSessionId(args);
    const { limit, from_line: fromLine, since_cursor: sinceCursor } = args;
    const record = sessions.resolve(ref);
    if (!record) throw new ToolError('not_found', 'Session not found', NOT_FOUND_OR_REAPED);
    try {
      if (args.format === 'raw') {
        const r = await sessions.readRaw(record.session_id, undefined, limit ?? SessionToolConstants.OUTPUT_DEFAULT_BYTES);
        const data = Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength).toString('utf8');
        return { data, data_length: r.bytes.byteLength, total_written: r.total_written, ...exitFields(record) };
      }
      const lines = Math.min(limit ?? SessionToolConstants.OUTPUT_DEFAULT_LINES, SessionToolConstants.OUTPUT_MAX_LINES);
      const offset = sinceCursor ?? fromLine;
      let log: Awaited<ReturnType<typeof sessions.readLog>>;
      let rows: string[];
      if (offset === undefined) {
        // Tail mode: `limit` scrollback lines, then the non-empty rows of the current screen.
        ({ log, rows } = await readScreenTail(sessions, record.session_id, lines, SessionToolConstants.OUTPUT_MAX_LINES));
      } else {
        log = await sessions.readLog(record.session_id, offset, lines);
        // Delta reads carry only finished scrollback lines; a from_line range that reaches the end of
        // the log shows the unfinished line too (after a page from the middle it would not follow on).
        const reachesEnd = log.offset + log.lines.length >= log.total_lines;
        rows = sinceCursor === undefined && reachesEnd && log.partial !== '' ? [...log.lines, log.partial] : log.lines;
      }
      const data = rows.join('\n');
      return {
        data,
        data_length: data.length,
        // Right after the last line read: a delta capped by `limit` resumes where it stopped.
        cursor: log.offset + log.lines.length,
        total_written: log.total_lines,
        scrollback_lines: log.total_lines - log.oldest_offset,
        oldest_offset: log.oldest_offset,
        ...exitFields(record),
      };
    } catch (err) {
      // The host dropped the buffers (tombstone expired between resolve and read).
      if (err instanceof ApiError && err.code === 'gone') throw new ToolError('not_found', 'Session not found', NOT_FOUND_OR_REAPED);
      throw err;
    }
  };

  const input = async (args: SessionArgs): Promise<ToolValue> => {
    const ref = requireSessionId(args);
    const { input: text, special_key: key, pty_description: description } = args;
    const hasText = text !== undefined && text !== '';
    if (!hasText && key === undefined && description === undefined) {
      throw new ToolError('invalid_input', "Action 'input' requires 'input' (text), 'special_key', or 'pty_description'", { field: 'input' });
    }
    let keyBytes: Buffer | undefined;
    if (key !== undefined) {
      try {
        keyBytes = translateSpecialKey(key);
      } catch (err) {
        throw new ToolError('invalid_input', (err as Error).message, { field: 'special_key' });
      }
    }
    const record = hasText && keyBytes?.equals(ENTER_KEY) ? sessions.resolve(ref) : undefined;
    if (hasText && record && !record.exit && runsPrefillOnlyAgent(record)) {
      await writePrefillInput(sessions, record, text);
    } else {
      const parts: Uint8Array[] = [];
      if (hasText) parts.push(Buffer.from(text, 'utf8'));
      if (keyBytes) parts.push(keyBytes);
      if (parts.length > 0) await sessions.writeSequence(ref, parts);
    }
    if (description !== undefined) sessions.setDescription(ref, description);
    return { ok: true };
  };

  const submit = async (args: SessionArgs, caller: CallerContext): Promise<ToolValue> => {
    const ref = requireSessionId(args);
    const { input: text, pty_description: description } = args;
    if (text === undefined || commandText(text) === '')
      throw new ToolError('invalid_input', "Action 'submit' requires a non-empty 'input' (the command)", { field: 'input' });
    const receipt = await clientSubmit(sessions, ref, text, { timeoutMs: args.timeout_ms, description, signal: caller.signal });
    return receipt as unknown as ToolValue;
  };

  const wait = async (args: SessionArgs, caller: CallerContext): Promise<ToolValue> => {
    const ref = requireSessionId(args);
    const answer = await waitForSession(sessions, ref, args.until ?? 'idle', clampWaitTimeout(args.timeout_ms), caller.signal);
    if ('error' in answer) throw new ToolError('not_found', answer.error);
    return answer;
  };

  const close = async (args: SessionArgs, caller: CallerContext): Promise<ToolValue> => {
    const ref = requireSessionId(args);
    const record = sessions.resolve(ref);
    if (isSelf(ref, record, caller)) throw new ToolError('forbidden', 'Cannot close own session. Use exit to terminate yourself.');
    // Idempotent: gone or already exited is done; the tombstone stays readable.
    if (record && !record.exit) await sessions.close(record.session_id, 'closed');
    return { ok: true };
  };

  const kill = async (args: SessionArgs, caller: CallerContext): Promise<ToolValue> => {
    const ref = requireSessionId(args);
    const record = sessions.resolve(ref);
    if (isSelf(ref, record, caller)) throw new ToolError('forbidden', 'Cannot kill own session. Use exit to terminate yourself.');
    if (!record) throw new ToolError('not_found', 'Session not found');
    await sessions.kill(record.session_id);
    return { ok: true };
  };

  const processStats = async (): Promise<ToolValue> => {
    const running = await sessions.processes();
    const roots = running
      .filter((p) => sessions.resolve(p.session_id)?.exit === null)
      .map((p) => ({ kind: 'session' as const, pid: p.pid, session_id: p.session_id }));
    const rows = stats.sample(roots);
    return { processes: rows.map((r) => ({ session_id: r.session_id, name: r.name, pid: r.pid, rss_kb: r.rss_kb, cpu_pct: r.cpu_pct })) };
  };

  const dispatch = async (args: SessionArgs, caller: CallerContext): Promise<ToolValue> => {
    switch (args.action) {
      case 'list':
        return sessions.list().map((r) => listEntry(r, caller, sessions.isStandby(r)));
      case 'create': {
        // The same checks as POST /sessions (sizes, cwd, the session cap) are the session layer's.
        const record = await sessions.create({ rows: args.rows, cols: args.cols, shell: args.shell, cwd: args.cwd });
        return { session_id: record.session_id };
      }
      case 'submit':
        return submit(args, caller);
      case 'input':
        return input(args);
      case 'output':
        return output(args);
      case 'status': {
        const ref = requireSessionId(args);
        const record = sessions.resolve(ref);
        if (!record) throw new ToolError('not_found', `Session '${ref}' not found`);
        return statusOf(record, sessions.isStandby(record));
      }
      case 'wait':
        return wait(args, caller);
      case 'resize':
        await sessions.resize(requireSessionId(args), args.rows, args.cols);
        return { ok: true };
      case 'close':
        return close(args, caller);
      case 'kill':
        return kill(args, caller);
      case 'pause':
      case 'resume':
        await sessions.setPaused(requireSessionId(args), args.action === 'pause');
        return { ok: true };
      default:
        return processStats();
    }
  };

  const tool: NativeTool = defineTool({
    name: 'session',
    summary: "Terminal sessions (PTYs) of this server. session_id accepts a session's id, its tuic_session or its alias (e.g. tu-1).",
    actions: {
      list: 'all live sessions in one call: session_id, is_caller (your own session), alias, display_name, pty_description, cwd, worktree_path and worktree_branch (in a linked git worktree), foreground_process, shell_state (busy|idle; absent until observed), standby (only when true: idle and untouched for standby_timeout_minutes), tuic_session',
      create: 'start a shell (shell, cwd, rows/cols 1-500, default 24x80) → {session_id}',
      submit:
        'run one command: clears the line, types input (multi-line as one paste), presses Enter, waits up to timeout_ms (default 3000, 250-10000) for the terminal to move → receipt {submission_id, submitted, write_state, acknowledged, retry_safe, turn_epoch, composer_state, acknowledgement|reason}',
      input:
        'raw keystrokes: input text and/or special_key, no Enter unless sent (text + enter into Codex/OpenCode goes framed: Ctrl-U, paste, gap, CR) → {ok:true} (proves the write only)',
      output:
        'text (default; ANSI-stripped, redacted): the last limit lines (default 50) then the non-empty current screen rows; from_line, or since_cursor=<cursor> for only newer lines (no screen) → {data, data_length, cursor, total_written, scrollback_lines, oldest_offset, exited, exit_code?}; format=raw keeps escapes, limit in bytes (default 8192)',
      status: '{session_id, shell_state?, last_activity_ms, exit_code?, idle_since_ms?, busy_duration_ms?, …}',
      wait: 'block until until=idle (default: output quiet, shell at its prompt) or exited; timeout_ms default 60000, 300000+ runs as 295000 → {met, timed_out, until, shell_state?, exit_code?}. Prefer it to polling',
      resize: 'rows, cols (1-500) → {ok:true}',
      close: 'Ctrl-C, then hang-up; idempotent → {ok:true}',
      kill: 'SIGKILL → {ok:true}',
      pause: 'stop reading output (the program blocks; nothing is lost) → {ok:true}',
      resume: 'undo pause → {ok:true}',
      process_stats: '{processes:[{session_id, name, pid, rss_kb, cpu_pct}]}',
    },
    notes: DESCRIPTION_NOTES,
    // create's properties are the ones POST /sessions takes under the same names; the session layer checks their values.
    properties: {
      session_id: Type.Optional(textArg('session_id', { description: 'id, tuic_session or alias (every action but list, create, process_stats)' })),
      input: Type.Optional(textArg('input', { description: 'submit: the command; input: raw text' })),
      special_key: Type.Optional(textArg('special_key')),
      pty_description: Type.Optional(Type.Union([Type.String(), Type.Null()], { errorMessage: "'pty_description' must be a string or null" })),
      until: Type.Optional(Type.String({ enum: [...WAIT_UNTIL], errorMessage: "wait 'until' must be 'idle' or 'exited'" } as never)),
      // Any number: submit clamps to 250-10000, wait to 295000 at most; zero or less means the default.
      timeout_ms: Type.Optional(
        Type.Number({
          description: 'submit: acknowledgement wait; wait: how long to block (out of range: clamped)',
          errorMessage: "'timeout_ms' must be a number",
        }),
      ),
      rows: Type.Optional(dimension('rows')),
      cols: Type.Optional(dimension('cols')),
      shell: Type.Optional(textArg('shell')),
      cwd: Type.Optional(textArg('cwd')),
      limit: Type.Optional(intArg('limit', 1)),
      from_line: Type.Optional(intArg('from_line', 0)),
      format: Type.Optional(Type.String({ enum: ['text', 'raw'], errorMessage: "'format' must be 'raw' or 'text', got '{got}'" } as never)),
      since_cursor: Type.Optional(intArg('since_cursor', 0)),
    },
    handler: (raw, caller) => {
      const args = raw as unknown as SessionArgs;
      if (LOOPBACK_ONLY.has(args.action) && !caller.isLoopback) throw new ToolError('forbidden', LOOPBACK_REFUSAL);
      return dispatch(args, caller);
    },
  });
  return tool;
}
