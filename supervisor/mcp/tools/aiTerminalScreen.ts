/**
 * The read side of `ai_terminal_*`: read_screen (the screen as text, or only what is new since a
 * cursor), wait_for (a regex on the screen, or the output settling), get_state and get_context.
 * Nothing here writes; every text comes from the pty host's line log and screen model, redacted there.
 */
import { Type } from 'typebox';

import { compileWatcherPattern, enableBacktrackFallback } from '../../../shared/watcherPatterns.js';
import { checkoutOf, headOf } from '../../repos/gitDirs.js';
import { readScreenTail } from '../../sessions/screenTail.js';
import { exitStatus, sessionState, type SessionRecord } from '../../sessions/sessionRecord.js';
import type { SessionService } from '../../sessions/sessionService.js';
import { sessionFor, sessionIdArg, type AiTerminalDeps } from './aiTerminalGuard.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

export const AiTerminalScreenConstants = {
  READ_DEFAULT_LINES: 50,
  READ_MAX_LINES: 500,
  WAIT_DEFAULT_MS: 10_000,
  /** What a longer wait runs as (a client gives up on a call at 300 s). */
  WAIT_MAX_MS: 295_000,
  STABILITY_DEFAULT_MS: 500,
  /** Output arriving in bursts is looked at once per this, not once per chunk. */
  RECHECK_MS: 25,
  /** Lines of text a pattern is matched against: the screen and this much scrollback above it. */
  MATCH_LINES: 200,
} as const;

/** The session's text: the last `lines` lines then the screen's non-empty rows, or only the lines logged since `sinceCursor`. */
export async function screenText(
  sessions: SessionService,
  record: SessionRecord,
  lines: number,
  sinceCursor?: number,
): Promise<{ screen: string; cursor: number }> {
  if (sinceCursor !== undefined) {
    const log = await sessions.readLog(record.session_id, sinceCursor, lines);
    return { screen: log.lines.join('\n'), cursor: log.offset + log.lines.length };
  }
  const { log, rows } = await readScreenTail(sessions, record.session_id, lines);
  return { screen: rows.slice(-lines).join('\n'), cursor: log.offset + log.lines.length };
}

/** shell_state, awaiting_input, agent_intent and agent_type as the screen tools report them. */
function stateFields(record: SessionRecord): Record<string, unknown> {
  const state = sessionState(record);
  const out: Record<string, unknown> = {
    shell_state: record.exit ? 'exited' : (state['shell_state'] ?? 'unknown'),
    awaiting_input: state['awaiting_input'] === true,
  };
  if (state['agent_intent'] !== undefined) out['agent_intent'] = state['agent_intent'];
  if (record.agent_type !== null) out['agent_type'] = record.agent_type;
  return out;
}

export function clampWaitMs(raw: number | undefined, fallback: number): number {
  if (raw === undefined || raw <= 0) return fallback;
  return Math.min(raw, AiTerminalScreenConstants.WAIT_MAX_MS);
}

/**
 * The pattern is run on the supervisor's loop against every screenful: one that can backtrack
 * without bound (`^(a+)+$`) would freeze it, so only patterns V8 can match in linear time are taken
 * (the same rule as output watchers), with the same backtracking fallback as in the pty host.
 */
export function patternArg(value: string, key: string): RegExp {
  const compiled = compileWatcherPattern(value, 'm');
  if (typeof compiled === 'string') throw new ToolError('invalid_input', `'${key}' is not a usable regular expression: ${compiled}`, { field: key });
  // The fast engine with V8's safety net: past a backtrack budget a match re-runs on the linear
  // engine (which alone is ~1000x slower on a screenful of ordinary text).
  enableBacktrackFallback();
  return compiled;
}

export interface WaitOutcome {
  matched: boolean;
  timed_out: boolean;
  exited?: boolean;
  match?: string;
}

/**
 * Until `pattern` shows in the session's text, or (no pattern) until no output arrived for
 * `stabilityMs`; woken by the session's output, never a polling loop.
 */
