/** The per-session text pipeline: bytes → stripped, redacted lines with a cursor, whatever the read sizes. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TextPipeline } from '../../../workers/pty/textPipeline.js';

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

function feed(p: TextPipeline, input: string, chunkBytes: number): void {
  const b = bytes(input);
  for (let i = 0; i < b.length; i += chunkBytes) p.push(b.subarray(i, i + chunkBytes));
}

const OPENAI = `sk-proj-${'a1B2c3'.repeat(8)}`;
const ANTHROPIC = `sk-ant-api03-${'Xy9_'.repeat(12)}`;

test('strips, redacts and logs; read() matches the readLog result shape', () => {
  const p = new TextPipeline();
  p.push(bytes(`\x1b]0;agent\x07\x1b[32m✔\x1b[0m built\r\nexport OPENAI_API_KEY=${OPENAI}\r\n50%\r100%\r\n$ `));
  assert.deepEqual(p.read(), {
    lines: ['✔ built', 'export OPENAI_API_KEY=[REDACTED:env_secret]', '100%'],
    offset: 0,
    total_lines: 3,
    oldest_offset: 0,
    partial: '$',
  });
});

test('a secret split across two reads is caught, at every split point', () => {
  const input = `\x1b[33mkey\x1b[0m ${ANTHROPIC} and ${OPENAI}\r\n`;
  const b = bytes(input);
  for (let k = 0; k <= b.length; k++) {
    const p = new TextPipeline();
    p.push(b.subarray(0, k));
    const partial = p.read().partial;
    p.push(b.subarray(k));
    const { lines } = p.read();
    assert.deepEqual(lines, ['key [REDACTED:anthropic] and [REDACTED:openai]'], `split at ${k}`);
    // Not even the start of a secret shows in the unfinished line while it is being printed.
    assert.ok(!partial.includes(OPENAI.slice(0, 12)) && !partial.includes(ANTHROPIC.slice(0, 12)), `partial at ${k}: ${partial}`);
  }
});

test('a token still being printed is hidden from the unfinished line until it completes', () => {
  const p = new TextPipeline();
  p.push(bytes(`$ echo ${OPENAI.slice(0, 14)}`));
  assert.equal(p.read().partial, '$ echo [REDACTED:partial_token]');
  p.push(bytes(`${OPENAI.slice(14)} done\r\npsql postgres://app:hunt`));
  assert.deepEqual(p.read().lines, ['$ echo [REDACTED:openai] done']);
  assert.equal(p.read().partial, 'psql [REDACTED:partial_token]');
  p.push(bytes('er2@db/app\r\n'));
  assert.deepEqual(p.read().lines.at(-1), 'psql postgres://[REDACTED:db_url]@db/app');
});

test('the unfinished line is redacted when read', () => {
  const p = new TextPipeline();
  p.push(bytes(`curl -H "Authorization: Bearer ${OPENAI}`));
  assert.equal(p.read().partial, 'curl -H "Authorization: Bearer [REDACTED:bearer]');
  assert.equal(p.read().total_lines, 0);
});

const PEM = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  ...Array.from({ length: 6 }, (_, i) => `${String.fromCharCode(97 + i).repeat(60)}AAAA`),
  'Zm9v==',
  '-----END OPENSSH PRIVATE KEY-----',
];

for (const chunk of [1, 7, 64, 4096]) {
  test(`a PEM block across lines and ${chunk}-byte reads becomes one marker`, () => {
    const p = new TextPipeline();
    feed(p, `$ cat id_ed25519\r\n${PEM.join('\r\n')}\r\n$ `, chunk);
    assert.deepEqual(p.read().lines, ['$ cat id_ed25519', '[REDACTED:pem_private_key]']);
    assert.equal(p.read().partial, '$');
  });
}

test('a half-printed PEM body line is not shown as partial', () => {
  const p = new TextPipeline();
  p.push(bytes(`${PEM[0]!}\r\n${PEM[1]!.slice(0, 30)}`));
  assert.deepEqual(p.read().lines, ['[REDACTED:pem_private_key]']);
  assert.equal(p.read().partial, '');
});

test('reads by offset and limit; the log is bounded; total_lines is monotonic', () => {
  const p = new TextPipeline({ capacityLines: 100 });
  feed(p, Array.from({ length: 250 }, (_, i) => `\x1b[1mline ${i}\x1b[0m\r\n`).join(''), 4095);
  assert.equal(p.totalLines, 250);
  const r = p.read({ offset: 10, limit: 3 });
  assert.deepEqual(r, { lines: ['line 150', 'line 151', 'line 152'], offset: 150, total_lines: 250, oldest_offset: 150, partial: '' });
  assert.deepEqual(p.read({ limit: 2 }).lines, ['line 248', 'line 249']);
});

test('flush() turns the last unfinished line into a line (child exit)', () => {
  const p = new TextPipeline();
  p.push(bytes('bye, token=abc'));
  p.flush();
  assert.deepEqual(p.read(), { lines: ['bye, token=[REDACTED:env_secret]'], offset: 0, total_lines: 1, oldest_offset: 0, partial: '' });
});

test('a full-screen TUI leaves no lines unless keepAltScreen', () => {
  const input = '$ htop\r\n\x1b[?1049h\x1b[H\x1b[2JCPU 12%\r\nMEM 40%\r\n\x1b[?1049l$ ';
  const p = new TextPipeline();
  p.push(bytes(input));
  assert.deepEqual(p.read().lines, ['$ htop']);
  const keep = new TextPipeline({ keepAltScreen: true });
  keep.push(bytes(input));
  assert.deepEqual(keep.read().lines, ['$ htop', 'CPU 12%', 'MEM 40%']);
});

test('UTF-8 split across reads arrives whole in lines and partial', () => {
  const p = new TextPipeline();
  feed(p, 'héllo 日本 🎉\r\nçà', 1);
  assert.deepEqual(p.read().lines, ['héllo 日本 🎉']);
  assert.equal(p.read().partial, 'çà');
});
