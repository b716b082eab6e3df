/**
 * The compact line log (UTF-8 bytes in chunks) serves exactly what the log of one JS string per line
 * served (issue 29 item 1): the old implementation is kept in ./oracle as the reference, and both are fed
 * the same lines, directly and through the text stage, on the recorded agent fixtures and on floods.
 * Its byte cap holds under floods. ASCII text is bounded alike (a character was a byte); elsewhere the
 * byte cap keeps fewer lines than the character cap did, and those it keeps read the same.
 */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { LineLog, LineLogConstants } from '../../../workers/pty/lineLog.js';
import { OutputRing } from '../../../workers/pty/outputRing.js';
import { TextPipeline, type TextRead } from '../../../workers/pty/textPipeline.js';
import { prng } from '../../helpers/prng.js';
import { LineLog as StringLineLog } from './oracle/lineLogStrings.js';

const FIXTURES = new URL('../../../../test/fixtures/tuicommander/', import.meta.url).pathname;

const OPENAI = `sk-proj-${'a1B2c3'.repeat(8)}`;
const GITHUB = `ghp_${'Z9y8'.repeat(10)}`;
const UNICODE = ['é', 'ü', '日本語', '中文字符', '🙂', '👩‍💻', 'e\u0301', 'Ω≈ç√', '─│┌┐', 'ﬁ', '\u{1F600}\u{1F3FD}'];

/** A pipeline whose log is the old one (its private field, swapped before the first byte). */
function oraclePipeline(): TextPipeline {
  const pipeline = new TextPipeline();
  (pipeline as unknown as { log: StringLineLog }).log = new StringLineLog();
  return pipeline;
}

function pieces(data: Buffer, random: () => number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; ) {
    const n = 1 + Math.floor(random() * (random() < 0.2 ? 16 : 4096));
    out.push(data.subarray(i, i + n));
    i += n;
  }
  return out;
}

/**
 * Reads both pipelines alike: every line the compact one serves is the old one's line at that index;
 * cursors and the unfinished line are the same. `sameWindow`: the old one kept no more lines (ASCII, or
 * under both caps) so the answers are identical field for field.
 */
function assertSameRead(compact: TextPipeline, oracle: TextPipeline, opts: { offset?: number; limit?: number }, sameWindow: boolean, where: string): void {
  const got = compact.read(opts);
  if (sameWindow) {
    assert.deepEqual(got, oracle.read(opts), where);
    return;
  }
  // The byte cap drops at least what the character cap dropped: read the old one from the same line.
  const want: TextRead = oracle.read(opts.offset === undefined ? { offset: got.offset, limit: got.lines.length } : { ...opts, offset: got.offset });
  assert.equal(got.total_lines, want.total_lines, where);
  assert.ok(got.oldest_offset >= want.oldest_offset, where);
  assert.equal(got.partial, want.partial, where);
  assert.deepEqual(got.lines, want.lines.slice(0, got.lines.length), where);
}

function compareFeeds(data: Buffer, seed: number, sameWindow: boolean, name: string): TextPipeline {
  const random = prng(seed);
  const compact = new TextPipeline();
  const oracle = oraclePipeline();
  const chunks = pieces(data, random);
  for (let i = 0; i < chunks.length; i++) {
    compact.push(chunks[i]!);
    oracle.push(chunks[i]!);
    if (random() < 0.05) {
      const total = compact.totalLines;
      const offset = random() < 0.3 ? undefined : Math.floor(random() * (total + 5));
      const limit = random() < 0.2 ? undefined : Math.floor(random() * 400);
      assertSameRead(compact, oracle, { offset, limit }, sameWindow, `${name}: read after piece ${i}`);
    }
  }
  compact.flush();
  oracle.flush();
  assertSameRead(compact, oracle, { offset: 0, limit: LineLogConstants.CAPACITY_LINES }, sameWindow, `${name}: everything kept`);
  assertSameRead(compact, oracle, {}, sameWindow, `${name}: default read`);
  return compact;
}

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return fixtureFiles(path);
    return /\.(raw|txt)$/.test(name) ? [path] : [];
  });
}

test('the recorded agent fixtures read the same, line for line, at every read', () => {
  const files = fixtureFiles(FIXTURES);
  assert.ok(files.length >= 5, `fixtures found: ${files.length}`);
  for (const [k, file] of files.entries()) {
    const data = readFileSync(file);
    compareFeeds(data, 100 + k, true, file);
    // And twenty times over, so the log wraps its chunks and drops lines.
    compareFeeds(Buffer.concat(Array.from({ length: 20 }, () => data)), 200 + k, true, `${file} ×20`);
  }
});

function flood(seed: number, kinds: { unicode?: boolean; long?: boolean; redraw?: boolean; alt?: boolean; secrets?: boolean }, bytes: number): Buffer {
  const random = prng(seed);
  const word = (): string => {
    if (kinds.unicode === true && random() < 0.3) return UNICODE[Math.floor(random() * UNICODE.length)]!;
    return Math.floor(random() * 36 ** 4).toString(36);
  };
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    let line = '';
    const r = random();
    if (kinds.long === true && r < 0.05) line = word().repeat(20_000 + Math.floor(random() * 60_000));
    else if (kinds.redraw === true && r < 0.3) {
      for (let p = 0; p <= 100; p += 7) line += `\r\x1b[32m[${'#'.repeat(p >> 2).padEnd(25)}]\x1b[0m ${p}% ${word()}`;
    } else if (kinds.alt === true && r < 0.35) {
      line = `\x1b[?1049h\x1b[H\x1b[2J${Array.from({ length: 10 }, () => `\x1b[1;5H${word()} ${word()}`).join('')}\x1b[?1049l`;
    } else if (kinds.secrets === true && r < 0.4) line = `export TOKEN=${random() < 0.5 ? OPENAI : GITHUB} ${word()}`;
    else {
      const n = Math.floor(random() * 30);
      const words: string[] = [];
      for (let i = 0; i < n; i++) words.push(random() < 0.1 ? `\x1b[1;3${i % 8}m${word()}\x1b[0m` : word());
      line = words.join(' ');
    }
    const eol = random() < 0.1 ? '\n' : '\r\n';
    parts.push(line + eol);
    size += line.length + eol.length;
  }
  return Buffer.from(parts.join(''), 'utf8');
}

