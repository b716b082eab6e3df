/**
 * The current screen of a terminal as a grid of cells, fed PTY bytes (any split). A byte machine over
 * Uint32 cells, one code point (or combined cluster) per cell, covering what TUIs send: cursor moves,
 * erase, insert/delete, scroll regions, the alternate screen, DEC line drawing, tab stops, wide and
 * combining characters, deferred wrap. Colours and attributes are not text and are skipped.
 * Rows are reached through a row map, so a scroll moves row offsets, not cells (see Page).
 * Chosen over @xterm/headless (bench/workers/screen.bench.ts): the same rows on realistic TUI output,
 * ~3× its speed on a quiet machine (xterm 0.33-0.36× the grid, 0.18-0.20× strip-ansi) and ~9 KB per
 * 80×24 grid against ~163 KB. Not modelled: reflow of wrapped lines on resize (apps redraw).
 */

import { charWidth } from './screenWidth.js';

export const GridConstants = {
  /** Distinct combined clusters (e + U+0301, ZWJ emoji) kept per grid; past it, marks are dropped. */
  MAX_CLUSTERS: 1024,
  /** CSI parameters kept; more are ignored (none of the sequences interpreted needs more than two). */
  MAX_PARAMS: 16,
  /** Distinct OSC 8 hyperlink targets kept per grid; past it, new links are not recorded. */
  MAX_LINKS: 1024,
  /** Longest OSC 8 sequence recorded (params and URI); a longer one is not a link here. */
  MAX_LINK_BYTES: 4096,
  /** Kitty keyboard flag stack depth per screen (kitty's own); a deeper push drops the oldest entry. */
  MAX_KITTY_STACK: 16,
} as const;

enum S {
  Ground,
  Esc,
  EscSkip,
  Charset,
  Csi,
  Str,
  StrEsc,
}

/** Cell values below the first code point a cell can hold: blank, and the right half of a wide character. */
const BLANK = 0;
const WIDE_TAIL = 1;
/** Cell values from here on are indexes into `clusters` (past the last Unicode code point). */
const CLUSTER_BASE = 0x110000;

/** CSI finals that move the cursor or edit at it: CUU CUD CUF CUB CNL CPL CHA HPA HPR VPA VPR CUP HVP CHT CBT IL DL ICH DCH ECH DECSTBM SCORC. */
const CANCELS_PENDING_WRAP = new Set([...'ABCDEFG`adeHfIZLM@PXru'].map((c) => c.charCodeAt(0)));

/** DEC Special Graphics (`ESC ( 0`), as xterm maps it. */
const DEC_GRAPHICS = new Map<number, number>(
  [...'`abcdefghijklmnopqrstuvwxyz{|}~'].map((c, i) => [c.charCodeAt(0), [...'◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·'][i]!.codePointAt(0)!]),
);

interface Cursor {
  x: number;
  y: number;
  graphics: boolean;
}

/**
 * One screen. `cells` holds `rows` physical rows of `cols` cells in no set order; `rowAt[y]` is where
 * screen row y starts in it. A scroll rotates the row map and blanks the rows it recycles, O(rows +
 * k × cols), where moving the cells cost rows × cols per line feed at the bottom of the region (the
 * replay of a full output ring of short lines on a 200×500 grid: seconds of a pty host shared by every
 * session). Every cell access goes through `rowAt`; a row's cells stay contiguous.
 */
class Page {
  readonly cells: Uint32Array;
  /** Screen row → index of its first cell in `cells`. */
  readonly rowAt: Uint32Array;
  /** Per screen row: it continues the row above (auto-wrapped). */
  readonly wrapped: Uint8Array;
  /** Scratch for the row offsets a scroll recycles. */
  readonly spare: Uint32Array;
  /**
   * Per cell (same offsets as `cells`, so scrolls carry it): the OSC 8 hyperlink it was printed
   * under, 0 for none. Allocated with the first link: most sessions never print one.
   */
  links: Uint16Array | undefined;
  /** Kitty keyboard protocol flags pushed on this screen (`CSI > flags u`); the top is in force. */
  readonly kitty: number[] = [];
  constructor(rows: number, cols: number) {
    this.cells = new Uint32Array(rows * cols);
    this.rowAt = new Uint32Array(rows);
    for (let y = 0; y < rows; y++) this.rowAt[y] = y * cols;
    this.wrapped = new Uint8Array(rows);
    this.spare = new Uint32Array(rows);
  }
}

