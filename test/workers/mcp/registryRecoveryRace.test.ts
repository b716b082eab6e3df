// A recovery probe must not restart a stdio child that a call already brought back: the real
// registry, the real stdio client and the mock upstream fixture. Before the fix the pending
// recovery handshake shut the live child down under a long call ("shut down while 'tools/call'
// was pending"). Since a dead child is seen at once (issue 26 item 9) the respawn no longer waits
// for a failed health check; what is checked now: a crash inside the respawn limit, a long call in
// that gap waiting for the respawn, and health ticks during the call, leave the new child alone.
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
/** The retry floor for stdio: a recovery probe would come this long after a failure, while the call below runs. */
const STDIO_RETRY_MS = 6_000;

test('a call made while a dead stdio child is respawned runs on the new child to the end: no probe or handshake cuts it off; ready again', {
  timeout: 45_000,
}, async (t) => {
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
  const healthTick = () => (registry as unknown as { runHealthChecks(): Promise<void> }).runHealthChecks();
  // Past the pump's respawn limit (5 s), so the first crash below is respawned at once.
  await sleep(5_200);
  const first = row().pid!;
  process.kill(first, 'SIGKILL');
  await waitFor(() => row().pid !== null && row().pid !== first && row().status === 'ready', 'respawned once', 5_000);
  await sleep(300);
  // The second crash, inside the limit: out of ready at once, the respawn waits out the limit.
  process.kill(row().pid!, 'SIGKILL');
  await waitFor(() => row().status === 'connecting', 'connecting', 2_000);
  await healthTick();
  // A long call in the gap waits for the respawn, then runs while health ticks come and the retry
  // delay (6 s) passes: none of them may restart the child under it.
  const call = registry.call('m', 'sleep', { ms: STDIO_RETRY_MS + 3_000, text: 'done' });
  await waitFor(() => row().status === 'ready', 'respawned again', RESPAWN_LIMIT_MS + 5_000);
  const respawned = row().pid;
  for (let i = 0; i < 3; i++) {
    await sleep(2_000);
    await healthTick();
    assert.equal(row().pid, respawned, 'the child under the call was left alone');
  }
  const result = await call;
  assert.deepEqual(JSON.parse(result.json), { content: [{ type: 'text', text: 'done' }] });
  assert.equal(row().pid, respawned);
  await waitFor(() => row().status === 'ready', 'ready', 5_000);
});
