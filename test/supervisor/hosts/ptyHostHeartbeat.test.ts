// A wedged pty host (alive, not answering: SIGSTOP) is found by the heartbeat and killed once,
// with one ping in flight at a time; then the next client() starts a fresh host.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { ProcessStarter } from '../../../supervisor/hosts/processStarter.js';
import { PtyHost } from '../../../supervisor/hosts/ptyHost.js';

const PTY_HOST_ENTRY = new URL('../../../workers/pty/main.js', import.meta.url).pathname;

test('a SIGSTOPped pty host is killed once after the heartbeat timeout, and a new one serves', { timeout: 20_000 }, async () => {
  const errors: string[] = [];
  const log = { info() {}, warn() {}, error: (_obj: object, msg: string) => void errors.push(msg) };
  // Pings every 50 ms, a 600 ms timeout: a dozen intervals pass while the first ping waits.
  const host = new PtyHost(new ProcessStarter({ entry: PTY_HOST_ENTRY }), log, { heartbeatIntervalMs: 50, heartbeatTimeoutMs: 600 });
  after(() => host.stop());
  await host.client();
  const wedged = host.pid!;
  const exited = new Promise<{ pid: number; signal: string | null }>((resolve) => host.onHostExited(resolve));
  process.kill(wedged, 'SIGSTOP');
  try {
    const info = await exited;
    assert.equal(info.pid, wedged);
    assert.equal(info.signal, 'SIGKILL');
  } finally {
    try {
      process.kill(wedged, 'SIGCONT');
    } catch {
      // Already gone, as it should be.
    }
  }
  await sleep(200); // pings that were still pending would fail now, when the channel closed
  assert.equal(errors.filter((m) => m.includes('missed its heartbeat')).length, 1, `logged: ${JSON.stringify(errors)}`);
  await host.client();
  assert.notEqual(host.pid, wedged, 'a fresh host serves after the wedged one was killed');
});