export class ScreenGrid {
  private main: Page;
  /** Allocated on first use: most sessions never leave the primary screen. */
  private alt: Page | undefined;
  private page: Page;
  private x = 0;
  private y = 0;
  /** The last column was written: the next printable character wraps first (VT deferred wrap). */
  private wrapPending = false;
  private top = 0;
  private bottom: number;
  private autowrap = true;
  private origin = false;
  private insertMode = false;
  private g0Graphics = false;
  private g1Graphics = false;
  private shiftOut = false;
  private savedMain: Cursor = { x: 0, y: 0, graphics: false };
  private savedAlt: Cursor = { x: 0, y: 0, graphics: false };
  private tabStops: Uint8Array;
  /** Last printed character, for REP. */
  private lastChar = 0x20;
  private clusters: string[] = [];
  private clusterIds = new Map<string, number>();
  /** The OSC 8 hyperlink new characters are printed under (an index + 1 into `linkUrls`), 0 for none. */
  private link = 0;
  private linkUrls: string[] = [];
  private linkIds = new Map<string, number>();
  /** The string sequence being read is an OSC whose bytes are kept (it may be an OSC 8). */
  private oscKeep = false;
  private oscLen = 0;
  private oscBuf: Uint8Array | undefined;

  private state = S.Ground;
  private charsetSlot = 0;
  private readonly params = new Int32Array(GridConstants.MAX_PARAMS);
  private nParams = 0;
  private param = -1;
  /** CSI private marker (`?`, `>`...), or 1 once an intermediate byte is seen. */
  private priv = 0;
  private utf8Need = 0;
  private utf8Cp = 0;

  constructor(
    private nRows: number,
    private nCols: number,
  ) {
    this.main = new Page(nRows, nCols);
    this.page = this.main;
    this.bottom = nRows - 1;
    this.tabStops = defaultTabStops(nCols);
  }

  /** Memory the grid takes: its pages' cells and row maps, and the tab stops. */
  get heldBytes(): number {
    const page = (p: Page | undefined): number => (p === undefined ? 0 : p.cells.byteLength + p.rowAt.byteLength + p.wrapped.byteLength + p.spare.byteLength);
    return page(this.main) + page(this.alt) + this.tabStops.byteLength;
  }

  get rows(): number {
    return this.nRows;
  }

  get cols(): number {
    return this.nCols;
  }

  get altScreen(): boolean {
    return this.page !== this.main;
  }

  get cursorRow(): number {
    return this.y;
  }

  get cursorCol(): number {
    return this.x;
  }

  /** Row `y` as text, one character per cell (wide characters once), untrimmed. */
  rowText(y: number): string {
    const cells = this.page.cells;
    const start = this.page.rowAt[y];
    if (start === undefined) throw new RangeError(`row ${y} is not on a ${this.nRows}-row screen`);
    let s = '';
    for (let i = start; i < start + this.nCols; i++) {
      const v = cells[i]!;
      if (v === WIDE_TAIL) continue;
      s += v === BLANK ? ' ' : v >= CLUSTER_BASE ? this.clusters[v - CLUSTER_BASE]! : String.fromCodePoint(v);
    }
    return s;
  }

  /** Row `y` continues row y-1: the text ran past the margin there, no line break was printed. */
  isWrapped(y: number): boolean {
    return this.page.wrapped[y] === 1;
  }

  /** The text of cell (y, x): a space when blank, '' for the right half of a wide character. */
  cellText(y: number, x: number): string {
    const v = this.page.cells[this.page.rowAt[y]! + x]!;
    return v === WIDE_TAIL ? '' : v === BLANK ? ' ' : v >= CLUSTER_BASE ? this.clusters[v - CLUSTER_BASE]! : String.fromCodePoint(v);
  }

  /** The OSC 8 target of the character at (y, x); null for none (blank cells have none). */
  linkAt(y: number, x: number): string | null {
    const at = this.page.rowAt[y]! + x;
    const id = this.page.links?.[at] ?? 0;
    if (id === 0 || this.page.cells[at] === BLANK) return null;
    return this.linkUrls[id - 1] ?? null;
  }

  /** The kitty keyboard protocol flags in force on the current screen (0: the protocol is off). */
  get kittyFlags(): number {
    return this.page.kitty.at(-1) ?? 0;
  }

