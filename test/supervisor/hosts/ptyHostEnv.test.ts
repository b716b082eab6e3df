/**
 * The pty host runs with glibc's mmap threshold pinned (closed sessions' freed rings go back to the
 * system; see supervisor/hosts/ptyHostEnv.ts), and the shells it starts do not inherit it: a user's
 * programs keep glibc's own allocation behaviour. It is started with the node flags its memory
 * needs to come back after sessions end (PTY_HOST_NODE_ARGS).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { ptyHostEnv, ptyHostNodeArgs } from '../../../supervisor/hosts/ptyHostEnv.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

describe('the pty host environment', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start({ env: { SHELL: '/bin/sh' } });
  });
  after(() => t.stop());

  it('pins MALLOC_MMAP_THRESHOLD_ for the pty host, not for its shells', async () => {
    // The pty host may start with the first session.
    const created = await t.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh' }), { 'content-type': 'application/json' });
    assert.equal(created.status, 201, created.text);
    const id = created.json().session_id as string;
    const host = childPids(t.child.pid!).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('workers/pty/main.js'));
    assert.ok(host, 'the pty host process');
    assert.ok(environ(host).includes('MALLOC_MMAP_THRESHOLD_=131072'));
    // Started for its memory to come back (issue 29): gc() for the idle collection, a small young generation.
    const argv = readFileSync(`/proc/${host}/cmdline`, 'utf8').split('\0');
    assert.deepEqual(argv.slice(1, 3), ['--expose-gc', '--max-semi-space-size=4']);
    let shell: number | undefined;
    await waitFor(
      () => (shell = childPids(host).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('/bin/sh'))) !== undefined,
      'the shell',
      10_000,
    );
    assert.ok(!environ(shell!).some((v) => v.startsWith('MALLOC_MMAP_THRESHOLD_=')), 'the shell does not inherit it');
    await t.socket('DELETE', `/sessions/${encodeURIComponent(id)}`);
  });

  it('adds the flags of TUIC_PTY_NODE_ARGS after its own', () => {
    assert.deepEqual(ptyHostNodeArgs({ TUIC_PTY_NODE_ARGS: ' --trace-gc  --cpu-prof-dir=/tmp/p ' }), [
      '--expose-gc',
      '--max-semi-space-size=4',
      '--trace-gc',
      '--cpu-prof-dir=/tmp/p',
    ]);
    assert.deepEqual(ptyHostNodeArgs({}), ['--expose-gc', '--max-semi-space-size=4']);
  });

  it('keeps a value the user set', () => {
    assert.equal(ptyHostEnv({ MALLOC_MMAP_THRESHOLD_: '65536', A: '1' }).MALLOC_MMAP_THRESHOLD_, '65536');
    assert.equal(ptyHostEnv({ A: '1' }).MALLOC_MMAP_THRESHOLD_, '131072');
  });
});
