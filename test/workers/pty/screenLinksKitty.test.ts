/** ScreenGrid's OSC 8 hyperlinks and kitty keyboard flag stack, and the screen questions answered from them. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ScreenGrid } from '../../../workers/pty/screenGrid.js';
import { answerScreenQuery } from '../../../workers/pty/screenQueries.js';

const ESC = '\x1b';
const link = (url: string, text: string, st = `${ESC}\\`) => `${ESC}]8;;${url}${st}${text}${ESC}]8;;${st}`;

function grid(rows: number, cols: number, ...chunks: string[]): ScreenGrid {
  const g = new ScreenGrid(rows, cols);
  for (const c of chunks) g.write(Buffer.from(c));
  return g;
}

describe('ScreenGrid hyperlinks', () => {
  test('a link is recorded on the cells printed under it, with either terminator, split anywhere', () => {
    const whole = `a ${link('https://x.test/1', 'one')} b ${link('https://x.test/2', 'two', '\x07')} c`;
    const g = new ScreenGrid(3, 30);
    for (const byte of Buffer.from(whole)) g.write(Uint8Array.of(byte));
    assert.equal(g.rowText(0).trimEnd(), 'a one b two c');
    assert.deepEqual(answerScreenQuery(g, { kind: 'hyperlink', row: 0, col: 3 }), { link: { start_col: 2, end_col: 4, url: 'https://x.test/1' } });
    assert.deepEqual(answerScreenQuery(g, { kind: 'hyperlink', row: 0, col: 8 }), { link: { start_col: 8, end_col: 10, url: 'https://x.test/2' } });
    for (const col of [0, 1, 5, 7, 12, 29]) assert.deepEqual(answerScreenQuery(g, { kind: 'hyperlink', row: 0, col }), { link: null });
  });

  test('links move with scrolling and survive a resize; erased cells carry none', () => {
    const g = grid(3, 20, link('https://x.test/s', 'scrolled'), '\r\n2\r\n3\r\n4');
    assert.equal(g.rowText(0).trimEnd(), '2', 'the link row scrolled off');
    assert.equal(g.linkAt(0, 0), null, 'its link went with it');
    const h = grid(3, 20, '\r\n', link('https://x.test/s', 'kept'), '\r\nnext\r\nlast');
    assert.equal(h.rowText(0).trimEnd(), 'kept');
    assert.equal(h.linkAt(0, 0), 'https://x.test/s');
    h.resize(4, 30);
    assert.equal(h.linkAt(0, 3), 'https://x.test/s');
    h.write(Buffer.from(`${ESC}[1;1H${ESC}[2K`));
    assert.equal(h.linkAt(0, 0), null, 'erased');
  });

  test('links move with their characters on insert and delete character (ICH, DCH) and in insert mode', () => {
    const url = 'https://x.test/m';
    // "ab" then the link "LINK" at columns 2-5; ICH 3 at column 0 shifts everything right by 3.
    const g = grid(2, 20, `ab${link(url, 'LINK')} z`, `${ESC}[1;1H${ESC}[3@`);
    assert.equal(g.rowText(0).trimEnd(), '   abLINK z');
    for (let col = 5; col <= 8; col++) assert.equal(g.linkAt(0, col), url, `column ${col} after ICH`);
    for (const col of [0, 3, 4, 9, 10]) assert.equal(g.linkAt(0, col), null, `column ${col} after ICH`);
    // DCH 4 at column 0 pulls it back left by 4: the link is at columns 1-4, 'z' at 6 plain.
    g.write(Buffer.from(`${ESC}[1;1H${ESC}[4P`));
    assert.equal(g.rowText(0).trimEnd(), 'bLINK z');
    for (let col = 1; col <= 4; col++) assert.equal(g.linkAt(0, col), url, `column ${col} after DCH`);
    for (const col of [0, 5, 6]) assert.equal(g.linkAt(0, col), null, `column ${col} after DCH`);
    // Insert mode (IRM): a plain character printed at column 0 pushes the link right by one.
    g.write(Buffer.from(`${ESC}[4h${ESC}[1;1Hx${ESC}[4l`));
    assert.equal(g.rowText(0).trimEnd(), 'xbLINK z');
    for (let col = 2; col <= 5; col++) assert.equal(g.linkAt(0, col), url, `column ${col} after an insert-mode print`);
    for (const col of [0, 1, 6, 7]) assert.equal(g.linkAt(0, col), null, `column ${col} after an insert-mode print`);
  });

  test('OSC other than 8, and an OSC 8 with parameters, are handled; a reset forgets links', () => {
    const g = grid(2, 40, `${ESC}]0;title${ESC}\\`, `${ESC}]8;id=a;https://x.test/p${ESC}\\pp${ESC}]8;;${ESC}\\ after`);
    assert.equal(g.rowText(0).trimEnd(), 'pp after');
    assert.equal(g.linkAt(0, 1), 'https://x.test/p');
    assert.equal(g.linkAt(0, 3), null);
    g.write(Buffer.from(`${ESC}c`));
    assert.equal(g.linkAt(0, 0), null);
  });
});

describe('ScreenGrid kitty keyboard flags', () => {
  const flags = (g: ScreenGrid) => answerScreenQuery(g, { kind: 'kitty_flags' }).kitty_flags;

  test('push, set (replace, or, and-not), pop; each screen has its own stack', () => {
    const g = grid(3, 10);
    assert.equal(flags(g), 0);
    g.write(Buffer.from(`${ESC}[>1u${ESC}[>3u`));
    assert.equal(flags(g), 3);
    g.write(Buffer.from(`${ESC}[=8;2u`));
    assert.equal(flags(g), 11);
    g.write(Buffer.from(`${ESC}[=2;3u`));
    assert.equal(flags(g), 9);
    g.write(Buffer.from(`${ESC}[=4u`));
    assert.equal(flags(g), 4);
    g.write(Buffer.from(`${ESC}[?1049h`));
    assert.equal(flags(g), 0, 'the alternate screen starts with none');
    g.write(Buffer.from(`${ESC}[>31u`));
    assert.equal(flags(g), 31);
    g.write(Buffer.from(`${ESC}[?1049l`));
    assert.equal(flags(g), 4);
    g.write(Buffer.from(`${ESC}[<u`));
    assert.equal(flags(g), 1);
    g.write(Buffer.from(`${ESC}[<5u`));
    assert.equal(flags(g), 0, 'popping past the bottom empties the stack');
    assert.equal(g.rowText(0).trim(), '', 'none of it printed');
  });

  test('the stack is bounded (oldest dropped) and survives a resize; a reset clears it', () => {
    const g = grid(3, 10, ...Array.from({ length: 20 }, (_, i) => `${ESC}[>${i + 1}u`));
    g.resize(5, 20);
    assert.equal(flags(g), 20);
    g.write(Buffer.from(`${ESC}[<15u`));
    assert.equal(flags(g), 5);
    g.write(Buffer.from(`${ESC}[<u`));
    assert.equal(flags(g), 0, 'only 16 were kept');
    g.write(Buffer.from(`${ESC}[>7u${ESC}c`));
    assert.equal(flags(g), 0);
  });

  test('SCORC (CSI u without a marker) still restores the cursor', () => {
    const g = grid(3, 10, 'ab', `${ESC}[s`, 'cd', `${ESC}[u`, 'X');
    assert.equal(g.rowText(0).trimEnd(), 'abXd');
  });
});
