/**
 * A pid read from a pty host's state file is only signalled while it still is that host: pids are
 * reused (pid_max is 32768 on many machines, and a test run starts thousands of processes), and a
 * stale file once named a pid that by then was another process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import { isHostOf } from '../../../supervisor/hosts/ptyHostState.js';

function started(args: string[]): Promise<{ pid: number; stop(): void }> {
  const child = spawn(args[0]!, args.slice(1), { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => resolve({ pid: child.pid!, stop: () => child.kill('SIGKILL') }));
  });
}

test('only a process running a pty host with that state file counts', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async () => {
  const state = '/tmp/tuicd-isHostOf/pty-host.json';
  // The command line a detached host has: node <dist>/workers/pty/main.js --listen … --state <file>.
  const host = await started([
    process.execPath,
    '-e',
    'setTimeout(() => {}, 30000)',
    '/x/dist/workers/pty/main.js',
    '--listen',
    '/tmp/s.sock',
    '--state',
    state,
  ]);
  const other = await started(['sleep', '30']);
  try {
    assert.equal(isHostOf(host.pid, state), true);
    assert.equal(isHostOf(host.pid, '/tmp/other-dir/pty-host.json'), false, "another config dir's host");
    assert.equal(isHostOf(other.pid, state), false, 'a process that took the pid');
    assert.equal(isHostOf(process.pid, state), false);
  } finally {
    host.stop();
    other.stop();
  }
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(isHostOf(host.pid, state), false, 'gone');
});