  write(buf: Uint8Array): void {
    const n = buf.length;
    for (let i = 0; i < n; i++) {
      const b = buf[i]!;
      if (this.utf8Need > 0) {
        if ((b & 0xc0) === 0x80) {
          this.utf8Cp = (this.utf8Cp << 6) | (b & 0x3f);
          if (--this.utf8Need === 0) this.printCodePoint(this.utf8Cp);
          continue;
        }
        this.utf8Need = 0;
        this.printCodePoint(0xfffd);
      }
      switch (this.state) {
        case S.Ground:
          if (b >= 0x20 && b < 0x7f) {
            // The hot path: ASCII, through DEC line drawing when that charset is selected.
            const graphics = this.shiftOut ? this.g1Graphics : this.g0Graphics;
            this.print(graphics ? (DEC_GRAPHICS.get(b) ?? b) : b, 1);
            this.lastChar = b;
          } else if (b >= 0xc2 && b <= 0xf4) {
            this.utf8Need = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : 1;
            this.utf8Cp = b & (b >= 0xf0 ? 0x07 : b >= 0xe0 ? 0x0f : 0x1f);
          } else if (b >= 0x80) this.printCodePoint(0xfffd);
          else this.control(b);
          break;
        case S.Esc:
          this.escape(b);
          break;
        case S.EscSkip:
          if (b >= 0x30) this.state = S.Ground; // the final byte of an escape we do not interpret
          break;
        case S.Charset:
          if (this.charsetSlot === 0) this.g0Graphics = b === 0x30;
          else if (this.charsetSlot === 1) this.g1Graphics = b === 0x30;
          this.state = S.Ground;
          break;
        case S.Csi:
          this.csiByte(b);
          break;
        case S.Str:
          if (b === 0x07 || b === 0x18 || b === 0x1a) {
            if (b === 0x07 && this.oscKeep) this.endOsc();
            this.state = S.Ground;
          } else if (b === 0x1b) this.state = S.StrEsc;
          else if (this.oscKeep) this.oscByte(b);
          break;
        case S.StrEsc:
          if (b === 0x5c && this.oscKeep) this.endOsc();
          this.state = b === 0x5c ? S.Ground : b === 0x1b ? S.StrEsc : S.Str;
          break;
      }
    }
  }

  /** New size: rows and columns kept from the top-left, the cursor row kept on screen; no reflow. */
  resize(rows: number, cols: number): void {
    if (rows === this.nRows && cols === this.nCols) return;
    const shift = Math.max(0, this.y - (rows - 1));
    const copy = (from: Page): Page => {
      const to = new Page(rows, cols);
      const width = Math.min(cols, this.nCols);
      for (let r = 0; r < rows && r + shift < this.nRows; r++) {
        const src = from.rowAt[r + shift]!;
        const dst = to.rowAt[r]!;
        to.cells.set(from.cells.subarray(src, src + width), dst);
        if (width < this.nCols && to.cells[dst + width - 1] !== BLANK && from.cells[src + width] === WIDE_TAIL) to.cells[dst + width - 1] = BLANK;
        to.wrapped[r] = from.wrapped[r + shift]!;
        if (from.links !== undefined) (to.links ??= new Uint16Array(to.cells.length)).set(from.links.subarray(src, src + width), dst);
      }
      to.kitty.push(...from.kitty);
      return to;
    };
    const onAlt = this.altScreen;
    this.main = copy(this.main);
    if (this.alt !== undefined) this.alt = copy(this.alt);
    this.page = onAlt ? this.alt! : this.main;
    this.nRows = rows;
    this.nCols = cols;
    this.y -= shift;
    this.x = Math.min(this.x, cols - 1);
    this.top = 0;
    this.bottom = rows - 1;
    this.wrapPending = false;
    this.tabStops = defaultTabStops(cols);
    for (const saved of [this.savedMain, this.savedAlt]) {
      saved.x = Math.min(saved.x, cols - 1);
      saved.y = Math.min(saved.y, rows - 1);
    }
  }

  private printCodePoint(cp: number): void {
    if (cp < 0xa0) return; // C1 controls arrive as UTF-8 too; no TUI relies on them
    const w = charWidth(cp);
    if (w === 0) this.combine(cp);
    else this.print(cp, w);
    this.lastChar = cp;
  }

