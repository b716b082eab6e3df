// stop() while the pty host is still starting (spawned, handshake not done): the host it was
// starting must not outlive the stop. Before the fix stop() saw no running host and returned, and
// the start then installed a host that nobody stopped (found by review).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { StartedWorker, WorkerStarter } from '../../../supervisor/hosts/processStarter.js';
import { ProcessStarter } from '../../../supervisor/hosts/processStarter.js';
import { PtyHost } from '../../../supervisor/hosts/ptyHost.js';
import { waitFor } from '../../helpers/poll.js';

const PTY_HOST_ENTRY = new URL('../../../workers/pty/main.js', import.meta.url).pathname;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a pty host still starting when stop() is called does not outlive the stop', { timeout: 20_000 }, async (t) => {
  const real = new ProcessStarter({ entry: PTY_HOST_ENTRY });
  const started: StartedWorker[] = [];
  const starter: WorkerStarter = {
    start: () => {
      const worker = real.start();
      started.push(worker);
      return worker;
    },
  } as WorkerStarter;
  const noop = () => {};
  const host = new PtyHost(starter, { info: noop, warn: noop, error: noop });
  // Should the stop leave it behind, the test still ends it (else this test process would wait for it).
  t.after(() => {
    for (const w of started) if (alive(w.pid)) process.kill(w.pid, 'SIGKILL');
  });
  const client = host.client().catch((err: unknown) => err); // spawns the host; its handshake is in flight
  assert.equal(started.length, 1);
  await host.stop();
  await client;
  const pid = started[0]!.pid;
  await waitFor(() => !alive(pid), `pty host ${pid} gone after stop()`, 5_000);
});
