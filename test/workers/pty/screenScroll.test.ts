/**
 * ScreenGrid scrolling: the grid reaches its rows through a row map that a scroll rotates, instead of
 * moving every cell. Checked against a naive array-of-rows screen written here (printable ASCII, CR,
 * LF, scroll regions, SU/SD, IL/DL, reverse index, CUP, ED, EL) on seeded random sequences, and on a
 * long replay at a large size, where every row has been recycled many times over.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ScreenGrid } from '../../../workers/pty/screenGrid.js';
import { prng } from '../../helpers/prng.js';

interface RefRow {
  cells: string[];
  /** The row continues the one above: text ran past the margin. */
  wrapped: boolean;
}

/** The obvious screen: one array per row, rows spliced in and out. Only what the sequences below send. */
class ReferenceScreen {
  rowList: RefRow[];
  x = 0;
  y = 0;
  wrapPending = false;
  top = 0;
  bottom: number;

  constructor(
    readonly rows: number,
    readonly cols: number,
  ) {
    this.rowList = Array.from({ length: rows }, () => this.blankRow());
    this.bottom = rows - 1;
  }

  blankRow(): RefRow {
    return { cells: new Array<string>(this.cols).fill(' '), wrapped: false };
  }

  print(ch: string): void {
    if (this.wrapPending) {
      this.wrapPending = false;
      this.x = 0;
      this.lineFeed();
      this.rowList[this.y]!.wrapped = true;
    }
    this.rowList[this.y]!.cells[this.x] = ch;
    if (this.x + 1 >= this.cols) this.wrapPending = true;
    else this.x++;
  }

  carriageReturn(): void {
    this.x = 0;
    this.wrapPending = false;
  }

  lineFeed(): void {
    if (this.y === this.bottom) this.scrollUp(1, this.top);
    else if (this.y < this.rows - 1) this.y++;
  }

  reverseIndex(): void {
    if (this.y === this.top) this.scrollDown(1, this.top);
    else if (this.y > 0) this.y--;
  }

  /** DECSTBM with its parameters as sent (undefined: absent); a region of one row or none is ignored. */
  setRegion(a: number | undefined, b: number | undefined): void {
    this.wrapPending = false;
    const top = count(a, 1) - 1;
    const bottom = Math.min(this.rows, count(b, this.rows)) - 1;
    if (top < bottom) {
      this.top = top;
      this.bottom = bottom;
      this.moveTo(0, 0);
    }
  }

  moveTo(row: number, col: number): void {
    this.y = Math.max(0, Math.min(this.rows - 1, row));
    this.x = Math.max(0, Math.min(this.cols - 1, col));
    this.wrapPending = false;
  }

  /** IL (down) and DL (up): only inside the region; the cursor goes to column 0. */
  insertOrDeleteLines(n: number, insert: boolean): void {
    if (this.y >= this.top && this.y <= this.bottom) {
      if (insert) this.scrollDown(n, this.y);
      else this.scrollUp(n, this.y);
    }
    this.x = 0;
    this.wrapPending = false;
  }

  scrollUp(n: number, from: number): void {
    const k = Math.min(n, this.bottom - from + 1);
    this.rowList.splice(from, k);
    this.rowList.splice(this.bottom + 1 - k, 0, ...Array.from({ length: k }, () => this.blankRow()));
    this.rowList[from]!.wrapped = false;
  }

  scrollDown(n: number, from: number): void {
    const k = Math.min(n, this.bottom - from + 1);
    this.rowList.splice(this.bottom + 1 - k, k);
    this.rowList.splice(from, 0, ...Array.from({ length: k }, () => this.blankRow()));
    if (from + k < this.rows) this.rowList[from + k]!.wrapped = false;
  }

  /** Erasing starts past the margin while a wrap is pending. */
  private get eraseX(): number {
    return this.wrapPending ? this.cols : this.x;
  }

  eraseLine(mode: number): void {
    const cells = this.rowList[this.y]!.cells;
    const [from, to] = mode === 0 ? [this.eraseX, this.cols] : mode === 1 ? [0, Math.min(this.cols, this.eraseX + 1)] : mode === 2 ? [0, this.cols] : [0, 0];
    for (let i = from; i < to; i++) cells[i] = ' ';
  }