test('generated floods read the same: ASCII with colours, secrets, CR-only redraws and the alternate screen', () => {
  for (const [seed, kinds] of [
    [1, { secrets: true }],
    [2, { redraw: true, secrets: true }],
    [3, { alt: true, redraw: true }],
    [4, { long: true }],
    [5, { long: true, redraw: true, alt: true, secrets: true }],
  ] as const) {
    const log = compareFeeds(flood(seed, kinds, 4_000_000), seed, true, `flood ${seed} ${JSON.stringify(kinds)}`);
    assert.ok(log.read().oldest_offset > 0, 'the flood went past the caps');
  }
});

test('generated unicode floods: every line kept reads the same; the byte cap keeps the newest of them', () => {
  for (const [seed, kinds] of [
    [11, { unicode: true }],
    [12, { unicode: true, long: true, secrets: true }],
    [13, { unicode: true, redraw: true, alt: true }],
  ] as const)
    compareFeeds(flood(seed, kinds, 4_000_000), seed, false, `flood ${seed} ${JSON.stringify(kinds)}`);
  // Under both caps nothing is dropped, and the answers are identical.
  compareFeeds(flood(14, { unicode: true, redraw: true, secrets: true }, 400_000), 14, true, 'small unicode flood');
});

test('the log directly: random lines, flags, reads and a redaction that lengthens or shortens lines', () => {
  const random = prng(7);
  for (const [capacity, budget, unicode] of [
    [50, 1_000_000, true],
    [1_000, 4_000, false],
    [300, 20_000, false],
    [7, 60, false],
    [1, 10, false],
  ] as const) {
    const compact = new LineLog(capacity, budget);
    const oracle = new StringLineLog(capacity, budget);
    const redact = (line: string): string => (line.includes('k') ? line.replaceAll('k', '[KEY]') : line.includes('q') ? line.replaceAll('q', '') : line);
    for (let i = 0; i < 5_000; i++) {
      const n = random() < 0.05 ? Math.floor(random() * 3_000) : Math.floor(random() * 60);
      let line = '';
      for (let c = 0; c < n; c++)
        line += unicode && random() < 0.2 ? UNICODE[Math.floor(random() * UNICODE.length)]! : String.fromCharCode(97 + Math.floor(random() * 26));
      const flag = random() < 0.5;
      compact.append(line, flag);
      oracle.append(line, flag);
      if (random() < 0.1) {
        const offset = random() < 0.3 ? undefined : Math.floor(random() * (i + 3));
        const limit = random() < 0.2 ? undefined : Math.floor(random() * (capacity + 10));
        assert.deepEqual(compact.read({ offset, limit }, redact), oracle.read({ offset, limit }, redact), `capacity ${capacity}, line ${i}`);
      }
      assert.ok(compact.textBytes <= budget || compact.totalLines - compact.oldestOffset === 1, 'the byte cap holds');
    }
  }
});

test('caps hold under a flood: the log keeps at most MAX_BYTES of text and holds little more; the ring holds its bound', () => {
  const pipeline = new TextPipeline();
  const ring = new OutputRing(2 * 1024 * 1024);
  const data = flood(21, { unicode: true, long: true, redraw: true, secrets: true }, 12_000_000);
  for (const piece of pieces(data, prng(21))) {
    pipeline.push(piece);
    ring.append(piece);
  }
  const log = (pipeline as unknown as { log: LineLog }).log;
  assert.ok(log.textBytes <= LineLogConstants.MAX_BYTES, `${log.textBytes} bytes of text`);
  // The text, its per-line slots (5 bytes × 10,000) and at most two partly used 128 KiB chunks.
  assert.ok(log.heldBytes <= LineLogConstants.MAX_BYTES + 50_000 + 2 * 128 * 1024, `${log.heldBytes} bytes held`);
  assert.equal(ring.heldBytes, 2 * 1024 * 1024);
  assert.ok(ring.read().bytes.equals(data.subarray(data.length - 2 * 1024 * 1024)));
});

test('a quiet session holds a few KiB: the ring and the log grow as output arrives', () => {
  const pipeline = new TextPipeline();
  const ring = new OutputRing(2 * 1024 * 1024);
  const prompt = Buffer.from('\x1b[1;32muser@host\x1b[0m:~$ ls\r\nfile1  file2\r\n\x1b[1;32muser@host\x1b[0m:~$ ');
  pipeline.push(prompt);
  ring.append(prompt);
  const log = (pipeline as unknown as { log: LineLog }).log;
  assert.ok(ring.heldBytes <= 16 * 1024, `ring ${ring.heldBytes}`);
  assert.ok(log.heldBytes <= 8 * 1024, `log ${log.heldBytes}`);
  // Once every line is dropped by size, the log is back to one chunk.
  const small = new LineLog(100, 300);
  for (let i = 0; i < 1_000; i++) small.append('x'.repeat(250));
  assert.ok(small.heldBytes < 64 * 1024, `${small.heldBytes}`);
});
