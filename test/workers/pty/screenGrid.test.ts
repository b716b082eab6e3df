/** ScreenGrid: the hand-written screen emulator, on exact sequences and against @xterm/headless on realistic TUI output. */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import xtermHeadless from '@xterm/headless';

import { tuiOutput } from '../../../bench/workers/fixtures/tuiOutput.js';
import { ScreenGrid } from '../../../workers/pty/screenGrid.js';

const { Terminal } = xtermHeadless;

function grid(rows: number, cols: number, ...chunks: Array<string | Uint8Array>): ScreenGrid {
  const g = new ScreenGrid(rows, cols);
  for (const c of chunks) g.write(typeof c === 'string' ? Buffer.from(c) : c);
  return g;
}

function text(g: ScreenGrid): string[] {
  return Array.from({ length: g.rows }, (_, y) => g.rowText(y).trimEnd());
}

describe('ScreenGrid', () => {
  test('cursor addressing after a clear puts text where CUP says', () => {
    const g = grid(4, 12, 'junk\r\nmore junk', '\x1b[2J\x1b[H', '\x1b[2;3Hhi\x1b[4;8Hend\x1b[1;1Htop');
    assert.deepEqual(text(g), ['top', '  hi', '', '       end']);
    assert.deepEqual([g.cursorRow, g.cursorCol], [0, 3]);
  });

  test('deferred wrap: the last column holds the cursor until the next character, through SGR but not a cursor move', () => {
    assert.deepEqual(text(grid(3, 5, 'abcde\x1b[0mX')), ['abcde', 'X', '']);
    assert.deepEqual(text(grid(3, 5, 'abcde\rX')), ['Xbcde', '', '']);
    const g = grid(3, 5, 'abcde');
    assert.deepEqual([g.cursorRow, g.cursorCol, g.isWrapped(1)], [0, 4, false]);
    g.write(Buffer.from('f'));
    assert.equal(g.isWrapped(1), true, 'the row the text ran into continues the one above');
  });

  test('UTF-8 split across writes, wide and combining characters', () => {
    const bytes = Buffer.from('a漢e\u0301😀z');
    const g = new ScreenGrid(2, 10);
    for (const b of bytes) g.write(Uint8Array.of(b));
    assert.deepEqual(text(g), ['a漢e\u0301😀z', ''], 'the mark stays with its letter, as printed (not normalized)');
    assert.equal(g.cursorCol, 7, 'wide characters (漢, 😀) take two columns, the combining mark none');
    // A wide character that does not fit in the last column wraps whole.
    assert.deepEqual(text(grid(2, 4, 'abc漢')), ['abc', '漢']);
  });

  test('scroll regions, reverse index, insert and delete lines', () => {
    assert.deepEqual(text(grid(5, 10, '1\r\n2\r\n3\r\n4\r\n5', '\x1b[2;4r\x1b[4;1H\nnew\x1b[r')), ['1', '3', '4', 'new', '5']);
    assert.deepEqual(text(grid(4, 10, 'a\r\nb\r\nc\r\nd', '\x1b[2;3r\x1b[2;1H\x1bMtop\x1b[r')), ['a', 'top', 'b', 'd']);
    assert.deepEqual(text(grid(4, 10, 'a\r\nb\r\nc\r\nd', '\x1b[2;1H\x1b[L')), ['a', '', 'b', 'c']);
    assert.deepEqual(text(grid(4, 10, 'a\r\nb\r\nc\r\nd', '\x1b[2;1H\x1b[2M')), ['a', 'd', '', '']);
  });

  test('erase and edit in line: EL, ECH, ICH, DCH, REP, CR overwrite', () => {
    assert.deepEqual(text(grid(1, 20, 'progress 10%\rprogress 100% done')), ['progress 100% done']);
    assert.deepEqual(text(grid(1, 20, 'loading.....\rok\x1b[K')), ['ok']);
    assert.deepEqual(text(grid(1, 20, 'abcdef\x1b[1;3H\x1b[2@XY')), ['abXYcdef']);
    assert.deepEqual(text(grid(1, 20, 'abcdef\x1b[1;2H\x1b[2P')), ['adef']);
    assert.deepEqual(text(grid(1, 20, 'abcdef\x1b[1;2H\x1b[3X')), ['a   ef']);
    assert.deepEqual(text(grid(1, 20, '-\x1b[9b|')), ['----------|']);
  });

  test('the alternate screen: entered clean, left with the primary screen and cursor restored', () => {
    const g = grid(3, 10, 'main', '\x1b[?1049h');
    assert.equal(g.altScreen, true);
    assert.deepEqual(text(g), ['', '', '']);
    g.write(Buffer.from('\x1b[2;1HALT'));
    assert.deepEqual(text(g), ['', 'ALT', '']);
    g.write(Buffer.from('\x1b[?1049l'));
    assert.equal(g.altScreen, false);
    assert.deepEqual(text(g), ['main', '', '']);
    assert.deepEqual([g.cursorRow, g.cursorCol], [0, 4]);
  });

  test('DEC line drawing, tabs, OSC/DCS strings are not text', () => {
    assert.deepEqual(text(grid(1, 12, '\x1b(0lqqk\x1b(B x')), ['┌──┐ x']);
    assert.deepEqual(text(grid(1, 20, 'a\tb')), ['a       b']);
    assert.deepEqual(text(grid(1, 20, '\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1bP+q\x1b\\!')), ['link!']);
  });

  test('resize keeps the top-left and the cursor row on screen', () => {
    const g = grid(4, 10, 'r1\r\nr2\r\nr3\r\nr4 longer');
    g.resize(2, 5);
    assert.deepEqual(text(g), ['r3', 'r4 lo']);
    assert.deepEqual([g.rows, g.cols, g.cursorRow], [2, 5, 1]);
    g.resize(3, 20);
    g.write(Buffer.from('\r\n' + 'w'.repeat(15)));
    assert.deepEqual(text(g), ['r3', 'r4 lo', 'w'.repeat(15)], 'cut columns do not come back; the new width holds a longer row');
  });

  test('renders realistic TUI output exactly as @xterm/headless does (rows, cursor, alternate screen)', async () => {
    const cols = 100;
    const rows = 30;
    const input = tuiOutput(768 * 1024, cols, rows, 11);
    const term = new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
    const g = new ScreenGrid(rows, cols);
    let compared = 0;
    try {
      for (let i = 0; i < input.length; i += 4095) {
        const chunk = input.subarray(i, i + 4095);
        g.write(chunk);
        term.write(chunk);
        if ((i / 4095) % 20 !== 19) continue;
        await new Promise<void>((resolve) => term.write('', resolve));
        const b = term.buffer.active;
        const expected = Array.from({ length: rows }, (_, y) => (b.getLine(y)?.translateToString(true) ?? '').trimEnd());
        assert.deepEqual(text(g), expected, `screen after ${i + chunk.length} bytes`);
        assert.deepEqual([g.cursorRow, g.cursorCol, g.altScreen], [b.cursorY, Math.min(b.cursorX, cols - 1), b.type === 'alternate']);
        compared++;
      }
    } finally {
      term.dispose();
    }
    assert.ok(compared >= 8, `compared ${compared} times`);
  });
});