  eraseDisplay(mode: number): void {
    if (mode === 0) {
      this.eraseLine(0);
      for (let y = this.y + 1; y < this.rows; y++) this.rowList[y] = this.blankRow();
    } else if (mode === 1) {
      this.eraseLine(1);
      for (let y = 0; y < this.y; y++) this.rowList[y] = this.blankRow();
      for (let y = 0; y <= this.y; y++) this.rowList[y]!.wrapped = false;
    } else if (mode === 2 || mode === 3) this.rowList = this.rowList.map(() => this.blankRow());
  }
}

/** A CSI count: absent or 0 means the default. */
function count(v: number | undefined, def: number): number {
  return v === undefined || v === 0 ? def : v;
}

/** One step: the bytes the grid gets and what the reference does with them. */
interface Op {
  bytes: string;
  apply: (ref: ReferenceScreen) => void;
}

function randomOp(rand: () => number, rows: number, cols: number): Op {
  const int = (n: number): number => Math.floor(rand() * n);
  /** A parameter: absent, 0, or up to a little past the screen. */
  const param = (max: number): number | undefined => (rand() < 0.15 ? undefined : rand() < 0.1 ? 0 : 1 + int(max + 2));
  const show = (v: number | undefined): string => (v === undefined ? '' : String(v));
  const r = rand();
  if (r < 0.3) {
    let text = '';
    const length = 1 + int(cols + 3);
    for (let i = 0; i < length; i++) text += String.fromCharCode(0x20 + int(0x5f));
    return {
      bytes: text,
      apply: (ref) => {
        for (const ch of text) ref.print(ch);
      },
    };
  }
  if (r < 0.45) return { bytes: '\n', apply: (ref) => ref.lineFeed() };
  if (r < 0.52) return { bytes: '\r', apply: (ref) => ref.carriageReturn() };
  if (r < 0.62)
    return {
      bytes: '\r\n',
      apply: (ref) => {
        ref.carriageReturn();
        ref.lineFeed();
      },
    };
  if (r < 0.67) return { bytes: '\x1bM', apply: (ref) => ref.reverseIndex() };
  if (r < 0.73) {
    if (rand() < 0.2) return { bytes: '\x1b[r', apply: (ref) => ref.setRegion(undefined, undefined) };
    const a = param(rows);
    const b = param(rows);
    return { bytes: `\x1b[${show(a)};${show(b)}r`, apply: (ref) => ref.setRegion(a, b) };
  }
  if (r < 0.85) {
    const n = param(rows);
    const final = 'STLM'[int(4)]!;
    const apply = (ref: ReferenceScreen): void => {
      const k = count(n, 1);
      if (final === 'S') ref.scrollUp(k, ref.top);
      else if (final === 'T') ref.scrollDown(k, ref.top);
      else ref.insertOrDeleteLines(k, final === 'L');
    };
    return { bytes: `\x1b[${show(n)}${final}`, apply };
  }
  if (r < 0.93) {
    const row = param(rows);
    const col = param(cols);
    return { bytes: `\x1b[${show(row)};${show(col)}H`, apply: (ref) => ref.moveTo(count(row, 1) - 1, count(col, 1) - 1) };
  }
  const mode = rand() < 0.2 ? undefined : int(4);
  if (rand() < 0.5) return { bytes: `\x1b[${show(mode)}J`, apply: (ref) => ref.eraseDisplay(mode ?? 0) };
  return { bytes: `\x1b[${show(mode)}K`, apply: (ref) => ref.eraseLine(mode ?? 0) };
}

/** Rows (untrimmed), wrap flags and cursor, as both screens show them. */
function gridView(g: ScreenGrid): string {
  const rows = Array.from({ length: g.rows }, (_, y) => `${g.isWrapped(y) ? '+' : '|'}${g.rowText(y)}|`);
  return `${rows.join('\n')}\ncursor ${g.cursorRow},${g.cursorCol}`;
}

function referenceView(ref: ReferenceScreen): string {
  const rows = ref.rowList.map((r) => `${r.wrapped ? '+' : '|'}${r.cells.join('')}|`);
  return `${rows.join('\n')}\ncursor ${ref.y},${ref.x}`;
}

