/**
 * apply_config_diff disconnects every removed or changed upstream before it connects any: a save
 * that swaps two upstreams' names (or hands one's old name to another) must bring both up under
 * their new names. Real hub worker, real stdio upstreams, the real store's plan.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { EventBus } from '../../../supervisor/events/eventBus.js';
import { McpHubHost } from '../../../supervisor/hosts/mcpHubHost.js';
import { UpstreamStore } from '../../../supervisor/upstreams/upstreamStore.js';
import { waitFor } from '../../helpers/poll.js';
import { processAlive } from '../../helpers/upstreamServers.js';

const MOCK_JS = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;

const mock = (id: string, name: string) => ({
  id,
  name,
  transport: { type: 'stdio', command: process.execPath, args: [MOCK_JS, 'normal'], env: {} },
  enabled: true,
  timeout_secs: 10,
});

test('a save that swaps two upstream names reconnects both under their new names', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-review-swap-'));
  const bus = new EventBus();
  const noop = () => {};
  const host = new McpHubHost({ version: 'test', bus, log: { info: noop, warn: noop, error: noop }, credential: async () => null, ownPort: () => null });
  t.after(async () => {
    await host.stop();
    bus.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = new UpstreamStore({ configDir: dir, credentials: () => null });
  await store.load();
  const apply = { ownPort: 1, applyPlan: (plan: Parameters<McpHubHost['applyPlan']>[0]) => host.applyPlan(plan) };

  const first = { servers: [mock('id-1', 'left'), mock('id-2', 'right')] };
  await host.boot([]);
  await store.save({ servers: [] }, first, apply);
  await waitFor(async () => (await host.status()).filter((r) => r.status === 'ready').length === 2, 'both upstreams ready', 15_000);
  const oldPids = (await host.status()).map((r) => r.pid!);

  const swapped = { servers: [mock('id-1', 'right'), mock('id-2', 'left')] };
  await store.save(first, swapped, apply);
  await waitFor(
    async () => {
      const rows = await host.status();
      return rows.length === 2 && rows.every((r) => r.status === 'ready' && !oldPids.includes(r.pid!));
    },
    'both renamed upstreams ready with new processes',
    15_000,
  );
  assert.deepEqual((await host.status()).map((r) => r.name).sort(), ['left', 'right']);
  await waitFor(() => oldPids.every((pid) => !processAlive(pid)), 'the old processes are gone', 10_000);
});