  private print(cp: number, w: number): void {
    const cols = this.nCols;
    if (this.wrapPending) {
      this.wrapPending = false;
      if (this.autowrap) this.wrapToNextRow();
    }
    if (w === 2 && this.x === cols - 1) {
      if (!this.autowrap) return;
      this.page.cells[this.page.rowAt[this.y]! + this.x] = BLANK;
      this.wrapToNextRow();
    }
    const cells = this.page.cells;
    const row = this.page.rowAt[this.y]!;
    // Guarded: in a one-column grid `row + cols - w` is -1 for the row stored first, which copyWithin reads from the end.
    if (this.insertMode && this.x + w < cols) {
      cells.copyWithin(row + this.x + w, row + this.x, row + cols - w);
      this.page.links?.copyWithin(row + this.x + w, row + this.x, row + cols - w);
    }
    const at = row + this.x;
    if (cells[at] === WIDE_TAIL && this.x > 0) cells[at - 1] = BLANK; // overwrote the right half of a wide char
    cells[at] = cp;
    const links = this.page.links;
    if (links !== undefined) {
      links[at] = this.link;
      if (w === 2 && this.x + 1 < cols) links[at + 1] = this.link;
    }
    if (w === 2) {
      if (this.x + 1 < cols) cells[at + 1] = WIDE_TAIL;
      // Only in a one-column grid: the right half goes to the first cell of the row below (none past the
      // last row), where it went when rows lay in screen order; kept so that output stays the same.
      else if (this.y + 1 < this.nRows) cells[this.page.rowAt[this.y + 1]!] = WIDE_TAIL;
    }
    if (this.x + w < cols && cells[at + w] === WIDE_TAIL) cells[at + w] = BLANK; // overwrote its left half
    if (this.x + w >= cols) {
      this.x = cols - 1;
      this.wrapPending = true;
    } else this.x += w;
  }

  /**
   * REP: the grid `n` prints of `c` leave, in O(rows × cols) work whatever `n` is (REP 65535 printed
   * one by one scrolled the whole region once per row: 0.8-2 ms per 10 input bytes on a 200×500 grid).
   */
  private repeat(c: number, w: number, n: number): void {
    const cols = this.nCols;
    const perRow = Math.floor(cols / w);
    // Without autowrap the cursor stops at the right margin within `cols` prints, and from there a
    // print rewrites the same cell (or, a wide character, returns): the rest change nothing.
    // A wide character in a one-column grid (perRow 0) keeps the old bounded loop.
    if (!this.autowrap || perRow === 0) {
      const prints = Math.min(n, this.autowrap ? cols * this.nRows : cols);
      for (let k = 0; k < prints; k++) this.print(c, w);
      return;
    }
    let left = n;
    // Up to a row end: the next print wraps (deferred wrap, or a wide character at the last column).
    while (left > 0 && !this.wrapPending && !(w === 2 && this.x === cols - 1)) {
      this.print(c, w);
      left--;
    }
    // From a row end, each perRow prints wrap and fill one row. All but the last of those rows are
    // written at once; the last and the remainder go through print(), which also sets the cursor row.
    const rows = Math.floor(left / perRow);
    if (rows >= 2) {
      this.fillWrappedRows(c, w, rows - 1);
      left -= (rows - 1) * perRow;
    }
    for (; left > 0; left--) this.print(c, w);
  }

  /**
   * `count` wraps from a row end, each followed by one row of `c` printed from column 0, as print()
   * does them, with the scrolls at the bottom of the region done as one. A row so filled and then
   * left is the same whatever it held (insert mode included: what it pushed right fell off or was
   * the last cell, which the next wrap blanks when a wide character does not fit there).
   */
  private fillWrappedRows(c: number, w: number, count: number): void {
    const cols = this.nCols;
    const { cells, wrapped, rowAt } = this.page;
    const perRow = Math.floor(cols / w);
    const row = new Uint32Array(cols);
    for (let i = 0; i < perRow; i++) {
      row[i * w] = c;
      if (w === 2) row[i * w + 1] = WIDE_TAIL;
    }
    if (!this.wrapPending) cells[rowAt[this.y]! + cols - 1] = BLANK; // a wide character did not fit there
    // Line feeds move the cursor down to the bottom of the region (or of the screen, below the region)...
    const stop = this.y <= this.bottom ? this.bottom : this.nRows - 1;
    const down = Math.min(count, stop - this.y);
    for (let k = 0; k < down; k++) {
      this.y++;
      cells.set(row, rowAt[this.y]!);
      wrapped[this.y] = 1;
    }
    // ...then scroll the region (or rewrite the last row in place, below the region).
    const rest = count - down;
    if (rest > 0 && this.y === this.bottom) {
      this.scrollUp(rest, this.top);
      const fresh = Math.min(rest, this.bottom - this.top + 1);
      for (let y = this.bottom - fresh + 1; y <= this.bottom; y++) {
        cells.set(row, rowAt[y]!);
        wrapped[y] = 1;
      }
      if (this.top < this.bottom) wrapped[this.top] = 0; // each scroll leaves the top row unwrapped
    } else if (rest > 0) {
      cells.set(row, rowAt[this.y]!);
      wrapped[this.y] = 1;
    }
    this.x = cols - 1;
    this.wrapPending = perRow * w === cols;
  }

  private wrapToNextRow(): void {
    this.x = 0;
    this.lineFeed();
    this.page.wrapped[this.y] = 1;
  }

