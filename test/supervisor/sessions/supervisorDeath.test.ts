/**
 * Sessions outlive a SIGKILLed tuicd in the detached pty host; `tuicd stop` then takes every session
 * down with the host, escalating to SIGKILL for a process group that ignores SIGHUP (workers/pty/main.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { isAlive } from '../../workers/proxy-stdio/pumpHarness.js';

interface ProcessRow {
  kind: string;
  pid: number;
}

test('tuicd SIGKILLed: the pty host and its sessions live on; tuicd stop ends them, one ignoring SIGHUP too', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-sdeath-'));
  const tuicd = await Tuicd.start({ configDir: dir });
  const pids: number[] = [];
  t.after(async () => {
    for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL'); // only if the test failed
    for (const pid of pids) if (isAlive(pid)) process.kill(-pid, 'SIGKILL');
    await tuicd.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const args of [
    ['-c', 'sleep 300'],
    ['-c', 'trap "" HUP; sleep 300'],
  ]) {
    const created = await tuicd.socket('POST', '/sessions', JSON.stringify({ cwd: dir, shell: '/bin/sh', args }));
    assert.equal(created.status, 201, created.text);
  }
  await waitFor(
    async () => {
      const rows = (await tuicd.socket('GET', '/process/stats')).json<ProcessRow[]>();
      pids.length = 0;
      pids.push(...rows.filter((r) => r.kind === 'pty-host' || r.kind === 'session').map((r) => r.pid));
      return pids.length === 3;
    },
    'the pty host and both sessions to be listed',
    10_000,
  );
  assert.ok(pids.every(isAlive));

  tuicd.child.kill('SIGKILL');
  await tuicd.exited;
  assert.ok(pids.every(isAlive), 'the pty host and its sessions outlive tuicd');
  const stopped = await Tuicd.runToExit(['stop', '--config-dir', dir]);
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, /pty host \(pid \d+\) stopped/);
  // The host gives sessions 1 s after SIGHUP before SIGKILL.
  await waitFor(() => !pids.some(isAlive), 'the pty host and every session to be gone', 10_000);
});
