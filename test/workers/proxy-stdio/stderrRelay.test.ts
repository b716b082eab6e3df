/** stderr relay: lines cut to 4 KiB without buffering the rest, and a flood rate-limited with the surplus counted. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { STDERR_LINE_MAX_BYTES, StderrRelay } from '../../../workers/proxy-stdio/stderrRelay.js';

function relay(options: { linesPerWindow?: number; windowMs?: number } = {}) {
  const lines: string[] = [];
  const suppressed: number[] = [];
  const r = new StderrRelay({ emitLine: (l) => lines.push(l), reportSuppressed: (n) => suppressed.push(n), ...options });
  return { r, lines, suppressed };
}

test('lines are split across reads and a long one is cut to 4 KiB', () => {
  const { r, lines } = relay();
  r.write(Buffer.from('first\r\nsec'));
  r.write(Buffer.from('ond\n\n'));
  for (let n = 0; n < 100; n++) r.write(Buffer.alloc(10_000, 'x'));
  r.write(Buffer.from('\nlast'));
  r.end();
  assert.deepEqual(
    lines.map((l) => (l.length > 20 ? `x*${l.length}` : l)),
    ['first', 'second', `x*${STDERR_LINE_MAX_BYTES}`, 'last'],
  );
});

test('a flood is rate-limited per window; the surplus is counted and reported once', () => {
  const { r, lines, suppressed } = relay({ linesPerWindow: 10, windowMs: 60_000 });
  r.write(Buffer.from('line\n'.repeat(1000)));
  assert.equal(lines.length, 10);
  assert.deepEqual(suppressed, []);
  r.end();
  assert.deepEqual(suppressed, [990]);
});

test('the surplus is reported when the window ends even if the flood stopped, and a new window relays again', async () => {
  const { r, lines, suppressed } = relay({ linesPerWindow: 10, windowMs: 50 });
  r.write(Buffer.from('line\n'.repeat(1000)));
  const accounted = (): number => lines.length + suppressed.reduce((a, b) => a + b, 0);
  const started = Date.now();
  // However the windows fell (a slow machine may span several, each reported when it ends), every line is counted.
  while (accounted() < 1000 && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(suppressed.length > 0, 'no suppression report');
  assert.equal(accounted(), 1000);
  await new Promise((resolve) => setTimeout(resolve, 60));
  r.write(Buffer.from('again\n'));
  assert.equal(lines.at(-1), 'again');
  r.end();
});
