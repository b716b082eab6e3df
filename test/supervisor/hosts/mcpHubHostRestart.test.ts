// McpHubHost with the real hub worker and real server-everything stdio upstreams: a hub that dies
// again while the upstreams are being replayed into it loses none of them; one that closes its
// channel is replaced; past the restart budget requests are refused with retry_after_s (a save is
// kept), and the hub starts again by itself with every upstream once the window allows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { toCallToolResult } from '../../../shared/mcpEnvelope.js';
import type { McpHubHost } from '../../../supervisor/hosts/mcpHubHost.js';
import type { UpstreamServer } from '../../../supervisor/upstreams/upstreamConfig.js';
import { startHubHost } from '../../helpers/hubHost.js';
import { until, waitFor } from '../../helpers/poll.js';
import { everythingStdio } from '../../helpers/upstreamServers.js';

const upstream = (name: string) => everythingStdio(name) as unknown as UpstreamServer;

interface Internals {
  running: { worker: Worker } | null;
  start(): { worker: Worker };
}
const internals = (host: McpHubHost) => host as unknown as Internals;

function hubWorker(host: McpHubHost): Worker {
  const worker = internals(host).running?.worker;
  assert.ok(worker, 'a hub thread is running');
  return worker;
}

const readyPids = async (host: McpHubHost) => Object.fromEntries((await host.status()).filter((r) => r.status === 'ready').map((r) => [r.name, r.pid]));

const echo = async (host: McpHubHost, name: string, text: string) =>
  toCallToolResult(await host.call(name, 'echo', { message: text })).content[0]!['text'] as string;

test('a hub that dies again while the upstreams are replayed into it loses none of them', { timeout: 25_000 }, async (t) => {
  const { lines, host } = startHubHost(t);
  await host.boot([upstream('alpha'), upstream('beta')]);
  const first = await until(
    () => readyPids(host),
    (p) => p['alpha'] !== undefined && p['beta'] !== undefined,
    'alpha and beta ready',
    15_000,
  );

  // The next hub started dies at once, while alpha's and beta's connects are on their way to it.
  const self = internals(host);
  const start = self.start.bind(host);
  let doomed = 1;
  self.start = () => {
    const running = start();
    if (doomed-- > 0) void running.worker.terminate();
    return running;
  };
  await hubWorker(host).terminate();

  await until(
    () => readyPids(host),
    (p) => p['alpha'] !== undefined && p['alpha'] !== first['alpha'] && p['beta'] !== undefined && p['beta'] !== first['beta'],
    'alpha and beta ready on a restarted hub',
    15_000,
  );
  assert.equal(doomed, -1, 'the doomed hub was started and a further one after it');
  assert.match(await echo(host, 'alpha', 'alpha back'), /alpha back/);
  assert.match(await echo(host, 'beta', 'beta back'), /beta back/);
  assert.ok(
    lines.some((l) => /hub worker exited; restarting/.test(l)),
    lines.join('\n'),
  );
});

test('a hub that closes its channel (a frame it cannot read) is replaced, with its upstream', { timeout: 20_000 }, async (t) => {
  const { host } = startHubHost(t);
  await host.boot([upstream('alpha')]);
  const first = await until(
    () => readyPids(host),
    (p) => p['alpha'] !== undefined,
    'alpha ready',
    15_000,
  );
  // Not a channel frame: the hub closes the link, then its thread exits on its own (code 0).
  hubWorker(host).postMessage('not a channel frame');
  await until(
    () => readyPids(host),
    (p) => p['alpha'] !== undefined && p['alpha'] !== first['alpha'],
    'alpha ready on the new hub',
    15_000,
  );
  assert.match(await echo(host, 'alpha', 'still served'), /still served/);
});

test('past the restart budget: status refused with retry_after_s, calls and saves say when; then the hub starts by itself with every upstream', {
  timeout: 40_000,
}, async (t) => {
  // The window must outlast boot plus one restart on a loaded 2-core machine (4 s did not, once in four runs).
  const { lines, host } = startHubHost(t, { restartBudget: 2, restartWindowMs: 8_000 });
  await host.boot([upstream('alpha')]); // start 1
  const firstWorker = hubWorker(host);
  await firstWorker.terminate();
  await waitFor(() => internals(host).running !== null && internals(host).running!.worker !== firstWorker, 'restarted (start 2)');
  await hubWorker(host).terminate(); // no start left in the window

  const refusal = await host.status().then(
    () => assert.fail('status answered while the hub is past its budget'),
    (err: unknown) => err,
  );
  assert.ok(refusal instanceof SupervisorError && refusal.code === ErrorCode.WORKER_EXITED, String(refusal));
  const retryAfterS = (refusal.data as { retry_after_s?: unknown }).retry_after_s;
  assert.ok(typeof retryAfterS === 'number' && Number.isInteger(retryAfterS) && retryAfterS >= 1, `retry_after_s ${String(retryAfterS)}`);
  assert.match(refusal.message, /starts again in \d+s with every saved upstream/);

  const call = toCallToolResult(await host.call('alpha', 'echo', { message: 'x' }));
  assert.equal(call.isError, true);
  assert.match(call.content[0]!['text'] as string, /Upstream 'alpha' call to 'echo' failed: .*starts again in \d+s/);

  // A save while it is down is refused for now but kept: the next hub gets it.
  await assert.rejects(
    host.applyPlan({ connect: [upstream('beta')], disconnect: [], reconnect: [] }),
    (err: unknown) => err instanceof SupervisorError && err.code === ErrorCode.WORKER_EXITED,
  );
  assert.ok(
    lines.some((l) => /restart budget exhausted/.test(l)),
    lines.join('\n'),
  );

  // Nothing asks it to: the hub comes back once the window allows, with alpha and beta.
  await waitFor(
    () => host.listFragment().includes('"alpha__echo"') && host.listFragment().includes('"beta__echo"'),
    'alpha and beta listed by the hub that started by itself',
    20_000,
  );
  assert.match(await echo(host, 'beta', 'beta was kept'), /beta was kept/);
  assert.match(await echo(host, 'alpha', 'alpha too'), /alpha too/);
});
