/**
 * The group reaper (workers/proxy-stdio/groupReaper.ts) with real process groups: what is still
 * watched when its list ends is killed, a released group is left alone, and the reaper exits.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import { GroupReaper } from '../../../workers/proxy-stdio/groupReaper.js';
import { waitFor } from '../../helpers/poll.js';
import { isAlive } from './pumpHarness.js';

/** A `sleep` leading its own process group (detached: setsid), as an upstream child does. */
function group(t: { after: (fn: () => void) => void }): number {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  child.unref();
  const pid = child.pid!;
  t.after(() => {
    if (isAlive(pid)) process.kill(-pid, 'SIGKILL');
  });
  return pid;
}

test('at the end of its list the reaper kills the groups still watched, not the released ones, and exits', async (t) => {
  const reaper = new GroupReaper();
  const watched = group(t);
  const released = group(t);
  reaper.watch(watched);
  reaper.watch(released);
  reaper.release(released);
  const reaperPid = reaper.pid!;
  assert.ok(isAlive(reaperPid));
  reaper.close();
  await waitFor(() => !isAlive(watched), 'the watched group to be killed', 5_000);
  await waitFor(() => !isAlive(reaperPid), 'the reaper to exit', 5_000);
  assert.equal(isAlive(released), true, 'a released group is never signalled');
});