  /** A zero-width character joins the cell printed last (e + U+0301, ZWJ sequences). */
  private combine(cp: number): void {
    const rowStart = this.page.rowAt[this.y]!;
    let at = rowStart + (this.wrapPending ? this.x : this.x - 1);
    if (at < rowStart) return;
    const cells = this.page.cells;
    if (cells[at] === WIDE_TAIL && at > rowStart) at--;
    const base = cells[at]!;
    if (base === BLANK || base === WIDE_TAIL) return;
    const text = (base >= CLUSTER_BASE ? this.clusters[base - CLUSTER_BASE]! : String.fromCodePoint(base)) + String.fromCodePoint(cp);
    let id = this.clusterIds.get(text);
    if (id === undefined) {
      if (this.clusters.length >= GridConstants.MAX_CLUSTERS) return;
      id = this.clusters.push(text) - 1;
      this.clusterIds.set(text, id);
    }
    cells[at] = CLUSTER_BASE + id;
  }

  private control(b: number): void {
    switch (b) {
      case 0x08: // BS
        if (this.x > 0 && !this.wrapPending) this.x--;
        else if (this.wrapPending) this.x = Math.max(0, this.nCols - 2);
        this.wrapPending = false;
        break;
      case 0x09: // HT
        this.tab(1);
        break;
      case 0x0a: // LF, VT, FF
      case 0x0b:
      case 0x0c:
        this.lineFeed();
        break;
      case 0x0d: // CR
        this.x = 0;
        this.wrapPending = false;
        break;
      case 0x0e: // SO: G1
        this.shiftOut = true;
        break;
      case 0x0f: // SI: G0
        this.shiftOut = false;
        break;
      case 0x1b:
        this.state = S.Esc;
        break;
    }
  }

  private escape(b: number): void {
    this.state = S.Ground;
    switch (b) {
      case 0x5b: // [ CSI
        this.state = S.Csi;
        this.nParams = 0;
        this.param = -1;
        this.priv = 0;
        break;
      case 0x5d: // ] OSC
        this.state = S.Str;
        this.oscKeep = true;
        this.oscLen = 0;
        break;
      case 0x50: // P DCS
      case 0x5f: // _ APC
      case 0x5e: // ^ PM
      case 0x58: // X SOS
        this.state = S.Str;
        this.oscKeep = false;
        break;
      case 0x28: // ( ) * + designate G0..G3
      case 0x29:
      case 0x2a:
      case 0x2b:
        this.charsetSlot = b - 0x28;
        this.state = S.Charset;
        break;
      case 0x37: // 7 DECSC
        this.saveCursor();
        break;
      case 0x38: // 8 DECRC
        this.restoreCursor();
        break;
      case 0x44: // D IND
        this.lineFeed();
        break;
      case 0x45: // E NEL
        this.x = 0;
        this.lineFeed();
        break;
      case 0x48: // H HTS
        this.tabStops[this.x] = 1;
        break;
      case 0x4d: // M RI
        this.reverseIndex();
        break;
      case 0x63: // c RIS
        this.reset();
        break;
      case 0x1b:
        this.state = S.Esc;
        break;
      default:
        // ESC # 8, ESC % G, ESC SP F...: an intermediate, then a final byte to swallow.
        if (b >= 0x20 && b <= 0x2f) this.state = S.EscSkip;
    }
  }

  private csiByte(b: number): void {
    if (b >= 0x30 && b <= 0x39) {
      if (this.param < 100_000) this.param = Math.max(this.param, 0) * 10 + (b - 0x30);
    } else if (b === 0x3b || b === 0x3a) this.nextParam();
    else if (b >= 0x3c && b <= 0x3f) this.priv = this.priv || b;
    else if (b >= 0x40 && b <= 0x7e) {
      this.nextParam();
      this.state = S.Ground;
      this.csi(b);
    } else if (b >= 0x20 && b <= 0x2f)
      this.priv = 1; // an intermediate: DECSTR, DECSCUSR...: not ours
    else if (b === 0x1b) this.state = S.Esc;
    else if (b === 0x18 || b === 0x1a) this.state = S.Ground;
    else if (b < 0x20) this.control(b); // C0 inside CSI executes in place
  }

  private nextParam(): void {
    if (this.nParams < this.params.length) this.params[this.nParams++] = this.param;
    this.param = -1;
  }

  /** Parameter i as a count: absent or 0 means `def`. */
  private count(i: number, def = 1): number {
    const v = i < this.nParams ? this.params[i]! : -1;
    return v <= 0 ? def : v;
  }

  /** Parameter i as a selector: absent means 0. */
  private mode(i: number): number {
    return i < this.nParams ? Math.max(0, this.params[i]!) : 0;
  }

