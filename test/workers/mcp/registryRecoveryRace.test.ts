// A recovery probe must not restart a stdio child that a call already brought back: the real
// registry, the real stdio client (which restarts a dead child on its own for a call) and the
// mock upstream fixture. Before the fix the pending recovery handshake shut the live child down
// under a long call ("shut down while 'tools/call' was pending").
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';

import type { UpstreamServerWire } from '../../../shared/protocol/upstreamServer.js';
import { UpstreamRegistry } from '../../../workers/mcp/registry.js';
import { StdioUpstream } from '../../../workers/mcp/stdioUpstream.js';
import { waitFor } from '../../helpers/poll.js';

const MOCK_JS = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;
/** The pump refuses a respawn sooner than this after the last one (workers/proxy-stdio). */
const RESPAWN_LIMIT_MS = 5_000;
/** The recovery probe comes this long after the failed check: after the call below has started. */
const STDIO_RETRY_MS = 6_000;

test('a call that restarted a dead stdio child is not cut off by the recovery probe; the upstream is ready again', { timeout: 45_000 }, async (t) => {
  const statuses: string[] = [];
  const registry = new UpstreamRegistry({
    createClient: (server) => new StdioUpstream({ server, version: '0', log: () => {} }),
    events: { status: (_name, status) => void statuses.push(status), toolsChanged: () => {}, log: () => {} },
    healthIntervalMs: 3_600_000, // checks run only when the test asks
    minRetryMs: { http: 1_000, stdio: STDIO_RETRY_MS },
  });
  t.after(() => registry.dispose());
  const server = {
    id: 'm',
    name: 'm',
    enabled: true,
    timeout_secs: 60,
    transport: { type: 'stdio', command: process.execPath, args: [MOCK_JS, 'normal'], env: {} },
  } as unknown as UpstreamServerWire;
  registry.connect(server, null);
  const row = () => registry.statusRows()[0]!;
  await waitFor(() => row().status === 'ready', 'ready', 15_000);
  // Past the pump's respawn limit (5 s), so the first crash below is respawned by the client itself.
  await sleep(5_200);
  process.kill(row().pid!, 'SIGKILL');
  await waitFor(() => row().pid !== null && row().status === 'ready', 'respawned once', 5_000);
  await sleep(300);
  // The second crash, inside the limit: not respawned, so the health check fails.
  process.kill(row().pid!, 'SIGKILL');
  await sleep(300);
  await (registry as unknown as { runHealthChecks(): Promise<void> }).runHealthChecks();
  assert.equal(row().status, 'circuit_open');
  // A call once the respawn limit allows (the last spawn was before the check) and before the
  // recovery probe: it restarts the child itself, and it is still running when the probe comes
  // (before the fix: a refused handshake, then a second one 6 s later that killed the child).
  await sleep(RESPAWN_LIMIT_MS + 200);
  const result = await registry.call('m', 'sleep', { ms: 2 * STDIO_RETRY_MS - RESPAWN_LIMIT_MS + 3_000, text: 'done' });
  assert.deepEqual(JSON.parse(result.json), { content: [{ type: 'text', text: 'done' }] });
  await waitFor(() => row().status === 'ready', 'ready again', 5_000);
});
