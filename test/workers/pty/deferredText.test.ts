/**
 * The text stage runs after its bytes were handed to the viewers, not in front of them: each batch
 * reaches the data listeners first, the host's channel is flushed (the hook the entry registers),
 * and only then does the text log see it; a read of the log in between still sees everything sent.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, test } from 'node:test';

import { DeferredTextStage, deferredTextStage, PendingText } from '../../../workers/pty/deferredText.js';
import { PtySession } from '../../../workers/pty/ptySession.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { shellHomeEnv } from '../../helpers/testHome.js';
import { waitFor } from './ptyHostHarness.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv(), TERM: 'xterm-256color', LANG: 'C.UTF-8' };
const sessions: PtySession[] = [];
after(() => {
  for (const s of sessions) s.dispose();
});

test('each batch reaches the viewers, and the channel is flushed, before the text stage sees it', async () => {
  let dataBytes = 0;
  let textBytes = 0;
  // What the pty host's entry registers: the channel's flush, run before each pass of the text stage.
  let flushedBytes = 0;
  deferredTextStage.setBeforeRun(() => (flushedBytes = dataBytes));
  const early: number[] = [];
  const log = new (class extends TextPipeline {
    override push(chunk: Uint8Array): void {
      textBytes += chunk.length;
      // Every byte the text stage reads was sent and flushed first.
      if (textBytes > flushedBytes) early.push(textBytes);
      super.push(chunk);
    }
  })();
  const session = PtySession.spawn(
    { shell: '/bin/sh', args: ['-c', 'seq 1 20000; printf "text-done\\n"; exec sleep 30'], cwd: tmpdir(), env, rows: 24, cols: 80 },
    log,
  );
  sessions.push(session);
  let batches = 0;
  const sameCall: number[] = [];
  session.onData((bytes) => {
    batches++;
    dataBytes += bytes.length;
    const sent = dataBytes;
    // Not in the same call either (it used to run right after the listeners, before the write).
    process.nextTick(() => {
      if (textBytes >= sent) sameCall.push(batches);
    });
  });
  try {
    await waitFor(
      () => log.read({ limit: 1 }).lines.includes('text-done'),
      10_000,
      () => 'the text never arrived',
    );
  } finally {
    deferredTextStage.setBeforeRun(() => undefined);
  }
  assert.ok(batches > 1, `a flood arrives in batches (${batches})`);
  assert.deepEqual(sameCall, [], 'batches the text stage saw in the call that sent them');
  // The final read drains whatever is left by itself (no pass of the stage, so no flush): allow that tail.
  assert.ok(
    early.every((n) => n === textBytes),
    `text read before its flush at ${early.slice(0, 3).join(', ')}`,
  );
  assert.equal(textBytes, dataBytes, 'every byte sent went through the text stage once');
});

test('a log read right after a data event already sees that batch', async () => {
  const session = PtySession.spawn(
    { shell: '/bin/sh', args: ['-c', 'printf "ready\\n"; read x; printf "line-%s\\n" "$x"; exec sleep 30'], cwd: tmpdir(), env, rows: 24, cols: 80 },
    new TextPipeline(),
  );
  sessions.push(session);
  let sawLine: string[] | undefined;
  let text = '';
  session.onData((bytes) => {
    text += Buffer.from(bytes).toString('latin1');
    // Synchronously, in the listener: the text stage has not run for this batch on its own yet.
    if (text.includes('line-42') && sawLine === undefined) sawLine = session.readLog({ limit: 5 }).lines;
  });
  await waitFor(
    () => text.includes('ready'),
    5_000,
    () => 'no prompt',
  );
  session.write(Buffer.from('42\n'));
  await waitFor(
    () => sawLine !== undefined,
    5_000,
    () => 'the line never came',
  );
  assert.ok(sawLine?.includes('line-42'), `the read drained the pending text: ${JSON.stringify(sawLine)}`);
});

/** A stage on a fake clock: each processed batch takes `costMs`; passes run when the test says. */
function fakeStage(budgetMs: number) {
  let now = 0;
  const passes: Array<() => void> = [];
  const stage = new DeferredTextStage({ budgetMs, now: () => now, defer: (fn) => passes.push(fn) });
  const seen: string[] = [];
  const queue = (name: string, costMs = 1) =>
    new PendingText((bytes) => {
      now += costMs;
      seen.push(`${name}${bytes[0]}`);
    }, stage);
  const pass = (): boolean => {
    const fn = passes.shift();
    fn?.();
    return fn !== undefined;
  };
  return { stage, seen, queue, pass, pending: () => passes.length };
}

test('one pass of the text stage stops at its time budget and yields; the rest follows on later turns, in order', () => {
  const f = fakeStage(2.5);
  const a = f.queue('a');
  const b = f.queue('b');
  for (let i = 0; i < 5; i++) a.push(Uint8Array.of(i));
  for (let i = 0; i < 5; i++) b.push(Uint8Array.of(i));
  assert.equal(f.pending(), 1, 'one pass scheduled for both sessions');
  f.pass();
  // 3 batches: the third one starts before the budget is spent, nothing after it.
  assert.deepEqual(f.seen, ['a0', 'a1', 'a2']);
  assert.equal(f.pending(), 1, 'the rest is scheduled for a later turn');
  // The session cut short goes to the back: b is not starved by a's backlog.
  f.pass();
  assert.deepEqual(f.seen.slice(3), ['b0', 'b1', 'b2']);
  while (f.pass());
  assert.deepEqual(
    f.seen.filter((s) => s.startsWith('a')),
    ['a0', 'a1', 'a2', 'a3', 'a4'],
  );
  assert.deepEqual(
    f.seen.filter((s) => s.startsWith('b')),
    ['b0', 'b1', 'b2', 'b3', 'b4'],
  );
  assert.ok(a.empty && b.empty);
  assert.equal(f.stage.pending, 0);
});

test('a reader drains its session between passes: the next pass skips it', () => {
  const f = fakeStage(1.5);
  const a = f.queue('a');
  const b = f.queue('b');
  for (let i = 0; i < 3; i++) a.push(Uint8Array.of(i));
  b.push(Uint8Array.of(0));
  f.pass(); // a0, a1
  a.drain();
  assert.deepEqual(f.seen, ['a0', 'a1', 'a2']);
  f.pass();
  assert.deepEqual(f.seen, ['a0', 'a1', 'a2', 'b0']);
  assert.equal(f.pass(), false, 'nothing left to schedule');
});

test('a session whose queued text passes the bound is processed at once, in the data path', () => {
  const f = fakeStage(1);
  const processed: number[] = [];
  const q = new PendingText((bytes) => processed.push(bytes.length), f.stage, 10);
  q.push(new Uint8Array(4));
  q.push(new Uint8Array(4));
  assert.deepEqual(processed, []);
  q.push(new Uint8Array(4)); // 12 > 10
  assert.deepEqual(processed, [4, 4, 4]);
  assert.equal(q.bytes, 0);
  assert.equal(f.stage.pending, 0);
});

test('a batch that throws is not run again, and the rest still gets its turn', () => {
  const f = fakeStage(100);
  const seen: number[] = [];
  const q = new PendingText((bytes) => {
    seen.push(bytes[0]!);
    if (bytes[0] === 1) throw new Error('boom');
  }, f.stage);
  for (let i = 0; i < 3; i++) q.push(Uint8Array.of(i));
  assert.throws(() => f.pass(), /boom/);
  while (f.pass());
  assert.deepEqual(seen, [0, 1, 2]);
});