  private csi(final: number): void {
    if (this.priv === 0x3f) {
      if (final === 0x68 || final === 0x6c) for (let i = 0; i < this.nParams; i++) this.privateMode(this.params[i]!, final === 0x68);
      return;
    }
    if (final === 0x75 && this.priv >= 0x3c && this.priv <= 0x3e) {
      this.kittyKeyboard(this.priv);
      return;
    }
    if (this.priv !== 0) return;
    const cols = this.nCols;
    const n = this.count(0);
    const cells = this.page.cells;
    const row = this.page.rowAt[this.y]!;
    // Cursor moves and edits at the cursor cancel a pending wrap (xterm: the cursor comes back from past
    // the margin); erase in line/display, scrolling and SGR leave it, so the next character still wraps.
    if (CANCELS_PENDING_WRAP.has(final)) this.wrapPending = false;
    /** Where erasing starts: past the margin while a wrap is pending, as in xterm. */
    const ex = this.wrapPending ? cols : this.x;
    switch (final) {
      case 0x41: // A CUU
        this.y = Math.max(this.y >= this.top ? this.top : 0, this.y - n);
        break;
      case 0x42: // B CUD
      case 0x65: // e VPR
        this.y = Math.min(this.y <= this.bottom ? this.bottom : this.nRows - 1, this.y + n);
        break;
      case 0x43: // C CUF
      case 0x61: // a HPR
        this.x = Math.min(cols - 1, this.x + n);
        break;
      case 0x44: // D CUB
        this.x = Math.max(0, this.x - n);
        break;
      case 0x45: // E CNL
        this.y = Math.min(this.y <= this.bottom ? this.bottom : this.nRows - 1, this.y + n);
        this.x = 0;
        break;
      case 0x46: // F CPL
        this.y = Math.max(this.y >= this.top ? this.top : 0, this.y - n);
        this.x = 0;
        break;
      case 0x47: // G CHA
      case 0x60: // ` HPA
        this.x = Math.min(cols - 1, n - 1);
        break;
      case 0x48: // H CUP
      case 0x66: // f HVP
        this.moveTo(this.count(0) - 1, this.count(1) - 1);
        break;
      case 0x64: // d VPA
        this.moveTo(n - 1, this.x);
        break;
      case 0x49: // I CHT
        this.tab(n);
        break;
      case 0x5a: // Z CBT
        for (let k = 0; k < n && this.x > 0; k++)
          do this.x--;
          while (this.x > 0 && this.tabStops[this.x] === 0);
        break;
      case 0x67: // g TBC
        if (this.mode(0) === 0) this.tabStops[this.x] = 0;
        else if (this.mode(0) === 3) this.tabStops.fill(0);
        break;
      case 0x4a: // J ED
        this.eraseDisplay(this.mode(0), ex);
        break;
      case 0x4b: {
        // K EL
        const m = this.mode(0);
        if (m === 0) cells.fill(BLANK, row + ex, row + cols);
        else if (m === 1) cells.fill(BLANK, row, row + Math.min(cols, ex + 1));
        else if (m === 2) cells.fill(BLANK, row, row + cols);
        break;
      }
      case 0x58: // X ECH
        cells.fill(BLANK, row + this.x, row + Math.min(cols, this.x + n));
        break;
      case 0x40: {
        // @ ICH
        const k = Math.min(n, cols - this.x);
        cells.copyWithin(row + this.x + k, row + this.x, row + cols - k);
        // A link moves with its characters (the blanks left behind carry none: linkAt skips blanks).
        this.page.links?.copyWithin(row + this.x + k, row + this.x, row + cols - k);
        cells.fill(BLANK, row + this.x, row + this.x + k);
        break;
      }
      case 0x50: {
        // P DCH
        const k = Math.min(n, cols - this.x);
        cells.copyWithin(row + this.x, row + this.x + k, row + cols);
        this.page.links?.copyWithin(row + this.x, row + this.x + k, row + cols);
        cells.fill(BLANK, row + cols - k, row + cols);
        break;
      }
      case 0x4c: // L IL
        if (this.y >= this.top && this.y <= this.bottom) this.scrollDown(n, this.y);
        this.x = 0;
        break;
      case 0x4d: // M DL
        if (this.y >= this.top && this.y <= this.bottom) this.scrollUp(n, this.y);
        this.x = 0;
        break;
      case 0x53: // S SU
        this.scrollUp(n, this.top);
        break;
      case 0x54: // T SD
        this.scrollDown(n, this.top);
        break;
      case 0x72: {
        // r DECSTBM
        const top = this.count(0) - 1;
        const bottom = Math.min(this.nRows, this.count(1, this.nRows)) - 1;
        if (top < bottom) {
          this.top = top;
          this.bottom = bottom;
          this.moveTo(0, 0);
        }
        break;
      }
      case 0x73: // s SCOSC
        this.saveCursor();
        break;
      case 0x75: // u SCORC
        this.restoreCursor();
        break;
      case 0x62: {
        // b REP
        const c = this.lastChar;
        const w = charWidth(c);
        if (w > 0) this.repeat(c, w, n);
        break;
      }
      case 0x68: // h SM
      case 0x6c: // l RM
        for (let i = 0; i < this.nParams; i++) if (this.params[i] === 4) this.insertMode = final === 0x68;
        break;
    }
  }