export function waitForScreen(
  sessions: SessionService,
  record: SessionRecord,
  opts: { pattern?: RegExp; timeoutMs: number; stabilityMs: number; signal: AbortSignal },
): Promise<WaitOutcome> {
  const { pattern } = opts;
  return new Promise<WaitOutcome>((resolveWait) => {
    let done = false;
    let quiet: NodeJS.Timeout | undefined;
    let recheck: NodeJS.Timeout | undefined;
    let checking = false;
    const finish = (outcome: WaitOutcome): void => {
      if (done) return;
      done = true;
      clearTimeout(overall);
      clearTimeout(quiet);
      clearTimeout(recheck);
      output.dispose();
      lifecycle.dispose();
      opts.signal.removeEventListener('abort', onAbort);
      resolveWait(outcome);
    };
    const check = async (): Promise<void> => {
      if (done || pattern === undefined) return;
      checking = true;
      try {
        const { screen } = await screenText(sessions, record, AiTerminalScreenConstants.MATCH_LINES);
        const m = pattern.exec(screen);
        if (m) finish({ matched: true, timed_out: false, match: m[0] });
      } catch {
        finish({ matched: false, timed_out: false, exited: true });
      } finally {
        checking = false;
      }
    };
    const schedule = (): void => {
      if (recheck !== undefined || done) return;
      recheck = setTimeout(() => {
        recheck = undefined;
        // A check in flight reads output that arrived before it answers; look again after it.
        if (checking) schedule();
        else void check();
      }, AiTerminalScreenConstants.RECHECK_MS);
    };
    const armQuiet = (): void => {
      clearTimeout(quiet);
      quiet = setTimeout(() => finish({ matched: true, timed_out: false }), opts.stabilityMs);
    };
    const onAbort = () => finish({ matched: false, timed_out: false });
    const overall = setTimeout(() => finish({ matched: false, timed_out: true }), opts.timeoutMs);
    const output = sessions.onActivity(record.session_id, () => (pattern ? schedule() : armQuiet()));
    const lifecycle = sessions.onLifecycle((event, r) => {
      if (r.session_id !== record.session_id || event !== 'closed') return;
      if (pattern) void check().then(() => finish({ matched: false, timed_out: false, exited: true }));
      else finish({ matched: true, timed_out: false, exited: true });
    });
    opts.signal.addEventListener('abort', onAbort, { once: true });
    if (pattern) void check();
    else armQuiet();
  });
}

/** The branch checked out where `cwd` is (a detached HEAD's short commit), from the HEAD file: no git process, no index lock. */
function gitBranchOf(cwd: string): string | null {
  const checkout = checkoutOf(cwd);
  const head = checkout === null ? null : headOf(checkout.gitDir);
  if (head === null) return null;
  return 'branch' in head ? head.branch : head.commit.slice(0, 12);
}

function terminalMode(record: SessionRecord): string {
  if (record.exit) return 'exited';
  return record.alt_screen ? 'fullscreen' : 'shell';
}

const waitMsArg = (key: string, description: string) =>
  Type.Integer({ minimum: 0, description, errorMessage: `'${key}' must be an integer >= 0 (milliseconds)` });

