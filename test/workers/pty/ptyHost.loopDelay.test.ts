/**
 * The pty host reports its own event-loop delay (the `loopDelay` request behind /metrics'
 * pty_host_event_loop_delay_p99_ms): near zero while it idles, and large once its loop is held up
 * (here by stopping the process repeatedly with SIGSTOP, as a long GC or a blocking read would).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { type PtyHostHandle, sleep, startPtyHost } from './ptyHostHarness.js';

let host: PtyHostHandle;
before(async () => {
  host = await startPtyHost();
});
after(() => host?.stop());

test('idle, the delay is small; a loop held for 100 ms at a time shows in the p99', async () => {
  await sleep(500);
  const idle = await host.client.request('loopDelay', {});
  assert.ok(idle.p99_ms >= 0 && idle.p99_ms < 50, `idle p99 ${idle.p99_ms} ms`);
  const pid = host.child.pid!;
  for (let i = 0; i < 12; i++) {
    process.kill(pid, 'SIGSTOP');
    await sleep(100);
    process.kill(pid, 'SIGCONT');
    await sleep(60);
  }
  const held = await host.client.request('loopDelay', {});
  assert.ok(held.p99_ms >= 50, `held p99 ${held.p99_ms} ms`);
});
