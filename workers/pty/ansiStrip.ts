/**
 * Incremental ANSI/VT stripper: PTY bytes in, plain text lines out, whatever the chunk boundaries
 * (issue #3 item 4). A byte machine: UTF-8 is decoded once per push, not per byte or line.
 */

import type { LineBlock } from './lineLog.js';

/** Limits of the stripper; each guards memory or time against hostile or broken output. */
export const StripConstants = {
  /** A line longer than this is cut (so `yes | tr -d '\n'` cannot grow memory); the cut prefers a space. */
  MAX_LINE_BYTES: 64 * 1024,
  /** How far back from the cut to look for a space, so a token (a secret) is rarely split in two. */
  SOFT_BREAK_WINDOW_BYTES: 4 * 1024,
  /** CUF/CHA/BS moves are clamped to the widest terminal the protocol allows (MAX_TERMINAL_DIMENSION). */
  MAX_COLUMNS: 500,
  /** An OSC/DCS/APC string longer than this is abandoned: a lone `ESC ]` must not swallow the log forever. */
  MAX_STRING_BYTES: 1024 * 1024,
  /** CSI parameters kept (more are ignored: only the first one or two matter for what we interpret). */
  MAX_PARAMS: 16,
  /** OSC strings longer than this are not handed to `onOsc` (clipboard and image payloads are not for us). */
  OSC_KEEP_BYTES: 4096,
} as const;

export interface AnsiStripperOptions {
  /** Receives every completed line, without escapes and without trailing spaces. */
  onLine: (text: string) => void;
  /** Keep text drawn on the alternate screen (vim, less, htop). Default false: as in the VT log, only the primary screen makes lines. */
  keepAltScreen?: boolean;
  maxLineBytes?: number;
  /** Receives each push's completed lines at once, joined by `\n`, before `onLine` sees them one by one. */
  onText?: (text: string) => void;
  /**
   * The same lines undecoded (valid only during the call): `includes` searches the bytes, `text()`
   * decodes them once, when some consumer needs the string (most pushes of a plain session need none).
   */
  onPushed?: (lines: PushedLines) => void;
  /**
   * After `onText` and `onPushed`, the same lines as bytes (valid only during the call): true when it
   * took them all, and `onLine` is then not called (the line log keeps bytes: no split, decode per line or encode).
   */
  onBlock?: (block: LineBlock, lines: PushedLines) => boolean;
  /** The program switched to (true) or back from (false) the alternate screen. */
  onAltScreen?: (active: boolean) => void;
  /** Only OSC strings starting with one of these bytes reach `onOsc` (all when absent). */
  oscFirstBytes?: readonly number[];
  /** Receives each OSC string (without `ESC ]` and its terminator) that ended within OSC_KEEP_BYTES. */
  onOsc?: (payload: string) => void;
}

enum S {
  Ground,
  Esc,
  EscInt,
  Csi,
  Osc,
  OscEsc,
  Str,
  StrEsc,
}
enum B {
  LF = 0x0a,
  CR = 0x0d,
  CAN = 0x18,
  SUB = 0x1a,
  ESC = 0x1b,
  SPACE = 0x20,
  DEL = 0x7f,
}

const isContinuation = (b: number): boolean => (b & 0xc0) === 0x80;
/** A run of printable bytes up to this long is copied byte by byte (a view and a set cost more). */
const SHORT_RUN = 24;
/** What an erase writes: at most a row of spaces. */
const SPACES = new Uint8Array(StripConstants.MAX_COLUMNS).fill(B.SPACE);

/** Bytes that separate fields but are never part of a token nor between a name and its value: a good place to cut a long line. */
function isSeparator(b: number): boolean {
  return (
    b === 0x2c ||
    b === 0x3b ||
    b === 0x7c ||
    b === 0x26 ||
    b === 0x09 ||
    b === 0x5b ||
    b === 0x5d ||
    b === 0x7b ||
    b === 0x7d ||
    b === 0x28 ||
    b === 0x29 ||
    b === 0x3c ||
    b === 0x3e
  );
}

