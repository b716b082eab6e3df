/** The bounded line log: monotonic cursor, clamping to the oldest kept line, tail reads, limits. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { LineLog, LineLogConstants } from '../../../workers/pty/lineLog.js';

function filled(capacity: number, count: number): LineLog {
  const log = new LineLog(capacity);
  for (let i = 0; i < count; i++) log.append(`line ${i}`);
  return log;
}

test('reads from an offset, with limit', () => {
  const log = filled(10, 5);
  assert.deepEqual(log.read({ offset: 1, limit: 2 }), { lines: ['line 1', 'line 2'], offset: 1, total_lines: 5, oldest_offset: 0 });
});

test('without an offset: the last `limit` lines', () => {
  const log = filled(10, 5);
  assert.deepEqual(log.read({ limit: 2 }), { lines: ['line 3', 'line 4'], offset: 3, total_lines: 5, oldest_offset: 0 });
  assert.deepEqual(log.read({ limit: 50 }).lines.length, 5);
});

test('default limit is DEFAULT_LIMIT_LINES', () => {
  const log = filled(1000, 500);
  const r = log.read();
  assert.equal(r.lines.length, LineLogConstants.DEFAULT_LIMIT_LINES);
  assert.equal(r.offset, 500 - LineLogConstants.DEFAULT_LIMIT_LINES);
  assert.equal(log.read({ offset: 0 }).lines.length, LineLogConstants.DEFAULT_LIMIT_LINES);
});

test('total_lines keeps counting after old lines are dropped; reads clamp to oldest_offset', () => {
  const log = filled(4, 10);
  assert.equal(log.totalLines, 10);
  assert.equal(log.oldestOffset, 6);
  assert.deepEqual(log.read({ offset: 2, limit: 3 }), { lines: ['line 6', 'line 7', 'line 8'], offset: 6, total_lines: 10, oldest_offset: 6 });
  assert.deepEqual(log.read({ offset: 0 }).lines, ['line 6', 'line 7', 'line 8', 'line 9']);
});

test('reading at or past total_lines returns nothing new, offset = total_lines', () => {
  const log = filled(4, 3);
  assert.deepEqual(log.read({ offset: 3 }), { lines: [], offset: 3, total_lines: 3, oldest_offset: 0 });
  assert.deepEqual(log.read({ offset: 99 }), { lines: [], offset: 3, total_lines: 3, oldest_offset: 0 });
});

test('a reader following total_lines sees every line exactly once', () => {
  const log = new LineLog(8);
  const seen: string[] = [];
  let cursor = 0;
  for (let i = 0; i < 50; i++) {
    log.append(`l${i}`);
    if (i % 3 === 0) {
      const r = log.read({ offset: cursor, limit: 100 });
      seen.push(...r.lines);
      cursor = r.offset + r.lines.length;
    }
  }
  seen.push(...log.read({ offset: cursor, limit: 100 }).lines);
  assert.deepEqual(
    seen,
    Array.from({ length: 50 }, (_, i) => `l${i}`),
  );
});

test('limit 0 returns no lines but the cursor fields', () => {
  assert.deepEqual(filled(4, 2).read({ limit: 0 }), { lines: [], offset: 2, total_lines: 2, oldest_offset: 0 });
});

test('the default capacity is the protocol LOG_LINES', () => {
  const log = filled(LineLogConstants.CAPACITY_LINES, PtyConstants.LOG_LINES + 25);
  assert.equal(LineLogConstants.CAPACITY_LINES, 10_000);
  assert.equal(log.oldestOffset, 25);
  assert.equal(log.read({ offset: 0, limit: 1 }).lines[0], 'line 25');
  assert.equal(new LineLog().read().oldest_offset, 0);
});

test('capacity must be a positive integer', () => {
  assert.throws(() => new LineLog(0), RangeError);
  assert.throws(() => new LineLog(1.5), RangeError);
});

test('long lines are bounded by characters too: the oldest go first, indexes keep counting, the newest line stays', () => {
  const log = new LineLog(100, 1_000);
  for (let i = 0; i < 10; i++) log.append(`${i}`.repeat(300));
  // 300-character lines, 1,000 characters kept: the last three.
  assert.equal(log.totalLines, 10);
  assert.equal(log.oldestOffset, 7);
  const all = log.read({ offset: 0, limit: 100 });
  assert.deepEqual([all.offset, all.oldest_offset, all.total_lines], [7, 7, 10]);
  assert.deepEqual(
    all.lines.map((l) => l[0]),
    ['7', '8', '9'],
  );
  // Short lines after long ones: the count bound takes over again once the text fits.
  for (let i = 0; i < 200; i++) log.append('x');
  assert.equal(log.oldestOffset, 110);
  assert.equal(log.read({ offset: 0, limit: 100 }).lines.length, 100);
  // A single line over the budget is kept alone rather than dropped.
  log.append('y'.repeat(5_000));
  assert.deepEqual([log.oldestOffset, log.read({ limit: 5 }).lines.length], [210, 1]);
});

test('a flood of maximum-length lines holds MAX_CHARS, not CAPACITY_LINES of them', () => {
  const log = new LineLog();
  const line = 'a'.repeat(64 * 1024);
  for (let i = 0; i < 200; i++) log.append(line);
  const kept = log.totalLines - log.oldestOffset;
  assert.ok(kept * line.length <= LineLogConstants.MAX_CHARS, `${kept} lines of 64 KiB kept`);
  assert.equal(kept, Math.floor(LineLogConstants.MAX_CHARS / line.length));
});

test('a line appended unredacted is redacted once, when first read, and only if it is read', () => {
  const log = new LineLog(4);
  const seen: string[] = [];
  const redact = (line: string): string => {
    seen.push(line);
    return line.replace('secret', '[X]');
  };
  for (const line of ['a secret', 'b', 'c secret', 'd', 'e secret']) log.append(line, true); // 'a secret' drops unread
  assert.deepEqual(log.read({ offset: 3, limit: 2 }, redact).lines, ['d', 'e [X]']);
  assert.deepEqual(seen, ['d', 'e secret']);
  assert.deepEqual(log.read({ offset: 0, limit: 10 }, redact).lines, ['b', 'c [X]', 'd', 'e [X]']);
  assert.deepEqual(seen, ['d', 'e secret', 'b', 'c secret'], 'each line redacted once');
});

test('a read of unredacted lines without a redact function fails instead of leaking them', () => {
  const log = new LineLog(4);
  log.append('kept clean');
  assert.deepEqual(log.read().lines, ['kept clean']);
  log.append('printed as is', true);
  assert.throws(() => log.read(), /redact/);
});

test('the character budget follows a line redacted at read', () => {
  const log = new LineLog(10, 20);
  log.append('0123456789abcdef', true); // 16 characters as printed
  assert.deepEqual(log.read({}, () => 'short').lines, ['short']); // now 5
  log.append('0123456789', false); // 15 in all: both fit under 20
  assert.deepEqual(log.read().lines, ['short', '0123456789']);
  assert.equal(log.oldestOffset, 0);
});

test('a read that lengthens lines by redacting them settles the character budget before it answers', () => {
  const log = new LineLog(100, 100);
  for (let i = 0; i < 10; i++) log.append(`s${i}`.padEnd(10, '.'), true); // 100 characters as printed
  const read = log.read({ offset: 0, limit: 100 }, (line) => `${line}[REDACTED]`); // each becomes 20
  assert.equal(read.oldest_offset, 5, 'half the lines no longer fit');
  assert.deepEqual(read.lines, ['s5........[REDACTED]', 's6........[REDACTED]', 's7........[REDACTED]', 's8........[REDACTED]', 's9........[REDACTED]']);
  assert.equal(read.offset, 5);
  assert.equal(log.read({ offset: 0, limit: 100 }).oldest_offset, 5, 'and it stays so with no append after (an exited session)');
});

test('the log grows as lines arrive: across its first wrap every line reads back, redaction flags included', () => {
  const log = new LineLog(300);
  for (let i = 0; i < 700; i++) log.append(`line ${i}`, i % 3 === 0);
  const read = log.read({ offset: 0, limit: 300 }, (line) => line.replace('line', 'LINE'));
  assert.equal(read.offset, 400);
  assert.equal(read.lines.length, 300);
  assert.deepEqual(
    read.lines,
    Array.from({ length: 300 }, (_, k) => `${(400 + k) % 3 === 0 ? 'LINE' : 'line'} ${400 + k}`),
  );
});

test('a new log holds almost nothing until lines arrive (an idle session keeps its log for hours)', async () => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const logs = Array.from({ length: 1000 }, () => {
    const log = new LineLog();
    log.append('$ ');
    return log;
  });
  gc();
  const perLog = (process.memoryUsage().heapUsed - before) / logs.length;
  // Sized for its 10,000 lines up front, a log held over 80 KB from its first line.
  assert.ok(perLog < 4_096, `${Math.round(perLog)} bytes of heap per new log`);
});
