/**
 * The line log as it was before issue 29 (one JS string per line, a character budget), kept as the
 * oracle the compact log is compared with: what it serves must not change.
 */

import { PtyConstants } from '../../../../shared/protocol/pty.js';

export const LineLogConstants = {
  /** Lines kept per session (VT_LOG_BUFFER_CAPACITY); older lines are dropped, their indexes are not reused. */
  CAPACITY_LINES: PtyConstants.LOG_LINES,
  /**
   * Characters kept per session, whatever the line count: lines may be 64 KiB (a minified file, a
   * base64 blob), and 10,000 of those would hold ~640 MB per session. 2 Mi characters keeps all
   * 10,000 lines of ordinary output (up to ~200 characters each) and bounds the rest.
   */
  MAX_CHARS: 2 * 1024 * 1024,
  /** Lines returned when the reader gives no limit: a screenful or two, not the whole log. */
  DEFAULT_LIMIT_LINES: 200,
} as const;

export interface LineRead {
  lines: string[];
  /** Absolute index of lines[0] (after clamping). */
  offset: number;
  /** Completed lines ever appended: the cursor to pass back as `offset` next time. */
  total_lines: number;
  /** Absolute index of the oldest line still kept. */
  oldest_offset: number;
}

export interface LineReadOptions {
  /** Absolute index to read from; older than the oldest kept clamps to it. Absent: the last `limit` lines. */
  offset?: number;
  limit?: number;
}

/**
 * A ring of the last `capacity` lines (and at most `maxChars` characters), addressed by absolute line index.
 * A line may be appended still to be redacted: `read` redacts it then, once, and keeps the result.
 */
/** The slot bookkeeping a new log starts with; it doubles as lines arrive, up to the capacity. */
const INITIAL_SLOTS = 64;

export class LineLog {
  /**
   * Grows as lines arrive (appends at the end until it wraps): a log sized for 10,000 lines up
   * front held 80 KB per session before its first line, most of an idle session's memory.
   */
  private readonly ring: string[] = [];
  /** 1 where the slot's line was appended unredacted: in a flood most lines are dropped before anyone reads them. */
  private unredacted: Uint8Array;
  private readonly capacity: number;
  private total = 0;
  /** Absolute index of the oldest line kept; lines before it were dropped by count or by size. */
  private oldest = 0;
  /** Characters held by the kept lines. */
  private chars = 0;

  constructor(
    capacity: number = LineLogConstants.CAPACITY_LINES,
    private readonly maxChars: number = LineLogConstants.MAX_CHARS,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
    this.unredacted = new Uint8Array(Math.min(capacity, INITIAL_SLOTS));
  }

  get totalLines(): number {
    return this.total;
  }

  get oldestOffset(): number {
    return this.oldest;
  }

  /** `unredacted`: the line still holds whatever was printed; `read` passes it through its `redact` first. */
  append(line: string, unredacted = false): void {
    const slot = this.total % this.capacity;
    if (slot >= this.unredacted.length) this.growFlags();
    // The line this one replaces (dropped by count), unless its size already dropped it.
    this.chars -= this.ring[slot]?.length ?? 0;
    this.ring[slot] = line;
    this.unredacted[slot] = unredacted ? 1 : 0;
    this.chars += line.length;
    this.total++;
    this.oldest = Math.max(this.oldest, this.total - this.capacity);
    this.fitBudget();
  }

  /** Before the first wrap only: slots are taken in order, so the next one is always the first past the end. */
  private growFlags(): void {
    const grown = new Uint8Array(Math.min(this.capacity, this.unredacted.length * 2));
    grown.set(this.unredacted);
    this.unredacted = grown;
  }

  /** Too much text: drop the oldest lines until it fits; the newest line always stays. */
  private fitBudget(): void {
    while (this.chars > this.maxChars && this.oldest < this.total - 1) {
      const old = this.oldest % this.capacity;
      this.chars -= this.ring[old]!.length;
      this.ring[old] = '';
      this.oldest++;
    }
  }

  /** `redact` is applied to each line appended unredacted (required once such a line was appended). */
  read(opts: LineReadOptions = {}, redact?: (line: string) => string): LineRead {
    const limit = Math.max(0, Math.min(opts.limit ?? LineLogConstants.DEFAULT_LIMIT_LINES, this.capacity));
    const collect = (): LineRead => {
      const start = opts.offset === undefined ? Math.max(this.oldest, this.total - limit) : Math.min(Math.max(opts.offset, this.oldest), this.total);
      const end = Math.min(this.total, start + limit);
      const lines = new Array<string>(end - start);
      for (let i = start; i < end; i++) {
        const slot = i % this.capacity;
        if (this.unredacted[slot] === 1) this.redactSlot(slot, redact);
        lines[i - start] = this.ring[slot]!;
      }
      return { lines, offset: start, total_lines: this.total, oldest_offset: this.oldest };
    };
    const read = collect();
    // Redacting can lengthen lines (a marker for a short secret): the budget is settled before the
    // answer, so the read shows what the log keeps and an exited session's log stays bounded.
    if (this.chars <= this.maxChars) return read;
    this.fitBudget();
    return collect();
  }

  /** Redacts one slot in place; its size changes by the markers (read settles the budget after). */
  private redactSlot(slot: number, redact: ((line: string) => string) | undefined): void {
    if (redact === undefined) throw new Error('LineLog.read: unredacted lines need a redact function');
    const line = this.ring[slot]!;
    const clean = redact(line);
    this.ring[slot] = clean;
    this.chars += clean.length - line.length;
    this.unredacted[slot] = 0;
  }
}
