/**
 * Kill edge cases: a closing kill reaches everything in the session's process group even when the
 * shell itself dies at once and a job ignores SIGHUP; a signal that does not close the session
 * (SIGINT, SIGWINCH...) leaves a user pause in place; a hang-up the shell lost is sent again well
 * before the SIGKILL.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { liveGroupMembers, type PtyHostHandle, sleep, startPtyHost, waitFor } from './ptyHostHarness.js';

describe('pty host: kill', () => {
  let host: PtyHostHandle;
  before(async () => {
    host = await startPtyHost();
  });
  after(() => host.stop());

  test('a job ignoring SIGHUP in the group is SIGKILLed after the grace, though the shell died at once', async () => {
    // Non-interactive sh: the background job stays in the shell's group, ignores HUP (kept across exec).
    const { id, pid } = await host.spawnSession({ args: ['-c', "(trap '' HUP; echo ready; exec sleep 1000) & wait"] });
    await host.waitForText(id, 'ready');
    assert.equal(liveGroupMembers(pid).length, 2, 'sh and the job');
    try {
      await host.client.request('kill', { session_id: id });
      const exit = await host.waitForExit(id);
      assert.equal(exit.signal, 1, 'the shell itself went on SIGHUP');
      await waitFor(
        () => liveGroupMembers(pid).length === 0,
        6_000,
        () => `still alive in the session's group after the kill grace: ${liveGroupMembers(pid).join(',')}`,
      );
    } finally {
      for (const member of liveGroupMembers(pid)) process.kill(member, 'SIGKILL');
    }
  });

  test('a shell that survives the first SIGHUP dies of the repeated one, not of the SIGKILL', async () => {
    // Stands in for bash losing a hang-up that lands while readline handles a Ctrl-C: the trap
    // swallows the first HUP and restores the default, so only a second HUP ends the shell.
    const { id } = await host.spawnSession({ args: ['-c', "trap 'trap - HUP; echo first-hup' HUP; echo ready; while :; do sleep 0.05; done"] });
    await host.waitForText(id, 'ready');
    await host.client.request('kill', { session_id: id });
    const exit = await host.waitForExit(id);
    assert.match(host.record(id).text, /first-hup/, 'the first hang-up reached the trap');
    assert.equal(exit.signal, 1, `ended by ${exit.signal}: 9 means no second SIGHUP came before the kill grace ran out`);
  });

  test('a non-closing signal (SIGINT to a shell that traps it) does not undo a pause', async () => {
    const { id } = await host.spawnSession({
      args: ['-c', "trap 'echo got-int' INT; i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); sleep 0.005; done"],
    });
    const r = host.record(id);
    await host.waitForText(id, 'line20\r\n');
    await host.client.request('pause', { session_id: id });
    await sleep(200); // a batch already read may still be on its way
    const before = r.bytes.length;
    await host.client.request('kill', { session_id: id, signal: 'SIGINT' });
    await sleep(500);
    assert.equal(r.bytes.length, before, `output flowed while paused: ${JSON.stringify(r.text.slice(before, before + 60))}`);
    await host.client.request('kill', { session_id: id, signal: 'SIGKILL' });
    await host.waitForExit(id);
  });
});
