/** The incremental ANSI/VT stripper: every escape family, every split point, UTF-8 across reads, the line model. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AnsiStripper, StripConstants } from '../../../workers/pty/ansiStrip.js';

interface Stripped {
  lines: string[];
  partial: string;
}

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

function strip(chunks: Array<string | Uint8Array>, opts: { keepAltScreen?: boolean; maxLineBytes?: number } = {}): Stripped {
  const lines: string[] = [];
  const s = new AnsiStripper({ onLine: (l) => lines.push(l), ...opts });
  for (const c of chunks) s.push(typeof c === 'string' ? bytes(c) : c);
  return { lines, partial: s.partial() };
}

/** Output when `input` arrives as two reads split at byte k, for every k. */
function everySplit(input: string): Stripped[] {
  const b = bytes(input);
  const out: Stripped[] = [];
  for (let k = 0; k <= b.length; k++) out.push(strip([b.subarray(0, k), b.subarray(k)]));
  return out;
}

/** Each family on its own, as [input, lines, partial]. */
const FAMILIES: Array<[string, string, string[], string]> = [
  ['SGR', '\x1b[1;38;2;255;100;0mred\x1b[0m plain\x1b[m\n', ['red plain'], ''],
  ['CSI private params and intermediates', '\x1b[?25l\x1b[?2004h\x1b[>4;1m\x1b[2 q\x1b[!p\x1b[=5u\x1b[<u\x1b[?1;2c text\n', [' text'], ''],
  ['cursor moves that print nothing', 'a\x1b[2A\x1b[10;20H\x1b[5Bb\x1b[s\x1b[u\x1b[r\n', ['ab'], ''],
  ['OSC ended by BEL', '\x1b]0;my title\x07after\n', ['after'], ''],
  ['OSC ended by ST', 'see \x1b]8;;https://example.com/x\x1b\\the docs\x1b]8;;\x1b\\ now\n', ['see the docs now'], ''],
  ['OSC 133 and OSC 7 marks', '\x1b]133;A\x07$ \x1b]133;B\x07ls\x1b]7;file://host/tmp\x1b\\\n', ['$ ls'], ''],
  ['DCS until ST (BEL does not end it)', 'x\x1bPq#0;2;0;0;0\x07still dcs\x1b\\y\n', ['xy'], ''],
  ['SOS, PM and APC until ST', 'a\x1bXsos\x1b\\b\x1b^pm\x1b\\c\x1b_Gf=100;AAAA\x1b\\d\n', ['abcd'], ''],
  ['charset designations', '\x1b(B\x1b)0\x1b*A\x1b+B\x1b#8\x1b%Gtext\x1b(0\n', ['text'], ''],
  ['other 2-byte escapes', '\x1b7\x1b8\x1b=\x1b>\x1bM\x1bcok\n', ['ok'], ''],
  ['C0 controls except \\n and \\t', 'a\x00b\x07c\x0ed\x0fe\tf\x7fg\x0bh\x0ci\n', ['abcde\tfghi'], ''],
  ['CUF becomes spaces', 'hello\x1b[3Cworld\x1b[Cx\x1b[0Cy\n', ['hello   world x y'], ''],
  ['CR overwrites from column 0', 'abcdef\rXY\n', ['XYcdef'], ''],
  ['CR LF is one newline', 'abc\r\ndef\r\n\r\n', ['abc', 'def', ''], ''],
  ['progress bar', '[#    ] 20%\r[##   ] 40%\r[#####] 100%\r\n', ['[#####] 100%'], ''],
  ['spinner erased with EL 2', '\r\x1b[2K⠋ Thinking\r\x1b[2K⠙ Thinking\r\x1b[2K✔ Done\r\n', ['✔ Done'], ''],
  ['backspace moves left, then overwrites', 'abc\bX\nab\b\b\b\bZ\nxy\b \b\n', ['abX', 'Zb', 'x'], ''],
  ['EL 0 and EL 1', 'abcdef\r\x1b[Kxy\nabcdef\x1b[3D\x1b[1K\n', ['xy', '    ef'], ''],
  ['CHA and CUB', 'abcdef\x1b[3GX\x1b[2DY\n', ['aYXdef'], ''],
  ['NEL', 'a\x1bEb\n', ['a', 'b'], ''],
  ['CAN and SUB cancel a sequence', '\x1b[12\x18text\x1b]0;t\x1aok\n', ['textok'], ''],
  ['ESC inside CSI starts a new sequence', '\x1b[1\x1b[31mred\n', ['red'], ''],
  ['partial line', 'done\n$ \x1b[1mprompt\x1b[0m ', ['done'], '$ prompt'],
];

for (const [name, input, lines, partial] of FAMILIES) {
  test(`strips ${name}`, () => {
    assert.deepEqual(strip([input]), { lines, partial });
  });

  test(`${name}: same output at every split point`, () => {
    for (const [k, got] of everySplit(input).entries()) assert.deepEqual(got, { lines, partial }, `split at byte ${k}`);
  });
}