export function createScreenTools(deps: AiTerminalDeps): NativeTool[] {
  const { sessions } = deps;
  return [
    defineTool({
      name: 'ai_terminal_read_screen',
      summary:
        "Read a terminal session's text (ANSI-stripped, secrets redacted): the last `lines` lines ending with the current screen, or with since_cursor only the lines finished since that cursor. → {screen, cursor, shell_state (busy while the program works, idle at its prompt), awaiting_input, agent_intent?, agent_type?}. Pass the returned cursor as since_cursor next time.",
      properties: {
        session_id: sessionIdArg,
        lines: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: AiTerminalScreenConstants.READ_MAX_LINES,
            description: `Lines to return (default ${AiTerminalScreenConstants.READ_DEFAULT_LINES}, at most ${AiTerminalScreenConstants.READ_MAX_LINES})`,
            errorMessage: `'lines' must be an integer between 1 and ${AiTerminalScreenConstants.READ_MAX_LINES}`,
          }),
        ),
        since_cursor: Type.Optional(
          Type.Integer({ minimum: 0, description: 'A cursor from an earlier read: only newer lines', errorMessage: "'since_cursor' must be an integer >= 0" }),
        ),
      },
      required: ['session_id'],
      handler: async (args) => {
        const record = sessionFor(sessions, args['session_id'] as string);
        const text = await screenText(
          sessions,
          record,
          (args['lines'] as number | undefined) ?? AiTerminalScreenConstants.READ_DEFAULT_LINES,
          args['since_cursor'] as number | undefined,
        );
        return { ...text, ...stateFields(record) };
      },
    }),
    defineTool({
      name: 'ai_terminal_wait_for',
      summary:
        "Wait until a regex matches the session's text (the screen and the scrollback above it), or, without a pattern, until its output has been quiet for stability_ms. → {matched, timed_out, exited?, match?, screen, cursor, shell_state}.",
      properties: {
        session_id: sessionIdArg,
        pattern: Type.Optional(
          Type.String({
            minLength: 1,
            description: 'A JavaScript regular expression (multi-line: ^ and $ match at line ends)',
            errorMessage: "'pattern' must be a non-empty string",
          }),
        ),
        timeout_ms: Type.Optional(
          waitMsArg('timeout_ms', `How long to wait (default ${AiTerminalScreenConstants.WAIT_DEFAULT_MS}, at most ${AiTerminalScreenConstants.WAIT_MAX_MS})`),
        ),
        stability_ms: Type.Optional(waitMsArg('stability_ms', `Quiet time that counts as settled (default ${AiTerminalScreenConstants.STABILITY_DEFAULT_MS})`)),
      },
      required: ['session_id'],
      handler: async (args, caller) => {
        const record = sessionFor(sessions, args['session_id'] as string);
        const pattern = args['pattern'] === undefined ? undefined : patternArg(args['pattern'] as string, 'pattern');
        const outcome = await waitForScreen(sessions, record, {
          ...(pattern ? { pattern } : {}),
          timeoutMs: clampWaitMs(args['timeout_ms'] as number | undefined, AiTerminalScreenConstants.WAIT_DEFAULT_MS),
          stabilityMs: clampWaitMs(args['stability_ms'] as number | undefined, AiTerminalScreenConstants.STABILITY_DEFAULT_MS),
          signal: caller.signal,
        });
        const text = await screenText(sessions, record, AiTerminalScreenConstants.READ_DEFAULT_LINES).catch(() => ({ screen: '', cursor: 0 }));
        return { ...outcome, ...text, shell_state: stateFields(record)['shell_state'] };
      },
    }),
    defineTool({
      name: 'ai_terminal_get_state',
      summary:
        "A session's structured state: {session_id, alias, cwd, shell_state, agent_state?, agent_type?, awaiting_input, terminal_mode, exited, exit_code?, …}.",
      properties: { session_id: sessionIdArg },
      required: ['session_id'],
      handler: (args) => {
        const record = sessionFor(sessions, args['session_id'] as string);
        const code = record.exit ? exitStatus(record.exit) : null;
        return {
          session_id: record.session_id,
          alias: record.alias,
          cwd: record.cwd,
          ...sessionState(record),
          terminal_mode: terminalMode(record),
          exited: record.exit !== null,
          ...(code === null ? {} : { exit_code: code }),
        };
      },
    }),
    defineTool({
      name: 'ai_terminal_get_context',
      summary:
        'Cheap orientation for a session: {shell_state, cwd, git_branch (from .git/HEAD, no git process), last_exit_code (the session process, once it exited), agent_type, terminal_mode}.',
      properties: { session_id: sessionIdArg },
      required: ['session_id'],
      handler: async (args) => {
        const record = sessionFor(sessions, args['session_id'] as string);
        return {
          shell_state: stateFields(record)['shell_state'],
          cwd: record.cwd,
          git_branch: gitBranchOf(record.cwd),
          last_exit_code: record.exit ? exitStatus(record.exit) : null,
          agent_type: record.agent_type,
          terminal_mode: terminalMode(record),
        };
      },
    }),
  ];
}
