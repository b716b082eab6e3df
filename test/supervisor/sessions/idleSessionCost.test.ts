/**
 * What idle sessions cost the supervisor while nothing happens (issue 29: memory per idle session):
 * its start-up garbage is collected once it is quiet (`idle_collections`), and a session nobody
 * touches is not serialized again every second for the pty host's copy (`records_synced`), while a
 * change to one (a rename) still reaches the host. Counted by GET /metrics on a real tuicd with real shells.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';

import { waitFor } from '../../helpers/poll.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';

describe('idle sessions in the supervisor', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-idle-cost-');
  const metrics = async () => (await suite.t.socket('GET', '/metrics')).json<Record<string, number>>();

  it('the start-up garbage is collected once the supervisor is quiet', async () => {
    await waitFor(async () => ((await metrics())['idle_collections'] ?? 0) >= 1, 'an idle collection ran', 20_000);
  });

  it('sessions at a prompt are not serialized again while nothing happens; a rename is', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await suite.create({ args: ['-c', `printf 'ready$ '; exec sleep 600`] })).session_id);
    for (const id of ids) await waitFor(async () => JSON.stringify(await suite.raw(id)).includes('ready'), 'the prompt is out');
    // The creates' own syncs (at most RECORD_SYNC_MS after the last event) are done once the count holds for 1.5 s.
    let settled = (await metrics())['records_synced'];
    assert.equal(typeof settled, 'number', 'records_synced is counted');
    for (let tries = 0; ; tries++) {
      await sleep(1_500);
      const now = (await metrics())['records_synced'];
      if (now === settled) break;
      assert.ok(tries < 10, `records still being synced: ${settled} -> ${now}`);
      settled = now;
    }
    await sleep(3_000);
    assert.equal((await metrics())['records_synced'], settled, 'three idle sessions over 3 s: nothing serialized');
    const renamed = await suite.t.socket('PUT', `/sessions/${ids[0]}/name`, JSON.stringify({ name: 'renamed' }));
    assert.equal(renamed.status, 200, renamed.text);
    await waitFor(async () => ((await metrics())['records_synced'] ?? 0) > settled!, 'the renamed record was synced');
  });

  it('a session printing steadily is not serialized again for its output (it changes only fields the host copy leaves out)', async () => {
    const id = (await suite.create({ args: ['-c', 'while :; do echo tick; sleep 0.05; done'] })).session_id;
    await waitFor(async () => JSON.stringify(await suite.raw(id)).includes('tick'), 'the output flows');
    await sleep(1_500); // the create's own sync
    const before = (await metrics())['records_synced']!;
    await sleep(3_000);
    const after = (await metrics())['records_synced']!;
    // About 60 outputs in 3 s; the only sync left is the foreground's reclassification, every 10 s at most.
    assert.ok(after - before <= 1, `records synced during 3 s of output: ${after - before}`);
  });
});
