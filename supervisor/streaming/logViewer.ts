/**
 * One log-mode viewer (`?format=log|text`): stripped, redacted lines from a cursor, then every 200 ms
 * the new lines, the unfinished line and the current screen, each only when it changed.
 */
import { sessionState } from '../sessions/sessionRecord.js';
import { trimTrailingEmpty } from '../sessions/screenRows.js';
import type { SessionService } from '../sessions/sessionService.js';
import { endViewer } from './endViewer.js';
import type { ViewerSocket } from './viewerSocket.js';

/** Log mode asks the host for new lines every 200 ms. */
const LOG_POLL_MS = 200;
/** Lines sent per catch-up frame. */
const LOG_BATCH_LINES = 500;

export class LogViewer {
  private next: number | undefined;
  private lastPartial = '';
  /** The screen rows last sent, joined: a frame carries `screen` only when this changes. */
  private lastScreen: string | undefined;
  private lastState = '';
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private closed = false;
  /** The `closed` frame went out: the session's log is final and fully sent, polling stopped. */
  private sentClosed = false;

  constructor(
    private readonly ws: ViewerSocket,
    private readonly sessions: SessionService,
    private readonly sessionId: string,
    offset: number | undefined,
  ) {
    this.next = offset;
    this.sendState();
    void this.poll();
    this.timer = setInterval(() => void this.poll(), LOG_POLL_MS);
  }

  private sendState(): void {
    const record = this.sessions.resolve(this.sessionId);
    if (!record) return;
    const text = JSON.stringify({ type: 'state', state: sessionState(record) });
    if (text === this.lastState) return;
    this.lastState = text;
    this.send(text);
  }

  private async poll(): Promise<void> {
    if (this.busy || this.closed || this.sentClosed) return;
    this.busy = true;
    // Seen before the reads go out: the host finishes a session's log before it reports the exit,
    // so reads sent after the exit was known hold its last lines.
    const exit = this.sessions.resolve(this.sessionId)?.exit ?? null;
    let drained = true;
    try {
      // Asked together: the host answers in order, so the screen is never older than the lines.
      const [log, screen] = await Promise.all([
        this.sessions.readLog(this.sessionId, this.next, LOG_BATCH_LINES),
        this.sessions.readScreen(this.sessionId).catch(() => undefined),
      ]);
      if (this.closed) return;
      const changedPartial = log.partial !== this.lastPartial;
      const rows = screen === undefined ? undefined : trimTrailingEmpty(screen.rows);
      const screenKey = rows?.join('\n');
      const changedScreen = screenKey !== undefined && screenKey !== this.lastScreen;
      if (log.lines.length > 0 || changedPartial || changedScreen || this.next === undefined) {
        const frame: Record<string, unknown> = {
          type: 'log',
          lines: log.lines.map((text) => ({ text })),
          offset: log.offset,
          total_lines: log.offset + log.lines.length,
        };
        if (changedPartial) frame['input_line'] = log.partial;
        if (changedScreen) frame['screen'] = rows!.map((text) => ({ text }));
        this.send(JSON.stringify(frame));
        this.lastPartial = log.partial;
        if (changedScreen) this.lastScreen = screenKey;
      }
      this.next = log.offset + log.lines.length;
      drained = this.next >= log.total_lines;
      this.sendState();
    } catch {
      // The session is gone from the host (exited and forgotten, or its host died): nothing more to stream.
    } finally {
      this.busy = false;
    }
    // An exited session's log never grows again: once every line went out, say so and stop polling.
    if (exit && drained && !this.closed) {
      this.sentClosed = true;
      clearInterval(this.timer);
      this.send(JSON.stringify({ type: 'closed', session_id: this.sessionId, reason: exit.reason }));
      endViewer(this.ws, exit.reason);
    }
  }

  private send(text: string): void {
    if (!this.closed) this.ws.cork(() => this.ws.send(text, false));
  }

  /** The session closed: this poll (or, with one in flight, the next tick's) sends its last lines, then `closed`. */
  onSessionClosed(): void {
    void this.poll();
  }

  dispose(): void {
    this.closed = true;
    clearInterval(this.timer);
  }
}
