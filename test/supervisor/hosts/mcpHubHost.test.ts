/**
 * McpHubHost with the real hub worker and a real stdio upstream, in-process: the pushed list, the
 * gate, dispatch, and what happens when the hub thread dies (restart and replay of every upstream).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';

import { CancelSource } from '../../../shared/cancellation.js';
import { RawToolResult, toCallToolResult } from '../../../shared/mcpEnvelope.js';
import type { UpstreamServer } from '../../../supervisor/upstreams/upstreamConfig.js';
import { startHubHost } from '../../helpers/hubHost.js';
import { waitFor } from '../../helpers/poll.js';
import { processAlive } from '../../helpers/upstreamServers.js';

const MOCK_JS = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;
const SLOW_JS = new URL('../../fixtures/upstreams/slowHandshake.js', import.meta.url).pathname;

function mock(name: string): UpstreamServer {
  return {
    id: randomUUID(),
    name,
    transport: { type: 'stdio', command: process.execPath, args: [MOCK_JS, 'normal'], env: {} },
    enabled: true,
    timeout_secs: 10,
  };
}

test('the hub host serves the pushed list, dispatches, and survives its worker dying (restart + replay)', async (t) => {
  const { lines, host } = startHubHost(t);
  let changes = 0;
  host.onChanged(() => changes++);

  await host.boot([mock('alpha')]);
  const gate = host.settleGate();
  if (gate) await gate;
  assert.match(host.listFragment(), /"name":"alpha__echo"/);
  assert.ok(host.definitions().some((d) => d.name === 'alpha__whoami'));
  assert.ok(changes >= 1);

  const result = await host.call('alpha', 'echo', { text: 'hello hub' });
  assert.ok(result instanceof RawToolResult, 'proxied results stay raw JSON');
  assert.match(toCallToolResult(result).content[0]!['text'] as string, /hello hub/);
  const firstPid = (await host.status())[0]!.pid!;

  // Kill the hub thread behind the host's back: it must restart it and register alpha again.
  await (host as unknown as { running: { worker: { terminate(): Promise<number> } } }).running.worker.terminate();
  await waitFor(
    async () => {
      const rows = await host.status().catch(() => []);
      return rows.some((r) => r.name === 'alpha' && r.status === 'ready' && r.pid !== firstPid) && host.listFragment().includes('alpha__echo');
    },
    'the restarted hub lists alpha again',
    15_000,
  );
  assert.ok(
    lines.some((l) => /hub worker exited; restarting/.test(l)),
    lines.join('\n'),
  );
  const again = toCallToolResult(await host.call('alpha', 'echo', { text: 'after restart' }));
  assert.match(again.content[0]!['text'] as string, /after restart/);

  const pid = (await host.status())[0]!.pid!;
  await host.stop();
  await waitFor(() => !processAlive(pid), 'the upstream process is gone after stop', 5_000);
  const afterStop = toCallToolResult(await host.call('alpha', 'echo', {}));
  assert.equal(afterStop.isError, true);
});

test('applyPlan connects, reconnects and disconnects; unknown reconnect is UpstreamNotFoundError', async (t) => {
  const { bus, host } = startHubHost(t);
  const published: Array<{ name: string; status: string }> = [];
  bus.on('upstream-status-changed', (_name, payload) => published.push({ ...payload }));
  await host.boot([]);
  assert.equal(host.settleGate(), null, 'no upstreams: the gate is open at once');
  const a = mock('a');
  await host.applyPlan({ connect: [a], disconnect: [], reconnect: [] });
  // A connect after boot re-arms the gate: the next list waits for this handshake.
  const gate = host.settleGate();
  assert.ok(gate, 're-armed');
  await gate;
  assert.match(host.listFragment(), /a__echo/);
  const b = { ...a, name: 'b' };
  await host.applyPlan({ connect: [], disconnect: [], reconnect: [{ before: a, after: b, clearStoredAuth: false }] });
  await waitFor(() => host.listFragment().includes('b__echo') && !host.listFragment().includes('a__echo'), 'renamed upstream listed', 15_000);
  await host.applyPlan({ connect: [], disconnect: [b], reconnect: [] });
  await waitFor(() => host.listFragment() === '', 'removed upstream unlisted', 15_000);
  await assert.rejects(host.reconnect('b'), /Upstream 'b' not found/);
  assert.ok(published.some((p) => p.name === 'b' && p.status === 'disconnected'));
  assert.ok(published.some((p) => p.name === 'a' && p.status === 'ready'));
});

test('a proxied call cancelled by its caller ends in the hub at once; the upstream keeps serving, no breaker failure', async (t) => {
  const { host } = startHubHost(t);
  await host.boot([mock('alpha')]);
  const gate = host.settleGate();
  if (gate) await gate;
  const row = async () => (await host.status()).find((r) => r.name === 'alpha')!;
  const pid = (await row()).pid;

  const caller = new CancelSource();
  const started = Date.now();
  const pending = host.call('alpha', 'sleep', { ms: 20_000, text: 'late' }, caller);
  await waitFor(async () => (await row()).metrics.call_count === 1, 'the call reached the hub', 10_000);
  caller.cancel(new Error('client went away'));
  const outcome = toCallToolResult(await pending);
  assert.equal(outcome.isError, true);
  assert.match(outcome.content[0]!['text'] as string, /cancelled: client went away/);
  // The hub's own call ended too (an error, counted), long before the upstream's 20 s answer.
  await waitFor(async () => (await row()).metrics.error_count === 1, "the hub's call ended", 10_000);
  assert.ok(Date.now() - started < 15_000);
  const after = await row();
  assert.equal(after.status, 'ready');
  assert.equal(after.last_error, null, 'a cancel is not an upstream failure');
  assert.equal(after.pid, pid, 'the upstream was not torn down');
  assert.match(toCallToolResult(await host.call('alpha', 'echo', { text: 'still here' })).content[0]!['text'] as string, /still here/);
});

/*
 * Connecting a new upstream after boot re-arms the settle gate, and POST /mcp/upstreams/reconnect
 * (status `connecting`, then disconnect and reconnect) is a disconnect plus a connect, the connect
 * re-arming the gate for an enabled upstream. So the next tools/list after a manual reconnect
 * waits for its handshake instead of serving a list without it.
 */
test('a manual reconnect re-arms the settle gate: the next list waits for the handshake; a disabled upstream does not arm it', async (t) => {
  // A long gate (test knob): a loaded box may take over 3 s to respawn the upstream.
  const { host } = startHubHost(t, { settleTimeoutMs: 30_000 });
  const slow: UpstreamServer = {
    id: randomUUID(),
    name: 'slow',
    transport: { type: 'stdio', command: process.execPath, args: [SLOW_JS, '700'], env: {} },
    enabled: true,
    timeout_secs: 10,
  };
  const off: UpstreamServer = { ...mock('off'), enabled: false };
  await host.boot([slow, off]);
  const boot = host.settleGate();
  if (boot) await boot;
  assert.match(host.listFragment(), /"name":"slow__ping"/);
  assert.equal(host.settleGate(), null, 'latched open after boot');

  await host.reconnect('slow');
  const gate = host.settleGate();
  assert.ok(gate, 'the reconnect re-armed the gate');
  await gate;
  assert.match(host.listFragment(), /"name":"slow__ping"/, 'the list served after the gate holds the reconnected upstream');
  assert.equal(host.settleGate(), null, 'and it latches open again');

  await host.reconnect('off');
  assert.equal(host.settleGate(), null, 'a disabled upstream has no handshake to wait for');
});