/** Number of bytes at the end of buf[from, to) that start a UTF-8 character not yet complete. */
function incompleteTail(buf: Uint8Array, from: number, to: number): number {
  for (let back = 1; back <= 3 && back <= to - from; back++) {
    const b = buf[to - back]!;
    if (isContinuation(b)) continue;
    return (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1) > back ? back : 0; // bytes the lead byte asks for
  }
  return 0;
}

/** A push's completed lines joined by `\n`, as the stripper's bytes; decoded at most once, on demand. */
export class PushedLines {
  private buf: Buffer = EMPTY_BUFFER;
  private end = 0;
  /** buf[0, end), made by the first search of a push. */
  private lines: Buffer | undefined;
  private decoded: string | undefined;

  /** Whether the lines contain `ascii` (ASCII only: its bytes are its UTF-8), searched in the bytes. */
  includes(ascii: string): boolean {
    if (this.decoded !== undefined) return this.decoded.includes(ascii);
    // Only the lines: a search of the whole buffer also scanned its spare capacity and the stale bytes
    // of earlier pushes (a buffer grown by one long line is searched whole by every later push).
    this.lines ??= this.buf.subarray(0, this.end);
    return this.lines.indexOf(ascii) !== -1;
  }

  text(): string {
    this.decoded ??= this.buf.toString('utf8', 0, this.end);
    return this.decoded;
  }

  /** @internal the stripper's buffer, lines in [0, end). */
  set(buf: Buffer, end: number): void {
    this.buf = buf;
    this.end = end;
    this.lines = undefined;
    this.decoded = undefined;
  }

  /** @internal after the push: nothing is kept. */
  clear(): void {
    this.buf = EMPTY_BUFFER;
    this.end = 0;
    this.lines = undefined;
    this.decoded = undefined;
  }
}

const EMPTY_BUFFER = Buffer.alloc(0);
/**
 * Sized for an idle shell's prompt: hundreds of idle sessions each keep theirs for hours. Both double
 * on demand (`ensure`, `lineEnd`), so a flood reaches its working size in a few pushes.
 */
const INITIAL_BUFFER_BYTES = 128;
/** 8 slots: 32 bytes, stored in the JS heap (a typed array past 64 bytes gets a native backing store, with its own overhead). */
const INITIAL_ENDS = 8;

/**
 * Feed bytes with `push`; completed lines go to `onLine` at the end of each push. The current line has a
 * cursor, so CR, BS, CUF/CUB/CHA and EL edit it as they would a terminal row (a code point = a column).
 */
export class AnsiStripper {
  private state = S.Ground;
  /** [this push's completed lines, each ending in LF][the current line]; starts small (an idle session's prompt), doubles as needed. */
  private buf: Buffer = Buffer.allocUnsafeSlow(INITIAL_BUFFER_BYTES);
  /** The current line is buf[start, len); cur is the cursor, start <= cur <= len. */
  private start = 0;
  private len = 0;
  private cur = 0;
  /** Where each completed line in buf[0, start) has its LF, in order (the block `onBlock` gets). */
  private ends = new Int32Array(INITIAL_ENDS);
  private nEnds = 0;
  private alt = false;
  /** The alternate screen is on (whatever keepAltScreen does with its text). */
  private altActive = false;
  private strBytes = 0;
  /** CSI private marker (`?`, `>`...), or 1 once an intermediate byte is seen: either way, not a plain CSI. */
  private priv = 0;
  private readonly params = new Int32Array(StripConstants.MAX_PARAMS);
  private nParams = 0;
  private param = -1;
  private readonly maxLine: number;
  /** The OSC string being read, for `onOsc` (allocated at the first one kept); oscLen past OSC_KEEP_BYTES means it is dropped. */
  private oscBuf: Buffer | undefined;
  private oscLen = 0;
  /** The view `onPushed` and `onBlock` get, reused by every push. */
  private readonly pushed = new PushedLines();

