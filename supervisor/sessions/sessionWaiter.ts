/**
 * `session action=wait`: blocks until a session is idle or has exited, woken by the session's own
 * shell-state and lifecycle events (never a polling loop), in three steps: answer an
 * already-met condition (the exit tombstone included), refuse an id that is not a session without
 * subscribing, then subscribe and re-check so a transition between the two is never lost.
 *
 * `exited` means the exit status is final (ExitInfo.reported). Kill and close mark the session
 * closed at once (session-closed comes before pty-exit) and the host reports the real status
 * a moment later (a hung-up child gets SIGKILL after 3 s): the wait holds out for that report, or for
 * the host's death, both of which SessionService announces as a lifecycle `exit`.
 */
import { foregroundJobRuns, foregroundOf } from './foreground.js';
import type { SessionInput } from './sessionInput.js';
import { exitStatus } from './sessionRecord.js';
import type { SessionRecord } from './sessionRecord.js';
import type { SessionService } from './sessionService.js';

export const WaitConstants = {
  DEFAULT_MS: 60_000,
  /** The advertised cap (WAIT_MAX_MS). */
  MAX_MS: 300_000,
  /** What a request at or above the cap runs as: clients that abort their own call at 300 s still get the answer. */
  EFFECTIVE_MAX_MS: 295_000,
} as const;

export const WAIT_UNTIL = ['idle', 'exited'] as const;
export type WaitUntil = (typeof WAIT_UNTIL)[number];

/** timeout_ms: 0/absent → 60000; ≥300000 → 295000. */
export function clampWaitTimeout(raw: unknown): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw <= 0) return WaitConstants.DEFAULT_MS;
  if (raw >= WaitConstants.MAX_MS) return WaitConstants.EFFECTIVE_MAX_MS;
  return Math.floor(raw);
}

export type WaitAnswer =
  | { met: true; timed_out: false; until: WaitUntil; shell_state?: string; exit_code?: number }
  | { met: false; timed_out: boolean; until: WaitUntil }
  | { error: string };

/** Idle as a caller means it: quiet output, no submit in flight, and the shell (or an agent) holds the terminal. */
export function sessionIdle(record: SessionRecord, input: SessionInput): boolean {
  if (record.exit) return true;
  return record.shell_state === 'idle' && !input.claimed && !foregroundJobRuns(foregroundOf(record.pid));
}

function conditionMet(sessions: SessionService, record: SessionRecord, until: WaitUntil): boolean {
  if (until === 'exited') return record.exit?.reported === true;
  return sessionIdle(record, sessions.inputOf(record));
}

function metAnswer(record: SessionRecord, until: WaitUntil): WaitAnswer {
  const answer: { met: true; timed_out: false; until: WaitUntil; shell_state?: string; exit_code?: number } = { met: true, timed_out: false, until };
  if (record.shell_state) answer.shell_state = record.shell_state;
  const code = record.exit ? exitStatus(record.exit) : null;
  if (code !== null) answer.exit_code = code;
  return answer;
}

export async function waitForSession(sessions: SessionService, ref: string, until: WaitUntil, timeoutMs: number, signal?: AbortSignal): Promise<WaitAnswer> {
  // 1. Already met: the tombstone outlives the process, so an exited child answers here.
  const record = sessions.resolve(ref);
  if (record && conditionMet(sessions, record, until)) return metAnswer(record, until);
  // 2. Not a session: refuse before subscribing to anything.
  if (!record) return { error: `Unknown session "${ref}"` };
  if (signal?.aborted) return { met: false, timed_out: false, until };

  // 3. Subscribe, then re-check.
  return new Promise<WaitAnswer>((resolve) => {
    let done = false;
    const finish = (answer: WaitAnswer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      state.dispose();
      lifecycle.dispose();
      signal?.removeEventListener('abort', onAbort);
      resolve(answer);
    };
    const check = (r: SessionRecord): void => {
      if (r !== record || done) return;
      if (conditionMet(sessions, record, until)) finish(metAnswer(record, until));
    };
    const onAbort = (): void => finish({ met: false, timed_out: false, until });
    const state = sessions.onShellState(check);
    const lifecycle = sessions.onLifecycle((_event, r) => check(r));
    // A closed session has exited for a caller whose deadline comes first, with or without its status.
    const timer = setTimeout(() => finish(record.exit ? metAnswer(record, until) : { met: false, timed_out: true, until }), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    check(record);
  });
}
