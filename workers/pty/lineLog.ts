/**
 * The bounded log of completed lines behind `readLog` (GET /sessions/:id/output?format=log): absolute line
 * indexes that only grow, so a reader's cursor (`total_lines`) stays valid after old lines are dropped.
 *
 * Text is kept as UTF-8 bytes in a few chunks per session with one 4-byte position per line, not as one
 * JS string per line: a busy session's 10,000 strings cost their headers, their slices' parents and the
 * GC's time, and held the same output the raw ring holds a second time over.
 * Rebuilding the lines from the raw ring at each read (as the screen is) was measured against it: a
 * full 2 MiB ring of agent output takes ~90 ms to strip again, a read here ~0.04 ms, and log-mode
 * viewers read every 200 ms; the ring also reaches back a different number of lines than the log, so
 * served cursors and text would change.
 */

import { PtyConstants } from '../../shared/protocol/pty.js';
import { StripConstants } from './ansiStrip.js';
import { longLivedBytes } from './longLivedBytes.js';

export const LineLogConstants = {
  /** Lines kept per session (VT_LOG_BUFFER_CAPACITY); older lines are dropped, their indexes are not reused. */
  CAPACITY_LINES: PtyConstants.LOG_LINES,
  /**
   * Bytes of text (UTF-8) kept per session, whatever the line count: lines may be 64 KiB (a minified
   * file, a base64 blob), and 10,000 of those would hold ~640 MB per session. 2 MiB keeps all 10,000
   * lines of ordinary output (up to ~200 bytes each) and bounds the rest.
   */
  MAX_BYTES: 2 * 1024 * 1024,
  /** The same bound under its earlier name (it counted characters; ASCII text is kept alike). */
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
 * The slot bookkeeping a new log starts with; it doubles as lines arrive, up to the capacity. Small: an
 * idle shell logs a few prompt lines, and 16 positions (64 bytes) stay in the heap object, where 64 took
 * a native backing store.
 */
const INITIAL_SLOTS = 16;
/**
 * The first text chunk: an idle shell's few prompt lines fit in it (4 KiB was most of an idle session's
 * log). Each next one doubles, up to MAX_CHUNK_BYTES, so a busy log reaches full-size chunks within ten.
 */
const FIRST_CHUNK_BYTES = 256;
/**
 * At or past glibc's default mmap threshold (128 KiB), so a freed chunk goes back to the system; and
 * two of the longest lines the stripper makes fit in one, with their LFs (else every chunk of a flood
 * of them would be half empty).
 */
const MAX_CHUNK_BYTES = Math.max(128 * 1024, 2 * (StripConstants.MAX_LINE_BYTES + 1));
const LF = 0x0a;

/**
 * A run of text bytes: each line's bytes then an LF, so consecutive lines handed over as one block of
 * the stripper's output are copied in one go. Positions are one virtual byte stream (modulo 2^32, as
 * Uint32Array stores them): a chunk starts where the previous one's text ended, so line i ends one
 * byte (its LF) before line i+1 starts.
 */
interface Chunk {
  readonly bytes: Buffer;
  /** Virtual position of bytes[0]. */
  base: number;
  used: number;
}

/** Completed lines as bytes: line k is bytes[k === 0 ? from : ends[k - 1] + 1, ends[k]), ends[k] holding its LF. */
export interface LineBlock {
  readonly bytes: Uint8Array;
  readonly from: number;
  readonly ends: Int32Array;
  readonly count: number;
}

/**
 * A ring of the last `capacity` lines (and at most `maxBytes` bytes of text), addressed by absolute
 * line index. A line may be appended still to be redacted: `read` redacts it then, once, and keeps the
 * result.
 */
export class LineLog {
  /** Per slot: virtual position of the line's first byte. Grows as lines arrive, up to the capacity. */
  private starts: Uint32Array;
  /** 1 where the slot's line was appended unredacted: in a flood most lines are dropped before anyone reads them. */
  private unredacted: Uint8Array;
  /** Oldest first; only the last one is written to. A chunk goes once no kept line starts in it. */
  private readonly chunks: Chunk[] = [];
  /** Lines whose redacted text differs from what was printed (rare: a secret), by absolute index; made on first use. */
  private redacted: Map<number, string> | undefined;
  private readonly capacity: number;
  private total = 0;
  /** Absolute index of the oldest line kept; lines before it were dropped by count or by size. */
  private oldest = 0;
  /** Virtual position just past the newest line's LF. */
  private end = 0;
  /** Bytes of text held by the kept lines, LFs not counted (a redacted line counts as redacted). */
  private kept = 0;
  /** Size of the last chunk allocated: the next doubles it. */
  private lastChunkSize = 0;

  constructor(
    capacity: number = LineLogConstants.CAPACITY_LINES,
    private readonly maxBytes: number = LineLogConstants.MAX_BYTES,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
    const slots = Math.min(capacity, INITIAL_SLOTS);
    this.starts = new Uint32Array(slots);
    this.unredacted = new Uint8Array(slots);
  }

  get totalLines(): number {
    return this.total;
  }

  get oldestOffset(): number {
    return this.oldest;
  }

  /** Bytes of text the kept lines hold (what MAX_BYTES bounds). */
  get textBytes(): number {
    return this.kept;
  }

  /** Memory the log holds: its chunks (used or not), its per-line slots and the redacted overrides. */
  get heldBytes(): number {
    let held = this.starts.byteLength + this.unredacted.byteLength;
    for (const chunk of this.chunks) held += chunk.bytes.length;
    if (this.redacted !== undefined) for (const text of this.redacted.values()) held += text.length * 2;
    return held;
  }

  /** `unredacted`: the line still holds whatever was printed; `read` passes it through its `redact` first. */
  append(line: string, unredacted = false): void {
    // One UTF-8 pass: written straight into the last chunk when it surely fits (3 bytes per UTF-16 unit at most).
    let chunk = this.chunks[this.chunks.length - 1];
    if (chunk !== undefined && chunk.bytes.length - chunk.used > line.length * 3) {
      const at = chunk.used;
      const length = line.length === 0 ? 0 : chunk.bytes.write(line, at);
      this.admit(length);
      // Every line was dropped: the chunk starts over at 0, and the bytes just written move there.
      if (chunk.used !== at) chunk.bytes.copyWithin(chunk.used, at, at + length);
      this.commit(chunk, length, unredacted);
      return;
    }
    const length = line.length === 0 ? 0 : Buffer.byteLength(line, 'utf8');
    this.admit(length);
    chunk = this.room(length);
    chunk.bytes.write(line, chunk.used, length);
    this.commit(chunk, length, unredacted);
  }

  /**
   * Appends the lines of a block as printed, all unredacted: what `append(line, true)` does for each,
   * with their bytes kept as they are (no decode and encode) and consecutive lines copied at once.
   */
  appendBlock(block: LineBlock): void {
    const { bytes, ends, count } = block;
    let from = block.from;
    /** The lines from `runFrom` up to `from` go to `chunk` at `runAt`, in one copy. */
    let chunk: Chunk | undefined;
    let runFrom = from;
    let runAt = 0;
    for (let k = 0; k < count; k++) {
      const length = ends[k]! - from;
      // Every line before this one was dropped (the chunk starts over at 0): so were the run's.
      if (this.admit(length) && chunk !== undefined) {
        runFrom = from;
        runAt = chunk.used;
      }
      let last = this.chunks[this.chunks.length - 1];
      if (last === undefined || last.bytes.length - last.used <= length) {
        if (chunk !== undefined) copyRun(bytes, runFrom, from, chunk, runAt);
        last = this.newChunk(length);
      }
      if (last !== chunk) {
        chunk = last;
        runFrom = from;
        runAt = chunk.used;
      }
      chunk.used += length + 1;
      this.slot(length, true);
      from += length + 1;
    }
    if (chunk !== undefined) copyRun(bytes, runFrom, from, chunk, runAt);
  }

  /**
   * Makes room for a line of `length` bytes by count and by size; true when no earlier line is kept
   * any more, so the last chunk was emptied (a line over the budget is kept alone).
   */
  private admit(length: number): boolean {
    const index = this.total;
    if (index % this.capacity >= this.starts.length) this.growSlots();
    // The line this one replaces by count, unless its size already dropped it.
    while (this.oldest <= index - this.capacity) this.dropOldest();
    while (this.kept + length > this.maxBytes && this.oldest < index) this.dropOldest();
    if (this.oldest !== index) return false;
    this.releaseAll();
    return true;
  }

  /** The last chunk if the line and its LF fit in it, else a new one. */
  private room(length: number): Chunk {
    const chunk = this.chunks[this.chunks.length - 1];
    return chunk !== undefined && chunk.bytes.length - chunk.used > length ? chunk : this.newChunk(length);
  }

  private newChunk(length: number): Chunk {
    const size = Math.max(length + 1, Math.min(MAX_CHUNK_BYTES, Math.max(FIRST_CHUNK_BYTES, this.lastChunkSize * 2)));
    this.lastChunkSize = size;
    // Own memory: a small pooled Buffer would keep Node's shared 8 KiB slab alive with it.
    // Outside V8's external-memory accounting too: a log's chunk turnover would force full collections (longLivedBytes.ts).
    const chunk = { bytes: longLivedBytes(size), base: this.end, used: 0 };
    this.chunks.push(chunk);
    return chunk;
  }

  /** The line's `length` bytes are at chunk.used: its LF follows, and its slot is taken. */
  private commit(chunk: Chunk, length: number, unredacted: boolean): void {
    chunk.bytes[chunk.used + length] = LF;
    chunk.used += length + 1;
    this.slot(length, unredacted);
  }

  private slot(length: number, unredacted: boolean): void {
    const index = this.total;
    const slot = index % this.capacity;
    this.starts[slot] = this.end;
    this.unredacted[slot] = unredacted ? 1 : 0;
    this.end = (this.end + length + 1) >>> 0;
    this.kept += length;
    this.total = index + 1;
  }

  /** Before the first wrap only: slots are taken in order, so the next one is always the first past the end. */
  private growSlots(): void {
    const size = Math.min(this.capacity, this.starts.length * 2);
    const starts = new Uint32Array(size);
    starts.set(this.starts);
    this.starts = starts;
    const flags = new Uint8Array(size);
    flags.set(this.unredacted);
    this.unredacted = flags;
  }

  /** Bytes line `index` (kept) counts for: as printed, or as redacted. */
  private lengthOf(index: number): number {
    if (this.redacted !== undefined && this.redacted.size > 0) {
      const text = this.redacted.get(index);
      if (text !== undefined) return Buffer.byteLength(text, 'utf8');
    }
    return this.printedLength(index);
  }

  private printedLength(index: number): number {
    const stop = index + 1 < this.total ? this.starts[(index + 1) % this.capacity]! : this.end;
    return ((stop - this.starts[index % this.capacity]!) >>> 0) - 1; // its LF is not text
  }

  private dropOldest(): void {
    const index = this.oldest;
    this.kept -= this.lengthOf(index);
    if (this.redacted !== undefined && this.redacted.size > 0) this.redacted.delete(index);
    this.oldest = index + 1;
    this.releaseChunks();
  }

  /** Frees the leading chunks no kept line starts in (the last one stays: it is written to next). */
  private releaseChunks(): void {
    const chunks = this.chunks;
    if (chunks.length < 2) return;
    if (this.oldest >= this.total) {
      this.releaseAll();
      return;
    }
    const first = chunks[0]!.base;
    const oldestAt = (this.starts[this.oldest % this.capacity]! - first) >>> 0;
    while (chunks.length > 1 && oldestAt >= (chunks[1]!.base - first) >>> 0) chunks.shift();
  }

  /** No line is kept: every chunk but the last goes, and the last is written from its start again. */
  private releaseAll(): void {
    const chunks = this.chunks;
    if (chunks.length === 0) return;
    if (chunks.length > 1) chunks.splice(0, chunks.length - 1);
    const last = chunks[0]!;
    last.base = this.end;
    last.used = 0;
  }

  /** The text of kept line `index` as printed. */
  private printed(index: number): string {
    const length = this.printedLength(index);
    if (length === 0) return '';
    const at = this.starts[index % this.capacity]!;
    const chunks = this.chunks;
    const first = chunks[0]!.base;
    const rel = (at - first) >>> 0;
    let c = chunks.length - 1;
    while (c > 0 && (chunks[c]!.base - first) >>> 0 > rel) c--;
    const chunk = chunks[c]!;
    const from = (at - chunk.base) >>> 0;
    return chunk.bytes.toString('utf8', from, from + length);
  }

  /** `redact` is applied to each line appended unredacted (required once such a line was appended). */
  read(opts: LineReadOptions = {}, redact?: (line: string) => string): LineRead {
    const limit = Math.max(0, Math.min(opts.limit ?? LineLogConstants.DEFAULT_LIMIT_LINES, this.capacity));
    const collect = (): LineRead => {
      const start = opts.offset === undefined ? Math.max(this.oldest, this.total - limit) : Math.min(Math.max(opts.offset, this.oldest), this.total);
      const end = Math.min(this.total, start + limit);
      const lines = new Array<string>(end - start);
      for (let i = start; i < end; i++) {
        if (this.unredacted[i % this.capacity] === 1) this.redactLine(i, redact);
        lines[i - start] = (this.redacted !== undefined && this.redacted.size > 0 ? this.redacted.get(i) : undefined) ?? this.printed(i);
      }
      return { lines, offset: start, total_lines: this.total, oldest_offset: this.oldest };
    };
    const read = collect();
    // Redacting can lengthen lines (a marker for a short secret): the budget is settled before the
    // answer, so the read shows what the log keeps and an exited session's log stays bounded.
    if (this.kept <= this.maxBytes) return read;
    while (this.kept > this.maxBytes && this.oldest < this.total - 1) this.dropOldest();
    return collect();
  }

  /** Redacts one line once; a changed line is kept beside its printed bytes (read settles the budget after). */
  private redactLine(index: number, redact: ((line: string) => string) | undefined): void {
    if (redact === undefined) throw new Error('LineLog.read: unredacted lines need a redact function');
    const line = this.printed(index);
    const clean = redact(line);
    if (clean !== line) {
      (this.redacted ??= new Map()).set(index, clean);
      this.kept += Buffer.byteLength(clean, 'utf8') - this.printedLength(index);
    }
    this.unredacted[index % this.capacity] = 0;
  }
}

/** A plain view, not `subarray`: on a Buffer that builds a Buffer, which costs more than the copy of a short run. */
function copyRun(bytes: Uint8Array, from: number, to: number, chunk: Chunk, at: number): void {
  if (to > from) chunk.bytes.set(new Uint8Array(bytes.buffer, bytes.byteOffset + from, to - from), at);
}
