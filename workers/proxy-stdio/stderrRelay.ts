/**
 * The child's stderr, drained line by line so the child can never block on it, and relayed to the
 * hub as `stderr` events: each line cut to 4 KiB (the rest of a long line is skipped as it streams,
 * never buffered), at most LINES_PER_WINDOW lines per window; the surplus is counted and reported
 * once per window, so a stderr flood costs the channel a few events a second, not a flood.
 */

export const STDERR_LINE_MAX_BYTES = 4 * 1024;
export const STDERR_WINDOW_MS = 1_000;
export const STDERR_LINES_PER_WINDOW = 50;

const NEWLINE = 0x0a;

export interface StderrRelayOptions {
  emitLine: (line: string) => void;
  /** `count` lines were not relayed in the last window. */
  reportSuppressed: (count: number) => void;
  maxLineBytes?: number;
  windowMs?: number;
  linesPerWindow?: number;
}

export class StderrRelay {
  private readonly line: Buffer;
  private lineBytes = 0;
  private inLine = false;
  private windowStart = 0;
  private windowLines = 0;
  private suppressed = 0;
  private reportTimer: NodeJS.Timeout | undefined;
  private readonly maxLineBytes: number;
  private readonly windowMs: number;
  private readonly linesPerWindow: number;

  constructor(private readonly options: StderrRelayOptions) {
    this.maxLineBytes = options.maxLineBytes ?? STDERR_LINE_MAX_BYTES;
    this.windowMs = options.windowMs ?? STDERR_WINDOW_MS;
    this.linesPerWindow = options.linesPerWindow ?? STDERR_LINES_PER_WINDOW;
    this.line = Buffer.allocUnsafe(this.maxLineBytes);
  }

  write(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      const room = this.maxLineBytes - this.lineBytes;
      if (room > 0 && end > start) this.lineBytes += chunk.copy(this.line, this.lineBytes, start, Math.min(end, start + room));
      this.inLine = true;
      if (newline === -1) return;
      this.finishLine();
      start = newline + 1;
    }
  }

  /** The stream ended: relay a last unterminated line and report what was held back. */
  end(): void {
    if (this.inLine) this.finishLine();
    clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    this.flushSuppressed();
  }

  private finishLine(): void {
    let bytes = this.lineBytes;
    if (bytes > 0 && this.line[bytes - 1] === 0x0d) bytes--;
    const text = this.line.toString('utf8', 0, bytes);
    this.lineBytes = 0;
    this.inLine = false;
    if (text.trim() === '') return;
    const now = Date.now();
    if (now - this.windowStart >= this.windowMs) {
      this.flushSuppressed();
      this.windowStart = now;
      this.windowLines = 0;
    }
    if (this.windowLines < this.linesPerWindow) {
      this.windowLines++;
      this.options.emitLine(text);
      return;
    }
    this.suppressed++;
    // A flood that stops must still be reported: once per window, not per line.
    this.reportTimer ??= setTimeout(
      () => {
        this.reportTimer = undefined;
        this.flushSuppressed();
      },
      this.windowMs - (now - this.windowStart),
    ).unref();
  }

  private flushSuppressed(): void {
    if (this.suppressed === 0) return;
    const count = this.suppressed;
    this.suppressed = 0;
    this.options.reportSuppressed(count);
  }
}
