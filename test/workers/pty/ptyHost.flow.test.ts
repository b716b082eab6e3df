/**
 * Flow control between the pty host and the supervisor (PtyConstants.UNACKED_OUTPUT_BYTES): output
 * the supervisor has not acknowledged holds the session (the child blocks on its PTY), nothing is
 * lost, and acknowledging lets it finish byte-exact; a user pause and the hold compose.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { type PtyHostHandle, sleep, startPtyHost, waitFor } from './ptyHostHarness.js';

const WINDOW = PtyConstants.UNACKED_OUTPUT_BYTES;
/** Past the window the host may still send the batch in progress and what the kernel had buffered. */
const SLACK = 2 * PtyConstants.CATCH_UP_CHUNK_BYTES + 256 * 1024;
const FLOOD_BYTES = 12_000_000;
const flood = `head -c ${FLOOD_BYTES} /dev/zero | tr '\\0' a; printf '\\nflood-done\\n'`;

/** Resolves once the session's received byte count has not moved for `quietMs`; returns it. */
async function settled(host: PtyHostHandle, id: string, quietMs = 400): Promise<number> {
  let last = -1;
  for (;;) {
    const now = host.record(id).bytes.length;
    if (now === last) return now;
    last = now;
    await sleep(quietMs);
  }
}

describe('pty host: flow control towards the supervisor', () => {
  let host: PtyHostHandle;
  before(async () => {
    host = await startPtyHost();
  });
  after(() => host.stop());

  test('unacknowledged output holds the session near the window; acknowledging lets it finish byte-exact', async () => {
    host.setAcking(false);
    const { id } = await host.spawnSession({ args: ['-c', flood] });
    await waitFor(
      () => host.record(id).bytes.length > WINDOW,
      20_000,
      () => `only ${host.record(id).bytes.length} bytes arrived`,
    );
    const held = await settled(host, id);
    assert.ok(held <= WINDOW + SLACK, `${held} bytes sent with ${WINDOW} unacknowledged allowed`);
    assert.equal(host.record(id).exit, undefined, 'the child waits on its PTY, it is not killed');

    host.setAcking(true);
    await host.waitForExit(id, 60_000);
    const record = host.record(id);
    assert.equal(record.contiguousLength(), record.exit!.total_written);
    const text = record.text;
    assert.equal(text.indexOf('flood-done'), FLOOD_BYTES + 2, 'every byte, in order, then the marker');
    assert.match(text.slice(0, FLOOD_BYTES), /^a+$/);
  });

  test('a user pause outlasts the flow-control hold, and the hold outlasts a resume', async () => {
    host.setAcking(false);
    const { id } = await host.spawnSession({ args: ['-c', flood] });
    await waitFor(
      () => host.record(id).bytes.length > WINDOW,
      20_000,
      () => 'the window to fill',
    );
    const held = await settled(host, id);
    await host.client.request('pause', { session_id: id });
    host.setAcking(true);
    assert.equal(await settled(host, id), held, 'acknowledged but paused: still held');
    host.setAcking(false);
    await host.client.request('resume', { session_id: id });
    const resumed = await settled(host, id);
    assert.ok(resumed > held && resumed <= held + WINDOW + SLACK, `resumed to ${resumed} from ${held}: one more window, then held again`);
    assert.equal(host.record(id).exit, undefined);
    host.setAcking(true);
    await host.waitForExit(id, 60_000);
    assert.equal(host.record(id).text.indexOf('flood-done'), FLOOD_BYTES + 2);
  });
});
