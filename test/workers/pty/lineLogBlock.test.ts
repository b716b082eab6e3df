/**
 * The line log's byte path (issue 29: the text stage's CPU): a push's lines handed over as the
 * stripper's bytes (`appendBlock`) are kept exactly as `append(line, true)` keeps each decoded line,
 * through drops by count and by size and a line over the budget inside a block; and bytes that are not
 * valid UTF-8 read as the string log read them.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type LineBlock, LineLog } from '../../../workers/pty/lineLog.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { prng } from '../../helpers/prng.js';
import { LineLog as StringLineLog } from './oracle/lineLogStrings.js';

const UNICODE = ['é', '日本語', '🙂', '👩‍💻', 'e\u0301', '─│┌┐'];

/** `lines` as one block, LF after each, starting `pad` bytes into the buffer. */
function blockOf(lines: string[], pad: number): LineBlock {
  const parts = [Buffer.alloc(pad, 0x21)];
  const ends = new Int32Array(lines.length);
  let at = pad;
  for (const [k, line] of lines.entries()) {
    const b = Buffer.from(`${line}\n`);
    parts.push(b);
    at += b.length;
    ends[k] = at - 1;
  }
  parts.push(Buffer.from('tail of the unfinished line'));
  return { bytes: Buffer.concat(parts), from: pad, ends, count: lines.length };
}

test('appendBlock keeps what append(line, true) keeps, line for line, through every drop', () => {
  const random = prng(29);
  const redact = (line: string): string => (line.includes('k') ? line.replaceAll('k', '[KEY]') : line);
  for (const [capacity, budget] of [
    [50, 1_000_000],
    [1_000, 4_000],
    [300, 20_000],
    [7, 60],
    [1, 10],
    [3, 100_000],
  ] as const) {
    const blocks = new LineLog(capacity, budget);
    const lines = new LineLog(capacity, budget);
    const oracle = new StringLineLog(capacity, budget);
    for (let round = 0; round < 600; round++) {
      const batch: string[] = [];
      for (let n = Math.floor(random() * 12); n > 0; n--) {
        const size = random() < 0.05 ? Math.floor(random() * 70_000) : Math.floor(random() * 80);
        let line = '';
        for (let c = 0; c < size && line.length < size; c++)
          line += random() < 0.1 ? UNICODE[Math.floor(random() * UNICODE.length)]! : String.fromCharCode(97 + Math.floor(random() * 26));
        batch.push(line);
      }
      blocks.appendBlock(blockOf(batch, Math.floor(random() * 3)));
      for (const line of batch) {
        lines.append(line, true);
        oracle.append(line, true);
      }
      assert.equal(blocks.textBytes, lines.textBytes, `capacity ${capacity}, round ${round}`);
      assert.equal(blocks.oldestOffset, lines.oldestOffset, `capacity ${capacity}, round ${round}`);
      if (random() < 0.2) {
        const offset = random() < 0.3 ? undefined : Math.floor(random() * (blocks.totalLines + 3));
        const limit = random() < 0.2 ? undefined : Math.floor(random() * (capacity + 10));
        const got = blocks.read({ offset, limit }, redact);
        assert.deepEqual(got, lines.read({ offset, limit }, redact), `capacity ${capacity}, round ${round}`);
        // The string log drops no more (a character is at most as long as its bytes): each line it serves reads the same.
        const want = oracle.read({ offset: got.offset, limit: got.lines.length }, redact);
        assert.deepEqual(got.lines, want.lines.slice(0, got.lines.length));
      }
      assert.ok(blocks.textBytes <= budget || blocks.totalLines - blocks.oldestOffset === 1, 'the byte cap holds');
    }
  }
});

test('bytes that are not UTF-8 (stray continuation bytes, sequences cut by a line end, Latin-1) read as the string log read them', () => {
  const random = prng(30);
  const parts: Buffer[] = [];
  for (let i = 0; i < 40_000; i++) {
    const r = random();
    const word =
      r < 0.1
        ? Buffer.from([0x80 + Math.floor(random() * 0x40)])
        : r < 0.2
          ? Buffer.from([0xe2, 0x82])
          : r < 0.3
            ? Buffer.from([0xf0, 0x9f, 0x99])
            : r < 0.35
              ? Buffer.from([0xe9, 0x20, 0xff, 0xfe])
              : Buffer.from(Math.floor(random() * 36 ** 4).toString(36));
    parts.push(word, Buffer.from(random() < 0.15 ? '\r\n' : random() < 0.3 ? '\x1b[1m \x1b[0m' : ' '));
  }
  const data = Buffer.concat(parts);
  const compact = new TextPipeline();
  const oracle = new TextPipeline();
  (oracle as unknown as { log: StringLineLog }).log = new StringLineLog();
  for (let i = 0; i < data.length; ) {
    const n = 1 + Math.floor(random() * 4096);
    compact.push(data.subarray(i, i + n));
    oracle.push(data.subarray(i, i + n));
    i += n;
  }
  compact.flush();
  oracle.flush();
  const got = compact.read({ offset: 0, limit: 10_000 });
  const want = oracle.read({ offset: got.offset, limit: got.lines.length });
  assert.ok(got.lines.some((l) => l.includes('\ufffd')));
  assert.equal(got.total_lines, want.total_lines);
  assert.deepEqual(got.lines, want.lines);
  assert.equal(got.partial, want.partial);
});

test('an idle text stage holds little: small stripper and log arrays, no options object, an OSC buffer only once an OSC is kept', () => {
  const pipeline = new TextPipeline();
  type Stripper = { buf: Buffer; ends: Int32Array; oscBuf: Buffer | undefined; opts: unknown };
  type Log = { starts: Uint32Array; unredacted: Uint8Array; redacted: Map<number, string> | undefined };
  const { stripper, log } = pipeline as unknown as { stripper: Stripper; log: Log };
  // A prompt with a title (an OSC the parser does not want: never copied).
  pipeline.push(Buffer.from('\x1b]0;user@host: ~\x07\x1b[1;32muser@host\x1b[0m:~$ ls\r\nfile1  file2\r\n\x1b[1;32muser@host\x1b[0m:~$ '));
  // Each was several times this (1 KiB, 256 bytes, 256 bytes) and grew on demand anyway.
  assert.ok(stripper.buf.length <= 128, `stripper buffer ${stripper.buf.length}`);
  assert.ok(stripper.ends.byteLength <= 32, `stripper line ends ${stripper.ends.byteLength}`);
  assert.ok(log.starts.byteLength + log.unredacted.byteLength <= 80, `log slots ${log.starts.byteLength}`);
  // The pipeline is the stripper's options (methods, no closures per session); no redaction map until a secret.
  assert.equal(stripper.opts, pipeline);
  assert.equal(log.redacted, undefined);
  assert.equal(stripper.oscBuf, undefined);
  // The log's first text chunk fits a few prompts (it was 4 KiB: most of an idle session's log).
  assert.ok(pipeline.heldBytes <= 512, `log ${pipeline.heldBytes}`);
  // A progress report (OSC 9;4) is kept for the parser: the buffer comes then.
  const seen: string[] = [];
  pipeline.setSink({ text: () => {}, osc: (p) => seen.push(p), altScreen: () => {} });
  pipeline.push(Buffer.from('\x1b]9;4;1;50\x07'));
  assert.deepEqual(seen, ['9;4;1;50']);
  assert.ok(stripper.oscBuf !== undefined);
});
