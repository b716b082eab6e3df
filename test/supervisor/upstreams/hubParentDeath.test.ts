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
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when there are none
  }
}

describe('stdio upstreams die with their parent', () => {
  test('tuicd SIGKILLed: an upstream that ignores EOF and SIGTERM, and a server one level below its wrapper, are gone anyway', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-pdeath-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const stubborn = stdioServer('stubborn', [MOCK_JS, 'normal']);
    const wrapped = stdioServer('wrapped', WRAPPED_MOCK, {}, '/bin/sh');
    for (const server of [stubborn, wrapped]) server.transport['env'] = { MOCK_IGNORE_EOF: '1' };
    writeUpstreams(dir, [stubborn, wrapped]);
    const tuicd = await Tuicd.start({ configDir: dir });
    const pids: number[] = [];
    t.after(async () => {
      for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL'); // only if the test failed
      await tuicd.stop();
    });
    await waitFor(
      async () => {
        const rows = (await tuicd.socket('GET', '/mcp/upstream-status')).json<{ upstreams: StatusRow[] }>().upstreams;
        const pidOf = (name: string) => rows.find((r) => r.name === name && r.status === 'ready')?.pid ?? null;
        const direct = pidOf('stubborn');
        const shell = pidOf('wrapped');
        const server = shell === null ? undefined : childrenOf(shell)[0];
        if (direct === null || server === undefined) return false;
        pids.push(direct, server);
        return true;
      },
      'both upstreams to be ready',
      30_000,
    );
    assert.ok(pids.every(isAlive));

    tuicd.child.kill('SIGKILL');
    await waitFor(() => !pids.some(isAlive), 'the orphaned child and grandchild to be killed', 5_000);
  });

  test('the hosting thread terminated from outside: its upstream children, and what they started, are killed', async (t) => {
    const thread = startPumpThread(t);
    const pump = await thread.attach();
    const { pid } = await pump.start(mockParams('normal', { env: { MOCK_IGNORE_EOF: '1' } }));
    const { pid: grandchild } = (await pump.callTool('grandchild')) as { pid: number };
    t.after(() => {
      for (const p of [pid, grandchild]) if (isAlive(p)) process.kill(p, 'SIGKILL');
    });
    await thread.worker.terminate();
    await waitFor(() => !isAlive(pid) && !isAlive(grandchild), 'the child and grandchild of the terminated thread to be killed', 5_000);
  });
});