  private privateMode(mode: number, on: boolean): void {
    switch (mode) {
      case 6: // DECOM
        this.origin = on;
        this.moveTo(0, 0);
        break;
      case 7: // DECAWM
        this.autowrap = on;
        break;
      case 47:
      case 1047:
        if (!on && this.alt !== undefined && mode === 1047) clearPage(this.alt);
        this.switchScreen(on);
        break;
      case 1048:
        if (on) this.saveCursor();
        else this.restoreCursor();
        break;
      case 1049:
        if (on) {
          this.saveCursor();
          this.switchScreen(true);
          clearPage(this.page);
        } else {
          this.switchScreen(false);
          this.restoreCursor();
        }
        break;
    }
  }

  private switchScreen(alt: boolean): void {
    if (alt === this.altScreen) return;
    // The cursor is shared by both screens (DECSC slots are not): it stays where it is.
    this.page = alt ? (this.alt ??= new Page(this.nRows, this.nCols)) : this.main;
    if (this.link !== 0) this.page.links ??= new Uint16Array(this.page.cells.length);
    this.wrapPending = false;
  }

  /** The kitty keyboard protocol's flag stack: `CSI > f u` push, `CSI < n u` pop, `CSI = f ; m u` set, or or and-not. */
  private kittyKeyboard(marker: number): void {
    const stack = this.page.kitty;
    if (marker === 0x3e) {
      if (stack.length >= GridConstants.MAX_KITTY_STACK) stack.shift();
      stack.push(this.mode(0));
    } else if (marker === 0x3c) {
      stack.length = Math.max(0, stack.length - this.count(0));
    } else {
      const flags = this.mode(0);
      const current = stack.at(-1) ?? 0;
      const mode = this.count(1);
      const next = mode === 2 ? current | flags : mode === 3 ? current & ~flags : flags;
      if (stack.length === 0) stack.push(next);
      else stack[stack.length - 1] = next;
    }
  }

  /** An OSC byte: kept while it may still be an OSC 8 (`8;params;URI`) short enough to record. */
  private oscByte(b: number): void {
    if ((this.oscLen === 0 && b !== 0x38) || (this.oscLen === 1 && b !== 0x3b) || this.oscLen >= GridConstants.MAX_LINK_BYTES) {
      this.oscKeep = false;
      return;
    }
    this.oscBuf ??= new Uint8Array(GridConstants.MAX_LINK_BYTES);
    this.oscBuf[this.oscLen++] = b;
  }

  /** The end of a kept OSC: an OSC 8 starts (a URI) or ends (none) the hyperlink new text is printed under. */
  private endOsc(): void {
    this.oscKeep = false;
    if (this.oscLen < 2 || this.oscBuf === undefined) return;
    const text = new TextDecoder().decode(this.oscBuf.subarray(2, this.oscLen));
    const uri = text.slice(text.indexOf(';') + 1);
    if (uri === '' || !text.includes(';')) {
      this.link = 0;
      return;
    }
    let id = this.linkIds.get(uri);
    if (id === undefined) {
      if (this.linkUrls.length >= GridConstants.MAX_LINKS) {
        this.link = 0;
        return;
      }
      id = this.linkUrls.push(uri);
      this.linkIds.set(uri, id);
    }
    this.link = id;
    this.page.links ??= new Uint16Array(this.page.cells.length);
  }

  private moveTo(row: number, col: number): void {
    const top = this.origin ? this.top : 0;
    const bottom = this.origin ? this.bottom : this.nRows - 1;
    this.y = Math.max(top, Math.min(bottom, top + row));
    this.x = Math.max(0, Math.min(this.nCols - 1, col));
    this.wrapPending = false;
  }

  private saveCursor(): void {
    const slot = this.altScreen ? this.savedAlt : this.savedMain;
    slot.x = this.x;
    slot.y = this.y;
    slot.graphics = this.g0Graphics;
  }

