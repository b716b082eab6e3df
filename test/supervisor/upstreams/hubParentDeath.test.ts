/**
 * Stdio upstreams do not outlive tuicd, even when it gets no chance to shut them down: a child that
 * ignores EOF on stdin (and SIGTERM) still dies when tuicd is SIGKILLed, through its parent-death
 * signal (workers/proxy-stdio/parentDeath.ts); and when only the hosting thread is terminated.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { stdioServer, writeUpstreams } from '../../helpers/upstreamServers.js';
import { isAlive, mockParams, startPumpThread } from '../../workers/proxy-stdio/pumpHarness.js';

const MOCK_JS = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;

interface StatusRow {
  name: string;
  status: string;
  pid: number | null;
}

describe('stdio upstreams die with their parent', () => {
  test('tuicd SIGKILLed: an upstream that ignores EOF and SIGTERM is gone anyway', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-pdeath-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const stubborn = stdioServer('stubborn', [MOCK_JS, 'normal']);
    stubborn.transport['env'] = { MOCK_IGNORE_EOF: '1' };
    writeUpstreams(dir, [stubborn]);
    const tuicd = await Tuicd.start({ configDir: dir });
    let pid: number | null = null;
    t.after(async () => {
      if (pid !== null && isAlive(pid)) process.kill(pid, 'SIGKILL'); // only if the test failed
      await tuicd.stop();
    });
    await waitFor(async () => {
      const rows = (await tuicd.socket('GET', '/mcp/upstream-status')).json<{ upstreams: StatusRow[] }>().upstreams;
      pid = rows[0]?.status === 'ready' ? rows[0].pid : null;
      return pid !== null;
    }, 'the upstream to be ready', 30_000);
    assert.equal(isAlive(pid!), true);

    tuicd.child.kill('SIGKILL');
    await waitFor(() => !isAlive(pid!), 'the orphaned upstream to be killed', 5_000);
  });

  test('the hosting thread terminated from outside: its upstream children are killed', async (t) => {
    const thread = startPumpThread(t);
    const pump = await thread.attach();
    const { pid } = await pump.start(mockParams('normal', { env: { MOCK_IGNORE_EOF: '1' } }));
    t.after(() => {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    });
    await thread.worker.terminate();
    await waitFor(() => !isAlive(pid), 'the child of the terminated thread to be killed', 5_000);
  });
});