  constructor(private readonly opts: AnsiStripperOptions) {
    this.maxLine = Math.max(16, opts.maxLineBytes ?? StripConstants.MAX_LINE_BYTES);
  }

  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let state = this.state;
    let i = 0;
    while (i < n) {
      if (state === S.Ground) {
        let j = i;
        if (this.cur === this.len && !this.alt) {
          // Hot path: a run of printable bytes goes to the end of the line: scanned, then copied at once.
          const stop = Math.min(n, i + this.maxLine - (this.len - this.start));
          for (; j < stop; j++) {
            const b = chunk[j]!;
            if (b < B.SPACE || b === B.DEL) break;
          }
          const len = this.len;
          this.ensure(len + (j - i));
          if (j - i > SHORT_RUN) this.buf.set(new Uint8Array(chunk.buffer, chunk.byteOffset + i, j - i), len);
          else for (let k = i, at = len; k < j; k++) this.buf[at++] = chunk[k]!;
          this.len = this.cur = len + (j - i);
          if (j === stop && j < n && chunk[j]! >= B.SPACE && chunk[j] !== B.DEL) {
            this.softBreak(); // the line is full: cut it and go on
            i = j;
            continue;
          }
        } else {
          while (j < n && chunk[j]! >= B.SPACE && chunk[j] !== B.DEL) j++;
          if (j > i && !this.alt) this.overwrite(chunk, i, j); // none: the LF of a CRLF
        }
        if (j < n) state = chunk[j] === B.ESC ? S.Esc : this.control(chunk[j]!);
        i = j + 1;
      } else if (state === S.Osc || state === S.Str) {
        i = this.string(chunk, i, state === S.Osc);
        state = this.state;
      } else if (state === S.Csi) {
        i = this.csi(chunk, i);
        state = this.state;
      } else {
        state = this.escapeByte(chunk[i++]!, state);
      }
    }
    this.state = state;
    if (this.start > 0) this.emit();
  }

  /** The unfinished current line (a prompt, a progress bar), without an incomplete trailing character. */
  partial(): string {
    let end = this.len - incompleteTail(this.buf, this.start, this.len);
    while (end > this.start && this.buf[end - 1] === B.SPACE) end--;
    return this.buf.toString('utf8', this.start, end);
  }

  /** End of output: the unfinished line, if any, becomes a completed line. */
  flush(): void {
    this.alt = false; // the primary screen's line is what remains
    if (this.len > this.start) this.newline();
    this.state = S.Ground;
    if (this.start > 0) this.emit();
  }

  /**
   * Hands out this push's completed lines; they are decoded in one go (a decode per line costs ~0.2 µs),
   * and only when a consumer needs the string: with 500 sessions printing, a string per push was most
   * of what the pty host allocated, and its garbage collections were the host's longest turns.
   */
  private emit(): void {
    const pushed = this.pushed;
    pushed.set(this.buf, this.start - 1);
    try {
      if (this.opts.onText !== undefined) this.opts.onText(pushed.text());
      this.opts.onPushed?.(pushed);
      const block: LineBlock = { bytes: this.buf, from: 0, ends: this.ends, count: this.nEnds };
      if (this.opts.onBlock === undefined || !this.opts.onBlock(block, pushed)) for (const line of pushed.text().split('\n')) this.opts.onLine(line);
    } finally {
      pushed.clear();
      // Even when a consumer throws: the lines are handed out once.
      this.buf.copyWithin(0, this.start, this.len);
      this.len -= this.start;
      this.cur -= this.start;
      this.start = 0;
      this.nEnds = 0;
    }
  }

  /** A completed line's LF is at `at`. */
  private lineEnd(at: number): void {
    this.buf[at] = B.LF;
    if (this.nEnds === this.ends.length) {
      const ends = new Int32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.ends[this.nEnds++] = at;
  }

  private newline(): void {
    if (this.alt) return;
    let end = this.len;
    while (end > this.start && this.buf[end - 1] === B.SPACE) end--;
    this.lineEnd(end); // in range: ensure() always leaves a byte past len
    this.start = this.len = this.cur = end + 1;
  }

  /** C0 controls other than ESC: LF, CR, TAB and BS act; the others (BEL, NUL, SO/SI...) print nothing. */
  private control(b: number): S {
    if (this.alt) return S.Ground;
    if (b === B.LF) this.newline();
    else if (b === B.CR) this.cur = this.start;
    else if (b === 0x09) this.putByte(b);
    else if (b === 0x08) this.left(1);
    return S.Ground;
  }

  /** One byte in any state but Ground, Osc and Str (after ESC, an ESC that ends a string starts a new sequence); returns the next state. */
  private escapeByte(b: number, state: S): S {
    if (state === S.Csi) return this.csiByte(b);
    if (b === B.CAN || b === B.SUB) return S.Ground;
    if (state === S.EscInt) return b === B.ESC ? S.Esc : b >= 0x20 && b <= 0x2f ? S.EscInt : S.Ground; // a final ends it
    if (state !== S.Esc && b === 0x5c) return S.Ground; // `ESC \` = ST ends an OSC/DCS string
    if (b === 0x5b) {
      this.nParams = this.priv = 0;
      this.param = -1;
      return S.Csi;
    }
    if (b === 0x5d || b === 0x50 || b === 0x58 || b === 0x5e || b === 0x5f) {
      this.strBytes = this.oscLen = 0;
      return b === 0x5d ? S.Osc : S.Str; // OSC; DCS, SOS, PM, APC
    }
    if (b >= 0x20 && b <= 0x2f) return S.EscInt; // charset designations `ESC ( B`, `ESC # 8`...
    if (b < 0x20) return S.Esc; // ESC ESC restarts; another C0 inside an escape is ignored
    if (b === 0x45 || b === 0x44) this.newline(); // NEL, IND
    return S.Ground; // any other final (`ESC 7`, `ESC =`, `ESC M`, `ESC c`...) ends a 2-byte sequence
  }

  /** Consumes CSI bytes from `i` up to its final byte (parameters in a tight loop); returns the next index. */
  private csi(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    let param = this.param;
    for (; i < n; i++) {
      const b = chunk[i]!;
      if (b >= 0x30 && b <= 0x39) {
        param = param < 0 ? b - 0x30 : Math.min(param * 10 + (b - 0x30), 0xffff);
        continue;
      }
      this.param = param;
      const next = this.csiByte(b);
      if (next !== S.Csi) {
        this.state = next;
        return i + 1;
      }
      param = this.param;
    }
    this.param = param;
    this.state = S.Csi;
    return n;
  }

  private csiByte(b: number): S {
    if (b >= 0x30 && b <= 0x39) this.param = this.param < 0 ? b - 0x30 : Math.min(this.param * 10 + (b - 0x30), 0xffff);
    else if (b === 0x3b || b === 0x3a) this.pushParam();
    else if (b >= 0x40 && b <= 0x7e) {
      this.pushParam();
      this.csiDispatch(b);
      return S.Ground;
    } else if (b >= 0x3c && b <= 0x3f) {
      if (this.nParams === 0 && this.param < 0) this.priv = b;
    } else if (b >= 0x20 && b <= 0x2f) this.priv = 1;
    else if (b === B.ESC) return S.Esc;
    else if (b === B.CAN || b === B.SUB || b >= 0x80) return S.Ground; // cancelled, or malformed: dropped
    return S.Csi;
  }

  private pushParam(): void {
    if (this.nParams < StripConstants.MAX_PARAMS) this.params[this.nParams++] = this.param;
    this.param = -1;
  }

  /** First parameter, with 0 or absent meaning `dflt` (the CSI convention for counts). */
  private count(dflt: number): number {
    return Math.min(this.params[0]! <= 0 ? dflt : this.params[0]!, StripConstants.MAX_COLUMNS);
  }

  private csiDispatch(final: number): void {
    if (this.priv === 0x3f && (final === 0x68 || final === 0x6c)) {
      // DEC modes 1049 (save cursor + alternate screen), 1047 and 47 (alternate screen).
      for (const p of this.params.subarray(0, this.nParams)) {
        if (p !== 1049 && p !== 1047 && p !== 47) continue;
        this.alt = final === 0x68 && !this.opts.keepAltScreen;
        if (this.altActive !== (final === 0x68)) {
          this.altActive = final === 0x68;
          this.opts.onAltScreen?.(this.altActive);
        }
      }
    }
    if (this.priv !== 0 || this.alt) return;
    if (final === 0x43)
      this.right(this.count(1)); // CUF: "hello\x1b[3Cworld" keeps its gap
    else if (final === 0x44)
      this.left(this.count(1)); // CUB
    else if (final === 0x47 || final === 0x60) {
      this.cur = this.start; // CHA, HPA
      this.right(this.count(1) - 1);
    } else if (final === 0x4b) this.eraseLine(Math.max(0, this.params[0]!)); // EL
    // SGR, cursor up/down, scrolling, modes...: print nothing.
  }

  /** Consumes OSC/DCS/SOS/PM/APC bytes from `i` (ended by ST, or BEL for OSC); returns the next index. */
  private string(chunk: Uint8Array, i: number, osc: boolean): number {
    const n = chunk.length;
    const from = i;
    this.strBytes += n - i;
    for (; i < n; i++) {
      const b = chunk[i]!;
      if (b === B.ESC || (b === 0x07 && osc) || b === B.CAN || b === B.SUB) {
        this.state = b !== B.ESC ? S.Ground : osc ? S.OscEsc : S.StrEsc;
        if (osc && this.opts.onOsc !== undefined) {
          this.keepOsc(chunk, from, i);
          if (b === B.ESC || b === 0x07) this.endOsc();
        }
        return i + 1;
      }
    }
    this.state = this.strBytes > StripConstants.MAX_STRING_BYTES ? S.Ground : osc ? S.Osc : S.Str;
    if (osc && this.opts.onOsc !== undefined) this.keepOsc(chunk, from, n);
    return n;
  }

  private keepOsc(chunk: Uint8Array, from: number, to: number): void {
    // Decided on the first byte: a string the consumer does not want (titles, hyperlinks) is never copied.
    if (this.oscLen === 0 && from < to && this.opts.oscFirstBytes !== undefined && !this.opts.oscFirstBytes.includes(chunk[from]!)) {
      this.oscLen = StripConstants.OSC_KEEP_BYTES + 1;
      return;
    }
    const room = StripConstants.OSC_KEEP_BYTES - this.oscLen;
    if (room < to - from) {
      this.oscLen = StripConstants.OSC_KEEP_BYTES + 1; // too long: dropped
      return;
    }
    if (from === to) return;
    this.oscBuf ??= Buffer.allocUnsafeSlow(StripConstants.OSC_KEEP_BYTES);
    this.oscBuf.set(chunk.subarray(from, to), this.oscLen);
    this.oscLen += to - from;
  }

  /** Lines completed before the OSC go out first, so the consumer sees both in stream order. */
  private endOsc(): void {
    if (this.oscLen > StripConstants.OSC_KEEP_BYTES) return;
    if (this.start > 0) this.emit();
    this.opts.onOsc!(this.oscLen === 0 ? '' : this.oscBuf!.toString('utf8', 0, this.oscLen));
  }

  /** Writes src[s, e) at the cursor over existing text (after CR, BS...): as many characters as it holds are replaced. */
  private overwrite(src: Uint8Array, s: number, e: number): void {
    let chars = 0;
    for (let k = s; k < e; k++) if (!isContinuation(src[k]!)) chars++;
    let end = this.cur;
    for (; chars > 0 && end < this.len; chars--) while (++end < this.len && isContinuation(this.buf[end]!));
    const grow = e - s - (end - this.cur);
    if (this.len - this.start + grow > this.maxLine) {
      this.len = this.cur; // near the limit (rare): drop what follows the cursor and append, with soft breaks
      for (let k = s; k < e; k++) this.putByte(src[k]!);
      return;
    }
    this.ensure(this.len + grow);
    this.buf.copyWithin(this.cur + (e - s), end, this.len);
    for (let k = s; k < e; k++) this.buf[this.cur++] = src[k]!;
    this.len += grow;
  }

  /** Writes one byte at the cursor (TAB, CUF padding). */
  private putByte(b: number): void {
    if (this.cur < this.len) return this.overwrite(Uint8Array.of(b), 0, 1);
    if (this.len - this.start >= this.maxLine) this.softBreak();
    this.ensure(this.len + 1);
    this.buf[this.len++] = b;
    this.cur++;
  }

  private left(n: number): void {
    for (; n > 0 && this.cur > this.start; n--) while (--this.cur > this.start && isContinuation(this.buf[this.cur]!));
  }

  /** Moves over existing characters, then pads with spaces (CUF past the end of the line). */
  private right(n: number): void {
    for (; n > 0 && this.cur < this.len; n--) while (++this.cur < this.len && isContinuation(this.buf[this.cur]!));
    if (n > 0 && this.len - this.start + n <= this.maxLine) {
      // At the end of the line (TUIs space words with `ESC [ 1 C`): the padding at once, no soft break due.
      this.ensure(this.len + n);
      const buf = this.buf;
      for (let end = this.len + n; this.len < end; ) buf[this.len++] = B.SPACE;
      this.cur = this.len;
      return;
    }
    for (; n > 0; n--) this.putByte(B.SPACE);
  }

  /**
   * EL 0: cursor to end; 1: row start through the cursor; 2: the whole row. Columns left of the cursor stay, as
   * spaces. The cursor's row reaches at most MAX_COLUMNS columns left of it (no terminal row is wider; a longer
   * logical line wrapped, and its earlier rows stay): so an EL costs O(MAX_COLUMNS), not O(line), and a flood
   * of `ESC [ 2 K` after a 64 KiB line stays linear.
   */
  private eraseLine(mode: number): void {
    if (mode !== 1) this.len = this.cur;
    if (mode === 0) return;
    const under = this.cur < this.len ? 1 : 0; // EL 1 also erases the character under the cursor
    let from = this.cur;
    let cols = 0;
    for (; cols + under < StripConstants.MAX_COLUMNS && from > this.start; cols++) while (--from > this.start && isContinuation(this.buf[from]!));
    const erase = cols + under;
    this.cur = from;
    if (erase > 0) this.overwrite(SPACES, 0, erase);
    this.cur = from + cols;
  }

  /** Room for `bytes` bytes plus one (the LF a newline writes at the end). */
  private ensure(bytes: number): void {
    if (bytes < this.buf.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(bytes + 1, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  /**
   * Cuts an over-long line at its last space in the window (the space becomes the LF); else after its last
   * separator (`,;|&` or a bracket: minified JSON, query strings), so a token (a secret) is not cut in two and
   * still redacted whole; else before an incomplete character.
   */
  private softBreak(): void {
    const buf = this.buf;
    const from = Math.max(this.start + 1, this.len - StripConstants.SOFT_BREAK_WINDOW_BYTES);
    let cut = this.len - 1;
    while (cut >= from && buf[cut] !== B.SPACE) cut--;
    if (cut < from) {
      cut = this.len - 1;
      while (cut >= from && !isSeparator(buf[cut]!)) cut--;
      cut = cut < from ? this.len - incompleteTail(buf, this.start, this.len) : cut + 1;
      this.ensure(this.len + 1);
      this.buf.copyWithin(cut + 1, cut, this.len++);
    }
    this.lineEnd(cut);
    this.start = cut + 1;
    this.cur = this.len;
  }
}