test('everything at once, one byte per read', () => {
  const input = FAMILIES.map((f) => f[1]).join('');
  const whole = strip([input]);
  const b = bytes(input);
  const oneByOne = strip(Array.from(b, (x) => new Uint8Array([x])));
  assert.deepEqual(oneByOne, whole);
  assert.deepEqual(whole, { lines: FAMILIES.flatMap((f) => f[2]), partial: '$ prompt' });
});

test('UTF-8 characters split across reads are decoded whole', () => {
  const input = '日本語 café 🎉 ✔ ╭─╮\n';
  for (const [k, got] of everySplit(input).entries()) assert.deepEqual(got.lines, ['日本語 café 🎉 ✔ ╭─╮'], `split at byte ${k}`);
});

test('partial() leaves out an incomplete trailing character', () => {
  const b = bytes('ok 🎉');
  for (let k = 3; k < b.length; k++) assert.equal(strip([b.subarray(0, k)]).partial, 'ok', `${k} bytes`);
  assert.equal(strip([b]).partial, 'ok 🎉');
});

test('overwriting with characters of other byte lengths keeps UTF-8 valid', () => {
  assert.deepEqual(strip(['héllo\rab\n']).lines, ['abllo']);
  assert.deepEqual(strip(['abc\r日\n']).lines, ['日bc']);
  assert.deepEqual(strip(['日本語\rab\n']).lines, ['ab語']);
  assert.deepEqual(strip(['🎉🎉\b\bxy\n']).lines, ['xy']);
  for (const [k, got] of everySplit('日本語\r🎉b\n').entries()) assert.deepEqual(got.lines, ['🎉b語'], `split at ${k}`);
});

test('alternate screen output is left out unless asked for', () => {
  const input = 'before\n\x1b[?1049hvim screen\r\nmore\r\n\x1b[?1049lafter\n\x1b[?47hx\n\x1b[?47l';
  assert.deepEqual(strip([input]).lines, ['before', 'after']);
  assert.deepEqual(strip([input], { keepAltScreen: true }).lines, ['before', 'vim screen', 'more', 'after', 'x']);
});

test('a primary-screen line survives a trip to the alternate screen', () => {
  assert.deepEqual(strip(['$ vi\x1b[?1049h~\r\n~\x1b[?1049l x\n']).lines, ['$ vi x']);
});

test('an over-long line is cut, at a space when one is near', () => {
  const words = Array.from({ length: 40 }, (_, i) => `w${String(i).padStart(3, '0')}`);
  const { lines } = strip([`${words.join(' ')}\n`], { maxLineBytes: 64 });
  assert.ok(lines.length > 1);
  for (const l of lines) assert.ok(Buffer.byteLength(l) <= 64, l);
  assert.equal(lines.join(' '), words.join(' '));
});

test('an over-long line without spaces is cut at a character boundary', () => {
  const { lines } = strip(['é'.repeat(100), '\n'], { maxLineBytes: 33 });
  assert.equal(lines.join(''), 'é'.repeat(100));
  for (const l of lines) assert.ok(!l.includes('\ufffd'));
});

test('one read much longer than a line is cut into lines without losing a byte', () => {
  const text = Array.from({ length: 30_000 }, (_, i) => `w${i}`).join(' ');
  const { lines, partial } = strip([`${text}\n`]);
  assert.equal(partial, '');
  assert.ok(lines.length > 1);
  for (const l of lines) assert.ok(Buffer.byteLength(l) <= StripConstants.MAX_LINE_BYTES);
  assert.equal(lines.join(' '), text);
});

test('overwriting past the line limit still cuts and keeps the new text', () => {
  const { lines } = strip([`${'x'.repeat(60)}\r${'y'.repeat(100)}\n`], { maxLineBytes: 64 });
  assert.equal(lines.join(''), 'y'.repeat(100));
  for (const l of lines) assert.ok(l.length <= 64);
});

test('huge cursor moves are clamped', () => {
  const { lines } = strip(['a\x1b[99999999Cb\n']);
  assert.equal(lines[0], `a${' '.repeat(StripConstants.MAX_COLUMNS)}b`);
});

test('an unterminated OSC is abandoned after MAX_STRING_BYTES', () => {
  const junk = new Uint8Array(64 * 1024).fill(0x78);
  const chunks = (n: number): Uint8Array[] => [bytes('\x1b]0;'), ...Array.from({ length: n }, () => junk), bytes('visible\n')];
  const whole = StripConstants.MAX_STRING_BYTES / junk.length;
  assert.deepEqual(strip(chunks(whole - 1)).lines, [], 'still inside the OSC: nothing printed');
  assert.deepEqual(strip(chunks(whole)).lines, ['visible'], 'past the bound: printing again');
});

test('flush() inside the alternate screen completes the primary line', () => {
  const lines: string[] = [];
  const s = new AnsiStripper({ onLine: (l) => lines.push(l) });
  s.push(bytes('$ vim\x1b[?1049h~ screen'));
  s.flush();
  assert.deepEqual(lines, ['$ vim']);
});

test('flush() completes the unfinished line', () => {
  const lines: string[] = [];
  const s = new AnsiStripper({ onLine: (l) => lines.push(l) });
  s.push(bytes('last words\x1b[0m'));
  assert.deepEqual(lines, []);
  s.flush();
  assert.deepEqual(lines, ['last words']);
  assert.equal(s.partial(), '');
});
