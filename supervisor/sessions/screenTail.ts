/**
 * A tail read of a session's text: the last lines of its log, then the non-empty rows of its
 * current screen, each line shown once (log lines still on the screen are shown as screen rows).
 * The `session` tool's `output` and `ai_terminal_read_screen` both read it.
 */
import { PtyConstants } from '../../shared/protocol/pty.js';
import { screenOverlap } from './screenOverlap.js';
import type { SessionService } from './sessionService.js';

type LogRead = Awaited<ReturnType<SessionService['readLog']>>;

/** `lines` of scrollback then the screen's rows; `maxReadLines` bounds the log read (a screenful more than `lines`). */
export async function readScreenTail(
  sessions: SessionService,
  sessionId: string,
  lines: number,
  maxReadLines = Number.POSITIVE_INFINITY,
): Promise<{ log: LogRead; rows: string[] }> {
  // Sent in this order and answered in order: the screen is never older than the log.
  const [log, screen] = await Promise.all([
    sessions.readLog(sessionId, undefined, Math.min(lines + PtyConstants.MAX_TERMINAL_DIMENSION, maxReadLines)),
    sessions.readScreen(sessionId),
  ]);
  const scrollback = log.lines.slice(0, log.lines.length - screenOverlap(log.lines, screen.rows, screen.cols)).slice(-lines);
  return { log, rows: [...scrollback, ...screen.rows.filter((r) => r !== '')] };
}
