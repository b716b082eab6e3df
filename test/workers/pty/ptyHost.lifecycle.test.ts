/**
 * The pty host's own life in the attached mode (fd 3): when the supervisor's side of the socket goes
 * away (or SIGTERM comes), every session dies with it. The listening mode's are in ptyHost.detached.test.ts.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { liveGroupMembers, type PtyHostHandle, startPtyHost, waitFor } from './ptyHostHarness.js';

/** SIGHUP, a 1 s grace, SIGKILL, exit: well inside this. */
const HOST_EXIT_MS = 5_000;

async function spawnVictims(host: PtyHostHandle): Promise<number[]> {
  const plain = await host.spawnSession({ args: ['-c', 'echo up; sleep 1000; true'] });
  const stubborn = await host.spawnSession({ args: ['-c', "trap '' HUP TERM; echo up; sleep 1000; true"] });
  const bash = await host.spawnSession({ shell: 'bash', args: ['--norc', '--noprofile', '-i'] });
  await host.waitForText(plain.id, 'up');
  await host.waitForText(stubborn.id, 'up');
  await host.waitForText(bash.id, '$ ');
  const pids = [plain.pid, stubborn.pid, bash.pid];
  // sh and its sleep share the group the host will signal.
  assert.ok(liveGroupMembers(plain.pid).length >= 2, 'expected sh and sleep in the group');
  return pids;
}

async function assertAllGone(pids: number[]): Promise<void> {
  await waitFor(
    () => pids.every((pid) => liveGroupMembers(pid).length === 0),
    3_000,
    () => `still alive: ${pids.map((pid) => `${pid}: [${liveGroupMembers(pid).join(',')}]`).join('; ')}`,
  );
}

describe('pty host lifecycle', () => {
  test('the supervisor closing the socket makes the host kill every session (even one ignoring SIGHUP) and exit', async (t) => {
    const host = await startPtyHost({ mode: 'attached' });
    t.after(() => host.stop());
    const pids = await spawnVictims(host);
    const started = Date.now();
    host.client.dispose(); // what a dying supervisor looks like from the host: EOF on fd 3
    const [code, signal] = (await Promise.race([host.exited, timeout(HOST_EXIT_MS)])) as [number | null, string | null];
    assert.deepEqual([code, signal], [0, null], 'the host exits by itself, cleanly');
    assert.ok(Date.now() - started < HOST_EXIT_MS);
    await assertAllGone(pids);
  });

  test('SIGTERM to the host does the same', async (t) => {
    const host = await startPtyHost({ mode: 'attached' });
    t.after(() => host.stop());
    const pids = await spawnVictims(host);
    host.child.kill('SIGTERM');
    const [code] = (await Promise.race([host.exited, timeout(HOST_EXIT_MS)])) as [number | null];
    assert.equal(code, 0);
    await assertAllGone(pids);
  });
});

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`no exit within ${ms} ms`)), ms).unref());
}
