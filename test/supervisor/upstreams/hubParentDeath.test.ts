/**
 * Stdio upstreams do not outlive tuicd, even when it gets no chance to shut them down: a child that
 * ignores EOF on stdin (and SIGTERM) still dies when tuicd is SIGKILLed, through its parent-death
 * signal (workers/proxy-stdio/parentDeath.ts); and when only the hosting thread is terminated. A
 * server one level down (started by a wrapper shell, as `npx` does) is killed with its group by
 * the group reaper (workers/proxy-stdio/groupReaper.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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

/** `sh -c` that runs the mock as its child and waits for it (no exec: the mock is a grandchild of tuicd). */
const WRAPPED_MOCK = ['-c', `${process.execPath} ${MOCK_JS} normal; true`];

/** The pids whose parent is `pid` (the wrapper shell's server). */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when there are none
  }
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

  test('tuicd SIGKILLed: the server a wrapper shell started, one level down, is gone too', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-pdeath-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const wrapped = stdioServer('wrapped', WRAPPED_MOCK, {}, '/bin/sh');
    wrapped.transport['env'] = { MOCK_IGNORE_EOF: '1' };
    writeUpstreams(dir, [wrapped]);
    const tuicd = await Tuicd.start({ configDir: dir });
    let server: number | undefined;
    t.after(async () => {
      if (server !== undefined && isAlive(server)) process.kill(server, 'SIGKILL'); // only if the test failed
      await tuicd.stop();
    });
    await waitFor(async () => {
      const rows = (await tuicd.socket('GET', '/mcp/upstream-status')).json<{ upstreams: StatusRow[] }>().upstreams;
      const shell = rows[0]?.status === 'ready' ? rows[0].pid : null;
      server = shell === null ? undefined : childrenOf(shell)[0];
      return server !== undefined;
    }, 'the wrapped upstream to be ready', 30_000);
    assert.equal(isAlive(server!), true);

    tuicd.child.kill('SIGKILL');
    await waitFor(() => !isAlive(server!), 'the orphaned grandchild to be killed', 5_000);
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

  test('the hosting thread terminated from outside: a server one level down is killed too', async (t) => {
    const thread = startPumpThread(t);
    const pump = await thread.attach();
    const { pid } = await pump.start(mockParams('normal', { command: '/bin/sh', args: WRAPPED_MOCK, env: { MOCK_IGNORE_EOF: '1' } }));
    let server: number | undefined;
    await waitFor(() => (server = childrenOf(pid)[0]) !== undefined, 'the wrapper to start its server', 10_000);
    t.after(() => {
      if (server !== undefined && isAlive(server)) process.kill(server, 'SIGKILL');
    });
    await thread.worker.terminate();
    await waitFor(() => !isAlive(server!), 'the grandchild of the terminated thread to be killed', 5_000);
  });
});
