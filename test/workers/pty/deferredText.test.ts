/**
 * The text stage runs after its bytes were handed to the viewers, not in front of them: each batch
 * reaches the data listeners first, the host's channel is flushed (the hook the entry registers),
 * and only then does the text log see it; a read of the log in between still sees everything sent.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, test } from 'node:test';

import { deferredTextStage } from '../../../workers/pty/deferredText.js';
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
