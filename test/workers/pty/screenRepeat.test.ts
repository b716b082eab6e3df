/**
 * ScreenGrid REP (CSI n b): the grid after `c ESC[n b` is the grid after c printed n+1 times, while the
 * work no longer grows with n (REP 65535 scrolled the whole region once per row: a pty host DoS).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ScreenGrid } from '../../../workers/pty/screenGrid.js';
import { prng } from '../../helpers/prng.js';

function feed(rows: number, cols: number, input: string): ScreenGrid {
  const g = new ScreenGrid(rows, cols);
  g.write(Buffer.from(input));
  return g;
}

/** Everything ScreenGrid shows: each row (wide characters once, so a stray half changes the length), wrap flags, cursor. */
function snapshot(g: ScreenGrid): string {
  const rows = Array.from({ length: g.rows }, (_, y) => `${g.isWrapped(y) ? '+' : '|'}${g.rowText(y)}|`);
  return `${rows.join('\n')}\ncursor ${g.cursorRow},${g.cursorCol}`;
}

interface Case {
  rows: number;
  cols: number;
  autowrap: boolean;
  insert: boolean;
  margins: boolean;
  char: string;
}

/** Random content and cursor, then the modes of `c`; the cursor may end past the region, at the margin or wrap-pending. */
function setup(k: Case, rand: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const cup = (): string => `\x1b[${1 + Math.floor(rand() * k.rows)};${1 + Math.floor(rand() * k.cols)}H`;
  let s = '';
  const ops = 8 + Math.floor(rand() * 20);
  for (let i = 0; i < ops; i++) {
    const r = rand();
    if (r < 0.45) s += pick(['a', 'b', 'Q', '界', '好', 'é', 'x']);
    else if (r < 0.55) s += '\r';
    else if (r < 0.65) s += '\n';
    else if (r < 0.8) s += cup();
    else if (r < 0.87)
      s += '\x1b[P'; // DCH can leave the right half of a wide character in column 0
    else if (r < 0.94) s += '\x1b[@';
    else s += `\x1b[${1 + Math.floor(rand() * k.cols)}b`;
  }
  let top = 0;
  let bottom = k.rows - 1;
  if (k.margins && k.rows >= 2) {
    top = Math.floor(rand() * (k.rows - 1));
    bottom = top + 1 + Math.floor(rand() * (k.rows - 1 - top));
    s += `\x1b[${top + 1};${bottom + 1}r`;
  }
  // The cursor row by zone, each as likely: line feeds move down to the bottom of the region and scroll
  // there, or below the region move down to the last row and stay.
  const zones = [
    [0, top - 1],
    [top, bottom - 1],
    [bottom, bottom],
    [bottom + 1, k.rows - 1],
  ].filter(([lo, hi]) => lo! <= hi!);
  const [lo, hi] = pick(zones);
  s += `\x1b[${lo! + 1 + Math.floor(rand() * (hi! - lo! + 1))};${1 + Math.floor(rand() * k.cols)}H`;
  if (k.margins && rand() < 0.3) s += '\x1b7\x1b[?6h\x1b8'; // origin mode, the cursor kept where it was
  if (!k.autowrap) s += '\x1b[?7l';
  if (k.insert) s += '\x1b[4h';
  const tail = Math.floor(rand() * (k.cols + 2));
  for (let i = 0; i < tail; i++) s += pick(['y', '界', k.char]);
  return s;
}

/** `between` goes after c: REP repeats the last character printed, wherever the cursor went since. */
function checkRepeat(k: Case, prefix: string, between: string, n: number): void {
  const viaRep = feed(k.rows, k.cols, `${prefix}${k.char}${between}\x1b[${n}b`);
  const literal = feed(k.rows, k.cols, prefix + k.char + between + k.char.repeat(n));
  const where = `${JSON.stringify(k)} prefix=${JSON.stringify(prefix)} between=${JSON.stringify(between)} n=${n}`;
  assert.equal(snapshot(viaRep), snapshot(literal), where);
  // A pending wrap is not shown: the next characters reveal it (and whether a wide one fits).
  for (const probe of ['Z', '界', 'W']) {
    viaRep.write(Buffer.from(probe));
    literal.write(Buffer.from(probe));
    assert.equal(snapshot(viaRep), snapshot(literal), `${where} then ${probe}`);
  }
}

describe('ScreenGrid REP', () => {
  test('REP n leaves the grid, wrap flags, cursor and pending wrap of n printed characters (rows 1..6, cols 1..9, every mode)', () => {
    const rand = prng(0x5eed);
    let cases = 0;
    for (let rows = 1; rows <= 6; rows++) {
      for (let cols = 1; cols <= 9; cols++) {
        for (const autowrap of [true, false]) {
          for (const insert of [false, true]) {
            for (const margins of [false, true]) {
              for (const char of ['x', '界']) {
                const k: Case = { rows, cols, autowrap, insert, margins, char };
                const perRow = Math.floor(cols / (char === 'x' ? 1 : 2));
                // A wide character in one column keeps the old loop, capped at rows × cols prints.
                const limit = perRow === 0 && autowrap ? rows * cols : Infinity;
                // Past (rows + 2) rows of prints, any start has settled into a cycle of one row.
                const settle = (rows + 2) * Math.max(1, perRow);
                for (let variant = 0; variant < 3; variant++) {
                  const prefix = setup(k, rand);
                  const between = ['', '', '\r', `\x1b[${1 + Math.floor(rand() * cols)}G`, '\x1b[A', '\n'][Math.floor(rand() * 6)]!;
                  const ns = Array.from({ length: 3 * settle }, (_, i) => i + 1);
                  for (let i = 0; i < 8; i++) ns.push(3 * settle + 1 + Math.floor(rand() * 2 * settle));
                  ns.push(1000 + Math.floor(rand() * 100));
                  if (rand() < 0.05) ns.push(65535); // n printed literally is the slow part of this test
                  for (const n of ns.filter((v) => v <= limit)) checkRepeat(k, prefix, between, n);
                  cases++;
                }
              }
            }
          }
        }
      }
    }
    assert.equal(cases, 6 * 9 * 16 * 3);
  });

  test('REP costs no more prints than a few rows, whatever n', () => {
    const proto = ScreenGrid.prototype as unknown as { print: (cp: number, w: number) => void };
    const print = proto.print;
    let prints = 0;
    proto.print = function (this: ScreenGrid, cp: number, w: number) {
      prints++;
      print.call(this, cp, w);
    };
    try {
      for (const [rows, cols, input] of [
        [500, 200, 'x\x1b[65535b'],
        [200, 500, '界\x1b[65535b'],
        [500, 200, '\x1b[4hx\x1b[65535b'],
        [500, 200, '\x1b[H\x1b[3Cx\x1b[65535b'],
        [500, 200, '\x1b[10;400r\x1b[450;7Hx\x1b[999999b'],
      ] as const) {
        const g = new ScreenGrid(rows, cols);
        prints = 0;
        g.write(Buffer.from(input.repeat(20)));
        // Up to a row end, one row through print(), the remainder: under four rows each.
        assert.ok(prints <= 20 * 4 * cols, `${input} on ${rows}×${cols}: ${prints} prints for 20 sequences`);
      }
    } finally {
      proto.print = print;
    }
  });
});