describe('ScreenGrid scrolling through the row map', () => {
  test('matches a naive array-of-rows screen on random sequences (1×1, 1×N, N×1, regions, sizes to 24×80)', () => {
    const rand = prng(0x5c0011);
    const sizes: Array<[number, number]> = [
      [24, 80],
      [50, 3],
      [3, 50],
      [1, 1],
      [1, 7],
      [1, 80],
      [7, 1],
      [40, 1],
    ];
    for (let rows = 2; rows <= 8; rows++) for (let cols = 2; cols <= 10; cols += 2) sizes.push([rows, cols]);
    let compared = 0;
    for (const [rows, cols] of sizes) {
      for (let sequence = 0; sequence < 25; sequence++) {
        const grid = new ScreenGrid(rows, cols);
        const ref = new ReferenceScreen(rows, cols);
        let sent = '';
        const length = 20 + Math.floor(rand() * 150);
        for (let i = 0; i < length; i++) {
          const op = randomOp(rand, rows, cols);
          // Any split of the bytes: the grid's parser keeps its state across writes.
          const bytes = Buffer.from(op.bytes);
          const cut = Math.floor(rand() * (bytes.length + 1));
          grid.write(bytes.subarray(0, cut));
          grid.write(bytes.subarray(cut));
          op.apply(ref);
          sent += op.bytes;
          if (i % 8 === 7 || i === length - 1) {
            assert.equal(gridView(grid), referenceView(ref), `${rows}×${cols} after ${JSON.stringify(sent)}`);
            compared++;
          }
        }
      }
    }
    assert.ok(compared > 5000, `compared ${compared} screens`);
  });

  test('200,000 short lines on a 200×500 grid leave the last 199 lines printed, in order, then the cursor row', () => {
    const rows = 200;
    const cols = 500;
    const lines = 200_000;
    const g = new ScreenGrid(rows, cols);
    const chunk: string[] = [];
    for (let i = 0; i < lines; i++) {
      chunk.push(`line ${i}\r\n`);
      if (chunk.length === 1000) {
        g.write(Buffer.from(chunk.join('')));
        chunk.length = 0;
      }
    }
    g.write(Buffer.from(chunk.join('')));
    const shown = Array.from({ length: rows }, (_, y) => g.rowText(y).trimEnd());
    const expected = Array.from({ length: rows - 1 }, (_, y) => `line ${lines - (rows - 1) + y}`);
    assert.deepEqual(shown, [...expected, '']);
    assert.equal(g.rowText(0).length, cols);
    assert.deepEqual([g.cursorRow, g.cursorCol], [rows - 1, 0]);
    assert.ok(Array.from({ length: rows }, (_, y) => g.isWrapped(y)).every((w) => !w));
  });

  test('long lines through a scroll region on a 200×500 grid: the rows outside it stay, the wrapped rows scroll as one', () => {
    const rows = 200;
    const cols = 500;
    const g = new ScreenGrid(rows, cols);
    g.write(Buffer.from(`\x1b[1;1Hheader\x1b[200;1Hfooter\x1b[2;199r\x1b[199;1H`));
    // Each line fills a row and a half: two rows, the second wrapped.
    const line = (i: number): string => `${i}:`.padEnd(cols + cols / 2, String.fromCharCode(0x61 + (i % 26)));
    const count = 20_000;
    for (let i = 0; i < count; i++) g.write(Buffer.from(`${line(i)}\r\n`));
    const shown = Array.from({ length: rows }, (_, y) => g.rowText(y).trimEnd());
    assert.equal(shown[0], 'header');
    assert.equal(shown[rows - 1], 'footer');
    // The region (198 rows) holds the last 98 lines whole (the oldest of the 99 lost its first row), then the cursor row.
    const expected: string[] = [line(count - 99).slice(cols)];
    for (let i = count - 98; i < count; i++) expected.push(line(i).slice(0, cols), line(i).slice(cols));
    expected.push('');
    assert.deepEqual(shown.slice(1, rows - 1), expected);
    const wrapped = Array.from({ length: rows - 2 }, (_, y) => g.isWrapped(y + 1));
    assert.deepEqual(wrapped, [false, ...Array.from({ length: 98 }, () => [false, true]).flat(), false]);
    assert.deepEqual([g.cursorRow, g.cursorCol], [rows - 2, 0]);
  });
});
