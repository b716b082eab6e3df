// A session's acks held back by the limiter (its viewers, streaming/viewerFlow.ts) hold its producer
// within the host's window; once the limit rises the output flows again even when nobody says so
// (a viewer's socket draining is not reported reliably): the held session's limit is reread
// (OutputAckConstants.HELD_RECHECK_MS). A real pty host and a real shell.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { ProcessStarter } from '../../../supervisor/hosts/processStarter.js';
import { PtyHost } from '../../../supervisor/hosts/ptyHost.js';
import { waitFor } from '../../helpers/poll.js';

const PTY_HOST_ENTRY = new URL('../../../workers/pty/main.js', import.meta.url).pathname;
const WINDOW = PtyConstants.UNACKED_OUTPUT_BYTES;
/** What the host may send past its window before it stops: the batch that crossed it and one read. */
const OVERSHOOT = 4 * PtyConstants.CATCH_UP_CHUNK_BYTES;

test('a limit holds the producer within the window, and output flows again once it rises, unannounced', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-acklimit-'));
  const noop = () => {};
  const host = new PtyHost(new ProcessStarter({ entry: PTY_HOST_ENTRY }), { info: noop, warn: noop, error: noop });
  t.after(async () => {
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  let limit = 0;
  host.limitAcks({ ackLimit: () => limit });
  let received = 0;
  host.on('data', (_data, payload) => (received += payload?.length ?? 0));
  const client = await host.client();
  const target = 3 * WINDOW;
  await client.request('spawn', {
    session_id: 'limit-1',
    shell: '/bin/sh',
    args: ['-c', `head -c ${target} /dev/zero | tr '\\\\0' x; sleep 5`],
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
    rows: 24,
    cols: 80,
  });
  await waitFor(() => received > WINDOW, 'the host sent its window', 30_000);
  // Nothing acked: whatever the timing, the host never sends more than its window and a batch.
  await sleep(500);
  assert.ok(received <= WINDOW + OVERSHOOT, `held at ${received} bytes (window ${WINDOW})`);
  // The limit rises with no release call: the held session's limit is reread and the flood goes on.
  limit = Number.POSITIVE_INFINITY;
  await waitFor(() => received >= target, `all ${target} bytes through`, 30_000).catch((err: Error) => assert.fail(`${err.message}; got ${received}`));
});
