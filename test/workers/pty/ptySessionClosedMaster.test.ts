/**
 * Once node-pty has destroyed its read stream, the session's PTY master fd is closed and its number
 * free for the next open, while the exit is still to be reported. A write or resize in that gap must
 * not touch the fd: it may by then be another session's PTY.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, test } from 'node:test';

import { PtySession } from '../../../workers/pty/ptySession.js';
import { shellHomeEnv } from '../../helpers/testHome.js';
import { sleep, waitFor } from './ptyHostHarness.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv(), TERM: 'xterm-256color', LANG: 'C.UTF-8' };
const sessions: PtySession[] = [];
after(() => {
  for (const s of sessions) s.dispose();
});

function spawn(script: string): { session: PtySession; text: () => string } {
  const session = PtySession.spawn({ shell: '/bin/sh', args: ['-c', script], cwd: tmpdir(), env, rows: 24, cols: 80 });
  sessions.push(session);
  let text = '';
  session.onData((bytes) => (text += Buffer.from(bytes).toString('latin1')));
  return { session, text: () => text };
}

test('a write or resize after the master was closed never reaches the PTY that reuses its fd number', async () => {
  const a = spawn("printf 'A-READY\\n'; exec sleep 30");
  await waitFor(
    () => a.text().includes('A-READY'),
    5_000,
    () => 'session A never started',
  );
  const aFd = (a.session as unknown as { pty: { fd: number } }).pty.fd;
  // What node-pty does 200 ms after the child's exit when no EOF came: destroy the read stream.
  (a.session as unknown as { pty: { _socket: { destroy(): void } } }).pty._socket.destroy();
  const b = spawn("printf 'B-READY\\n'; exec cat");
  const bFd = (b.session as unknown as { pty: { fd: number } }).pty.fd;
  assert.equal(bFd, aFd, 'precondition: B got the fd number A had (lowest free descriptor)');
  // Same turn of the loop: A's exit cannot have been reported yet.
  assert.equal(a.session.exited, undefined, 'precondition: A has not reported its exit');
  a.session.write(Buffer.from('leak-from-A\r'));
  a.session.resize(10, 20);
  await waitFor(
    () => b.text().includes('B-READY'),
    5_000,
    () => 'session B never started',
  );
  await sleep(300);
  assert.equal(b.text().includes('leak-from-A'), false, `A's keystrokes reached B: ${JSON.stringify(b.text())}`);
  b.session.write(Buffer.from('own-input\r'));
  await waitFor(
    () => b.text().includes('own-input'),
    5_000,
    () => `B does not echo its own input: ${JSON.stringify(b.text())}`,
  );
});