  private restoreCursor(): void {
    const slot = this.altScreen ? this.savedAlt : this.savedMain;
    this.x = Math.min(slot.x, this.nCols - 1);
    this.y = Math.min(slot.y, this.nRows - 1);
    this.g0Graphics = slot.graphics;
    this.wrapPending = false;
  }

  private tab(n: number): void {
    for (let k = 0; k < n && this.x < this.nCols - 1; k++)
      do this.x++;
      while (this.x < this.nCols - 1 && this.tabStops[this.x] === 0);
  }

  /** `x` is at most `cols` (past the margin while a wrap is pending). */
  private eraseDisplay(mode: number, x: number): void {
    const { cells, wrapped, rowAt } = this.page;
    const cols = this.nCols;
    const row = rowAt[this.y]!;
    if (mode === 0) {
      cells.fill(BLANK, row + x, row + cols);
      for (let y = this.y + 1; y < this.nRows; y++) cells.fill(BLANK, rowAt[y]!, rowAt[y]! + cols);
      wrapped.fill(0, this.y + 1);
    } else if (mode === 1) {
      for (let y = 0; y < this.y; y++) cells.fill(BLANK, rowAt[y]!, rowAt[y]! + cols);
      cells.fill(BLANK, row, row + Math.min(x + 1, cols));
      wrapped.fill(0, 0, this.y + 1);
    } else if (mode === 2 || mode === 3) clearPage(this.page);
  }

  private lineFeed(): void {
    if (this.y === this.bottom) this.scrollUp(1, this.top);
    else if (this.y < this.nRows - 1) this.y++;
  }

  private reverseIndex(): void {
    if (this.y === this.top) this.scrollDown(1, this.top);
    else if (this.y > 0) this.y--;
  }

  /**
   * Rows [from, bottom] move up by n; blank rows come in at the bottom of the region: the k rows that
   * leave at `from` are blanked and mapped there (`from` is never below `bottom`).
   */
  private scrollUp(n: number, from: number): void {
    const cols = this.nCols;
    const { cells, wrapped, rowAt, spare } = this.page;
    const end = this.bottom + 1;
    const k = Math.min(n, end - from);
    for (let i = 0; i < k; i++) spare[i] = rowAt[from + i]!;
    rowAt.copyWithin(from, from + k, end);
    for (let i = 0; i < k; i++) {
      const at = spare[i]!;
      rowAt[end - k + i] = at;
      cells.fill(BLANK, at, at + cols);
    }
    wrapped.copyWithin(from, from + k, end);
    wrapped.fill(0, end - k, end);
    if (from < this.nRows) wrapped[from] = 0; // its predecessor scrolled away or was not its line
  }

  /** Rows [from, bottom] move down by n; blank rows come in at `from`: the k rows that leave at the bottom, blanked. */
  private scrollDown(n: number, from: number): void {
    const cols = this.nCols;
    const { cells, wrapped, rowAt, spare } = this.page;
    const end = this.bottom + 1;
    const k = Math.min(n, end - from);
    for (let i = 0; i < k; i++) spare[i] = rowAt[end - k + i]!;
    rowAt.copyWithin(from + k, from, end - k);
    for (let i = 0; i < k; i++) {
      const at = spare[i]!;
      rowAt[from + i] = at;
      cells.fill(BLANK, at, at + cols);
    }
    wrapped.copyWithin(from + k, from, end - k);
    wrapped.fill(0, from, from + k);
    if (from + k < this.nRows) wrapped[from + k] = 0;
  }

  private reset(): void {
    clearPage(this.main);
    this.main.kitty.length = 0;
    this.alt = undefined;
    this.page = this.main;
    this.x = this.y = 0;
    this.top = 0;
    this.bottom = this.nRows - 1;
    this.wrapPending = this.origin = this.insertMode = false;
    this.autowrap = true;
    this.g0Graphics = this.g1Graphics = this.shiftOut = false;
    this.savedMain = { x: 0, y: 0, graphics: false };
    this.savedAlt = { x: 0, y: 0, graphics: false };
    this.tabStops = defaultTabStops(this.nCols);
    this.clusters = [];
    this.clusterIds.clear();
    this.link = 0;
    this.linkUrls = [];
    this.linkIds.clear();
  }
}

/** Every cell blank: the row map's order does not matter then. */
function clearPage(page: Page): void {
  page.cells.fill(BLANK);
  page.wrapped.fill(0);
}

function defaultTabStops(cols: number): Uint8Array {
  const stops = new Uint8Array(cols);
  for (let c = 8; c < cols; c += 8) stops[c] = 1;
  return stops;
}
