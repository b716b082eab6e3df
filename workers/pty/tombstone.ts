/**
 * What the pty host keeps of a session whose child exited (issue 26 item 5): the final screen, the
 * exit status, the last PtyConstants.TOMBSTONE_RING_BYTES of raw output and the last
 * TOMBSTONE_LOG_LINES lines of the log, each copied into right-sized storage so the live session's
 * 2 MiB ring, its 10,000-line log and its grid can be freed. Reads answer like the live session's:
 * offsets stay absolute, and a read from before the kept tail starts at the oldest kept byte or line.
 */

import { PtyConstants } from '../../shared/protocol/pty.js';
import { readRange, type RingRead, type RingReadOptions } from './outputRing.js';
import type { ScreenSnapshot } from './screenModel.js';
import type { ExitInfo, LogRead } from './ptySession.js';

/** What a tombstone is built from: the session's reads at the moment of its exit. */
export interface TombstoneSource {
  readonly exited: ExitInfo;
  readRaw(options: RingReadOptions): { start: number; total_written: number; bytes: Buffer };
  readLog(options: { offset?: number; limit?: number }): LogRead;
  readScreen(): ScreenSnapshot;
}

/** Bytes charged per string besides its characters (header, array slot). */
const STRING_OVERHEAD = 16;
/** Bytes charged per tombstone besides its buffers: the objects that hold them, the map entry. */
const TOMBSTONE_OVERHEAD = 512;
/** Default page of a log read with no limit, as LineLogConstants.DEFAULT_LIMIT_LINES. */
const DEFAULT_LIMIT_LINES = 200;

/** A fresh, flat copy of `s`: a line split out of a batch's text may be a slice that keeps the whole batch alive. */
function ownCopy(s: string): string {
  return s.length === 0 ? '' : Buffer.from(s, 'utf8').toString('utf8');
}

/** Characters are charged two bytes each: what V8 needs for a string that is not Latin-1. */
function stringBytes(s: string): number {
  return s.length * 2 + STRING_OVERHEAD;
}

export class Tombstone {
  readonly exit: ExitInfo;
  /** Absolute offset of `tail[0]`. */
  private readonly tailStart: number;
  private readonly tail: Buffer;
  private readonly totalWritten: number;
  private readonly lines: string[];
  /** Absolute index of `lines[0]`. */
  private readonly linesStart: number;
  private readonly totalLines: number;
  private readonly partial: string;
  private readonly screen: ScreenSnapshot;
  /** What this tombstone holds, as charged against PtyConstants.TOMBSTONE_BUDGET_BYTES. */
  readonly bytes: number;

  constructor(source: TombstoneSource) {
    this.exit = source.exited;
    const raw = source.readRaw({ limit: PtyConstants.TOMBSTONE_RING_BYTES });
    // Its own memory, exactly this long (a small read's copy may be a slice of Node's shared pool).
    this.tail = Buffer.allocUnsafeSlow(raw.bytes.length);
    raw.bytes.copy(this.tail);
    this.tailStart = raw.start;
    this.totalWritten = raw.total_written;

    const log = source.readLog({ limit: PtyConstants.TOMBSTONE_LOG_LINES });
    // The newest lines that fit the character budget (the newest one always stays, as in LineLog).
    let from = log.lines.length;
    let chars = 0;
    while (from > 0 && (from === log.lines.length || chars + log.lines[from - 1]!.length <= PtyConstants.TOMBSTONE_LOG_CHARS)) {
      chars += log.lines[from - 1]!.length;
      from--;
    }
    this.lines = log.lines.slice(from).map(ownCopy);
    this.linesStart = log.offset + from;
    this.totalLines = log.total_lines;
    this.partial = ownCopy(log.partial);

    const screen = source.readScreen();
    this.screen = { ...screen, rows: screen.rows.map(ownCopy) };

    let bytes = TOMBSTONE_OVERHEAD + this.tail.length + stringBytes(this.partial);
    for (const line of this.lines) bytes += stringBytes(line);
    for (const row of this.screen.rows) bytes += stringBytes(row);
    this.bytes = bytes;
  }

  /** As OutputRing.read over the kept tail: offsets absolute, clamped to [oldest kept, total]. */
  readRaw(options: RingReadOptions): { start: number; total_written: number; bytes: Buffer } {
    const { start, bytes } = this.readTail(options);
    return { start, total_written: this.totalWritten, bytes };
  }

  private readTail(options: RingReadOptions): RingRead {
    const oldest = this.tailStart;
    const { start, stop } = readRange(options, oldest, this.totalWritten);
    // A copy, as the ring gives: the caller may hand it to a transport that keeps it.
    return { start, bytes: Buffer.from(this.tail.subarray(start - oldest, stop - oldest)) };
  }

  /** As the text log's read over the kept lines: absolute indexes, clamped to the oldest kept. */
  readLog(options: { offset?: number; limit?: number }): LogRead {
    const limit = Math.max(0, Math.min(options.limit ?? DEFAULT_LIMIT_LINES, PtyConstants.LOG_LINES));
    const oldest = this.linesStart;
    const total = this.totalLines;
    const start = options.offset === undefined ? Math.max(oldest, total - limit) : Math.min(Math.max(options.offset, oldest), total);
    const end = Math.min(total, start + limit);
    return { lines: this.lines.slice(start - oldest, end - oldest), offset: start, total_lines: total, oldest_offset: oldest, partial: this.partial };
  }

  /** The screen as the session left it. */
  readScreen(): ScreenSnapshot {
    return this.screen;
  }
}
