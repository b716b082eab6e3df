/** Review of the text path: split invariance on a mixed sample, EL cost on long lines, secrets at a long-line cut. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AnsiStripper, StripConstants } from '../../../workers/pty/ansiStrip.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

function strip(chunks: Uint8Array[], opts: { maxLineBytes?: number } = {}): { lines: string[]; partial: string } {
  const lines: string[] = [];
  const s = new AnsiStripper({ onLine: (l) => lines.push(l), ...opts });
  for (const c of chunks) s.push(c);
  return { lines, partial: s.partial() };
}

/** Escapes ended in unusual ways (ESC inside strings, ESC ESC, CAN), overwrites over wide and multi-byte text. */
const SAMPLE = [
  'a\x1b]0;t\x1b\x1b\\b\n', // an ESC inside an OSC, then ST
  'a\x1bP1$r\x1b[0m\x1b\\b\n', // a DCS whose body looks like a CSI
  'ab\x1b\x1b[31mc\x1b[?25l\x1b[2 q\n',
  'x\x1b]8;;https://e.x/\x1b\\link\x1b]8;;\x07y\n',
  'é日🎉\x1b[2D\x1b[1mZ\x1b[0m\x1b[Cw\n',
  '[##  ] 50%\r\x1b[K[####] 100% ✔\r\n',
  'hello\x1b[3Cworld\x1b(0lqk\x1b(B\x1b#8\x1b7\x1b8!\n',
  'ab\b\bé\x1b[1Kz\x1b[12\x18q\x1b]2;x\x1aw\n',
  '$ prompt ✓ 日本',
].join('');

test('a mixed sample strips the same whole, one byte per read, and at every 2-way split (plain and with short lines)', () => {
  const b = bytes(SAMPLE);
  for (const opts of [{}, { maxLineBytes: 16 }]) {
    const whole = strip([b], opts);
    assert.deepEqual(
      strip(
        Array.from(b, (x) => Uint8Array.of(x)),
        opts,
      ),
      whole,
      `one byte per read ${JSON.stringify(opts)}`,
    );
    for (let k = 0; k <= b.length; k++) assert.deepEqual(strip([b.subarray(0, k), b.subarray(k)], opts), whole, `split at ${k} ${JSON.stringify(opts)}`);
  }
  assert.deepEqual(strip([b]), {
    lines: ['ab', 'ab', 'abc', 'xlinky', 'éZ🎉w', '[####] 100% ✔', 'hello   worldlqk!', ' zqw'],
    partial: '$ prompt ✓ 日本',
  });
});

/** Best of `runs` timings, in ms. */
function bestMs(fn: () => void, runs: number): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

test('erase in line (EL 1, EL 2) far from the line start costs the same per sequence whatever the line length', () => {
  // A line of L characters, then L/4 erases with the cursor at its end: linear means 4L costs ~4×.
  const run = (len: number, el: string) => {
    const input = bytes(`${'x'.repeat(len)}${el.repeat(len / 4)}\n`);
    return () => strip([input]);
  };
  for (const el of ['\x1b[2K', '\x1b[1K']) {
    const small = run(4 * 1024, el);
    const large = run(16 * 1024, el);
    small();
    let ratio = Infinity;
    // A quadratic cost is ~16× every time; noise does not repeat three times in a row.
    for (let attempt = 0; attempt < 3 && ratio >= 8; attempt++) {
      const tSmall = bestMs(small, 5);
      ratio = bestMs(large, 3) / (tSmall + 0.5);
    }
    assert.ok(ratio < 8, `${JSON.stringify(el)}: 4× the input took ${ratio.toFixed(1)}× the time`);
  }
});

test('EL erases the cursor row, not more than MAX_COLUMNS columns of a longer logical line', () => {
  const cols = StripConstants.MAX_COLUMNS;
  assert.deepEqual(strip([bytes(`${'a'.repeat(100)}${'b'.repeat(cols)}\x1b[2Kz\n`)]).lines, [`${'a'.repeat(100)}${' '.repeat(cols)}z`]);
  assert.deepEqual(strip([bytes(`${'a'.repeat(100)}${'b'.repeat(cols)}\x1b[3D\x1b[1K\n`)]).lines, [`${'a'.repeat(98)}${' '.repeat(cols)}bb`]);
  assert.deepEqual(strip([bytes('abc日本\x1b[2Kz\n')]).lines, ['     z'], 'a short line is erased whole, a column per character');
});

test('a long line without spaces is cut at a separator, so a token near the cut stays whole and is redacted', () => {
  const key = `sk-proj-${'a1B2c3'.repeat(8)}`;
  const max = 4096;
  // Minified JSON (no spaces) whose key straddles the line limit, at every offset across it.
  for (let shift = 0; shift < key.length + 4; shift += 3) {
    const pad = 'x'.repeat(max - 6 - shift);
    const json = `{"a":"${pad}","k":"${key}","b":[1,2]}`;
    const p = new TextPipeline({ maxLineBytes: max });
    p.push(bytes(`${json}\n`));
    const { lines } = p.read({ offset: 0 });
    assert.ok(lines.length > 1, `shift ${shift}: the line was cut`);
    const text = lines.join('');
    assert.ok(!text.includes('a1B2c3'), `shift ${shift}: part of the key shows: ${lines.map((l) => l.slice(-40)).join(' | ')}`);
    assert.equal(text, json.replace(key, '[REDACTED:openai]'), `shift ${shift}: no character lost or added`);
  }
});
