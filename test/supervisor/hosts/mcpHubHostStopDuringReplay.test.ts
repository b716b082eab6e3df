// stop() while a restarted hub is being given the registered upstreams: nothing more is sent to it,
// and the settle gate stop() opened stays open (before the fix the replay went on, sent another
// connect and closed the gate again, so a tools/list during shutdown waited out the settle timeout).
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';

import type { UpstreamServer } from '../../../supervisor/upstreams/upstreamConfig.js';
import { startHubHost } from '../../helpers/hubHost.js';

const MOCK_JS = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;

/** The host's private parts this test watches; reached behind its back, as a crash would. */
interface Internals {
  running: { worker: Worker } | null;
  candidate: { hub: { request: (method: string, ...rest: unknown[]) => Promise<unknown> } } | null;
  start(): { hub: { request: (method: string, ...rest: unknown[]) => Promise<unknown> } };
  disposed: boolean;
}

test('stop() during a replay sends nothing more and leaves the settle gate open', { timeout: 30_000 }, async (t) => {
  const { host } = startHubHost(t, { settleTimeoutMs: 3_000 });
  const internals = host as unknown as Internals;
  const servers = Array.from({ length: 20 }, (_, i) => ({
    id: `u${i}`,
    name: `u${i}`,
    enabled: true,
    timeout_secs: 30,
    transport: { type: 'stdio', command: process.execPath, args: [MOCK_JS], env: {} },
  })) as unknown as UpstreamServer[];
  await host.boot(servers);

  // Count the connects each new hub is sent, and note any sent after stop().
  let connects = 0;
  const afterStop: string[] = [];
  const start = internals.start.bind(host);
  internals.start = () => {
    const running = start();
    const request = running.hub.request.bind(running.hub);
    running.hub.request = (method, ...rest) => {
      if (method === 'connect') {
        connects++;
        if (internals.disposed) afterStop.push((rest[0] as { server: { name: string } }).server.name);
      }
      return request(method, ...rest);
    };
    return running;
  };
  await internals.running!.worker.terminate(); // the restart replays all 20
  while (connects < 3) await tick();
  await host.stop();
  assert.deepEqual(afterStop, []);
  assert.ok(connects < servers.length, `the replay stopped (${connects} of ${servers.length} sent)`);
  assert.equal(host.settleGate(), null, 'the gate is open: a tools/list during shutdown does not wait');
});
