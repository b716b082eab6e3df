// The supervisor acks a session's output even when one of its data listeners throws. The host
// stops reading a session with UNACKED_OUTPUT_BYTES unacknowledged, so an ack lost to a throwing
// listener would hold that session's output for good. A real pty host and a real shell.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { ProcessStarter } from '../../../supervisor/hosts/processStarter.js';
import { PtyHost } from '../../../supervisor/hosts/ptyHost.js';
import { waitFor } from '../../helpers/poll.js';

const PTY_HOST_ENTRY = new URL('../../../workers/pty/main.js', import.meta.url).pathname;

test('output keeps flowing past the unacked window while a data listener throws', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-acks-'));
  const noop = () => {};
  const host = new PtyHost(new ProcessStarter({ entry: PTY_HOST_ENTRY }), { info: noop, warn: noop, error: noop });
  t.after(async () => {
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  let received = 0;
  host.on('data', (_data, payload) => (received += payload?.length ?? 0));
  host.on('data', () => {
    throw new Error('a viewer broke');
  });
  const client = await host.client();
  // Swallow the channel's reports of the throwing listener (they would become process warnings).
  client.onError(noop);
  const target = 3 * PtyConstants.UNACKED_OUTPUT_BYTES;
  await client.request('spawn', {
    session_id: 'acks-1',
    shell: '/bin/sh',
    args: ['-c', `head -c ${target} /dev/zero | tr '\\\\0' x; sleep 5`],
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
    rows: 24,
    cols: 80,
  });
  await waitFor(() => received >= target, `all ${target} bytes through`, 30_000).catch((err: Error) => assert.fail(`${err.message}; got ${received}`));
});
