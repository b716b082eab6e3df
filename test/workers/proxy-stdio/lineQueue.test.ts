/** The stdout line queue: its three limits (256 lines, 8 MiB, 16 MiB per line), lossy drop-oldest, framing. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { StdioLimits } from '../../../shared/protocol/proxyStdio.js';
import { LineQueue } from '../../../workers/proxy-stdio/lineQueue.js';

const MiB = 1024 * 1024;

function drain(queue: LineQueue): string[] {
  const out: string[] = [];
  for (let line = queue.shift(); line !== undefined; line = queue.shift()) out.push(line.toString('utf8'));
  return out;
}

test('the limits are 256 lines, 8 MiB, 16 MiB per line', () => {
  assert.equal(StdioLimits.QUEUE_MAX_LINES, 256);
  assert.equal(StdioLimits.QUEUE_MAX_BYTES, 8 * MiB);
  assert.equal(StdioLimits.MAX_LINE_BYTES, 16 * MiB);
});

test('at most 256 lines are held; the oldest go first and are counted', () => {
  const queue = new LineQueue();
  queue.write(Buffer.from(Array.from({ length: 300 }, (_, n) => `line-${n}\n`).join('')));
  assert.equal(queue.length, 256);
  assert.equal(queue.dropped, 44);
  const lines = drain(queue);
  assert.equal(lines[0], 'line-44');
  assert.equal(lines.at(-1), 'line-299');
  assert.equal(queue.bytes, 0);
});

test('at most 8 MiB is held in total; the oldest go first', () => {
  const queue = new LineQueue();
  for (let n = 0; n < 10; n++) queue.write(Buffer.from(`${String(n).repeat(MiB)}\n`));
  assert.ok(queue.bytes <= 8 * MiB, `${queue.bytes} bytes held`);
  assert.equal(queue.length, 8);
  assert.equal(queue.dropped, 2);
  assert.equal(drain(queue)[0]![0], '2');
});

test('a line over 16 MiB is discarded whole while it streams in, never buffered past the limit', () => {
  let oversizedCalls = 0;
  const queue = new LineQueue({ onOversized: () => oversizedCalls++ });
  queue.write(Buffer.from('before\n'));
  const chunk = Buffer.alloc(MiB, 'a');
  let peakPartial = 0;
  for (let n = 0; n < 20; n++) {
    queue.write(chunk);
    peakPartial = Math.max(peakPartial, queue.partialBytes);
  }
  assert.ok(peakPartial <= StdioLimits.MAX_LINE_BYTES, `buffered ${peakPartial} bytes of the long line`);
  // Once over the limit nothing of that line is held any more.
  assert.equal(queue.partialBytes, 0);
  queue.write(Buffer.from('aaa\nafter\n'));
  assert.equal(queue.oversized, 1);
  assert.equal(oversizedCalls, 1);
  assert.deepEqual(drain(queue), ['before', 'after']);
  assert.equal(queue.dropped, 0, 'an oversized line is counted apart from the lossy drops');
});

test('a line of exactly 16 MiB is kept, even alone above the 8 MiB total', () => {
  const queue = new LineQueue();
  queue.write(Buffer.from('small\n'));
  queue.write(Buffer.alloc(StdioLimits.MAX_LINE_BYTES, 'b'));
  queue.write(Buffer.from('\n'));
  assert.equal(queue.oversized, 0);
  assert.equal(queue.length, 1);
  assert.equal(queue.dropped, 1);
  assert.equal(queue.shift()!.length, StdioLimits.MAX_LINE_BYTES);
});

test('a line over the limit inside one chunk is skipped and the rest of the chunk still read', () => {
  const queue = new LineQueue({ maxLineBytes: 10 });
  queue.write(Buffer.from('ok\n0123456789A\nfine\n'));
  assert.equal(queue.oversized, 1);
  assert.deepEqual(drain(queue), ['ok', 'fine']);
});

test('lines split across reads, CRLF, blank lines, and a last line without its newline', () => {
  const queue = new LineQueue();
  for (const piece of ['{"a"', ':1}\r', '\n\n  \n{"b":2}\n', '{"c"', ':3}']) queue.write(Buffer.from(piece));
  assert.deepEqual(drain(queue), ['{"a":1}', '  ', '{"b":2}']);
  queue.end();
  assert.deepEqual(drain(queue), ['{"c":3}']);
});

test('queued lines are copies: the read chunk can be reused and is not kept alive', () => {
  const queue = new LineQueue();
  const chunk = Buffer.from('first\nsecond\n');
  queue.write(chunk);
  chunk.fill(0x21);
  assert.deepEqual(drain(queue), ['first', 'second']);
});

test('the keep filter turns lines away before they take queue space', () => {
  const queue = new LineQueue({ maxLines: 2, keep: (line) => line.includes('"id"') });
  queue.write(Buffer.from('{"method":"n"}\n'.repeat(1000)));
  queue.write(Buffer.from('{"id":1}\n'));
  assert.equal(queue.skipped, 1000);
  assert.equal(queue.dropped, 0);
  assert.deepEqual(drain(queue), ['{"id":1}']);
});

test('side lines (notifications) have their own bounded queue: a flood of them never evicts a main line, and order is kept', () => {
  const queue = new LineQueue({ maxLines: 4, sideMaxLines: 3, side: (line) => !line.includes('"id"') });
  queue.write(Buffer.from('{"id":1}\n{"method":"a"}\n'));
  queue.write(Buffer.from('{"method":"n"}\n'.repeat(1000)));
  queue.write(Buffer.from('{"id":2}\n{"method":"z"}\n'));
  assert.equal(queue.dropped, 999);
  assert.equal(queue.droppedSide, 999);
  assert.equal(queue.length, 5);
  assert.deepEqual(drain(queue), ['{"id":1}', '{"method":"n"}', '{"method":"n"}', '{"id":2}', '{"method":"z"}']);
});
