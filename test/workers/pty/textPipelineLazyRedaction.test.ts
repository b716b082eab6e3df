/**
 * Lines are redacted when first read, not when logged (TextPipeline.completed). What an agent reads
 * must be exactly what eager redaction gives: compared with a reference (stripper → Redactor.line on
 * every line, in order) over seeded output mixing every secret kind, PEM blocks and escapes.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Redactor } from '../../../shared/redactor.js';
import { AnsiStripper } from '../../../workers/pty/ansiStrip.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { prng } from '../../helpers/prng.js';

const PEM_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7'.padEnd(64, 'x');
const LINES: string[] = [
  'plain build output: compiled 42 files',
  `export OPENAI_API_KEY=sk-proj-${'a1B2c3'.repeat(8)}`,
  `claude said sk-ant-api03-${'Xy9_'.repeat(12)} ok`,
  `stripe rk_live_${'Ab12'.repeat(6)} and ghp_${'Z9y8'.repeat(10)}`,
  `AKIAABCDEFGHIJKLMNOP in a log, AIza${'x'.repeat(35)} too`,
  'DATABASE_URL=postgres://app:hunter2@db:5432/x',
  'Authorization: Bearer abc.def-ghi',
  `jwt eyJhbGciOi.${'e'.repeat(12)}.sig`,
  '-----BEGIN RSA PRIVATE KEY-----',
  PEM_BODY,
  PEM_BODY,
  '-----END RSA PRIVATE KEY-----',
  '-----BEGIN OPENSSH PRIVATE KEY----- cut short',
  'a line that mentions PRIVATE KEY files in prose',
  '\x1b[32m✔\x1b[0m tests passed \x1b]0;title\x07',
  'progress 10%\rprogress 100%',
  'npm_' + 'q'.repeat(36),
  'git 3f2c1e0b9a8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b (not a secret)',
];

function corpus(random: () => number, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += `${LINES[Math.floor(random() * LINES.length)]}\r\n`;
  return out;
}

/** Eager reference: every completed line through Redactor.line at once, dropped PEM lines not logged. */
function eager(input: Uint8Array): string[] {
  const redactor = new Redactor();
  const lines: string[] = [];
  const stripper = new AnsiStripper({
    onLine: (text) => {
      const r = redactor.line(text);
      if (r !== null) lines.push(r);
    },
    keepAltScreen: false,
  });
  stripper.push(input);
  stripper.flush();
  return lines;
}

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  test(`seed ${seed}: lazily redacted lines equal eager redaction, in any read pattern`, () => {
    const random = prng(seed);
    const input = new Uint8Array(Buffer.from(corpus(random, 400), 'utf8'));
    const expected = eager(input);
    const p = new TextPipeline({ capacityLines: 1_000 });
    for (let i = 0; i < input.length; ) {
      const n = 1 + Math.floor(random() * 300);
      p.push(input.subarray(i, i + n));
      i += n;
      // Some reads in between: a line read early must not change what later reads see.
      if (random() < 0.05) p.read({ limit: 1 + Math.floor(random() * 20) });
    }
    p.flush();
    const all = p.read({ offset: 0, limit: 1_000 });
    assert.equal(all.total_lines, expected.length);
    assert.deepEqual(all.lines, expected);
    // Read again (now from the redacted copies) and in pieces: the same lines.
    const again: string[] = [];
    for (let o = 0; o < all.total_lines; o += 37) again.push(...p.read({ offset: o, limit: 37 }).lines);
    assert.deepEqual(again, expected);
  });
}

test('a secret in a line that scrolled out of the log unread never reaches a read', () => {
  const p = new TextPipeline({ capacityLines: 3 });
  p.push(new Uint8Array(Buffer.from(`token=${'ab12'.repeat(12)}\r\nA=sk-proj-${'a1B2c3'.repeat(8)}\r\none\r\ntwo\r\n`)));
  const read = p.read({ offset: 0, limit: 10 });
  assert.equal(read.oldest_offset, 1);
  assert.deepEqual(read.lines, ['A=[REDACTED:openai]', 'one', 'two']);
});
