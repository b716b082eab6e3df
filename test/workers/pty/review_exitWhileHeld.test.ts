/**
 * A child that writes and exits while its session is not being read (user pause, or the flow-control
 * hold while the supervisor lags): the bytes it left in the PTY must still reach the ring and the data
 * events once reading resumes or the exit is reported, never be dropped with the PTY.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { type PtyHostHandle, sleep, startPtyHost, waitFor } from './ptyHostHarness.js';

describe('pty host: output written just before an exit while not reading', () => {
  let host: PtyHostHandle;
  before(async () => {
    host = await startPtyHost();
  });
  after(() => host.stop());

  test('paused: `printf` then `exit 3` while paused arrives whole, then the exit', async () => {
    // The child waits for the pause, writes less than the PTY buffer (it never blocks) and exits.
    const { id } = await host.spawnSession({ args: ['-c', "read go; printf 'tail-%05d\\n' $(seq 1 300); exit 3"] });
    await host.client.request('pause', { session_id: id });
    await writeRaw(host, id, 'go\r');
    await sleep(800); // well past node-pty's 200 ms wait for the read side to close
    await host.client.request('resume', { session_id: id });
    const exit = await host.waitForExit(id);
    assert.equal(exit.exit_code, 3);
    const r = host.record(id);
    const expected = Array.from({ length: 300 }, (_, i) => `tail-${String(i + 1).padStart(5, '0')}\r\n`).join('');
    await waitFor(
      () => r.text.endsWith(expected),
      1_000,
      () => `last bytes: ${JSON.stringify(r.text.slice(-80))}`,
    );
    assert.equal(r.contiguousLength(), exit.total_written);
  });

  test('held by flow control: the tail written just before exit survives until the acks come', async () => {
    host.setAcking(false);
    try {
      // Just past the window, so the whole flood is read and then the session is held; the tail
      // comes once the hold is on, fits the PTY buffer, and the child exits at once.
      const flood = PtyConstants.UNACKED_OUTPUT_BYTES + 10;
      const { id } = await host.spawnSession({ args: ['-c', `head -c ${flood} /dev/zero | tr '\\0' a; sleep 0.3; printf 'END-MARK\\n'; exit 3`] });
      const r = host.record(id);
      await waitFor(
        () => r.bytes.length > PtyConstants.UNACKED_OUTPUT_BYTES,
        20_000,
        () => `only ${r.bytes.length} bytes`,
      );
      await sleep(1_000);
      host.setAcking(true);
      const exit = await host.waitForExit(id, 20_000);
      assert.equal(exit.exit_code, 3);
      await waitFor(
        () => r.text.endsWith('END-MARK\r\n'),
        2_000,
        () => `${r.bytes.length} bytes, last: ${JSON.stringify(r.text.slice(-40))}`,
      );
      assert.equal(r.contiguousLength(), exit.total_written);
      assert.equal(exit.total_written, flood + 'END-MARK\r\n'.length);
    } finally {
      host.setAcking(true);
    }
  });
});

async function writeRaw(host: PtyHostHandle, id: string, text: string): Promise<void> {
  await host.client.request('write', { session_id: id }, { payload: Buffer.from(text) });
}
