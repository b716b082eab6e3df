/**
 * When sessions end on purpose and when they are kept: SIGTERM with and without --keep-sessions,
 * `tuicd status` naming an orphaned pty host's sessions, `tuicd restart`, the orphan timeout, a pty
 * host of another protocol version replaced, a second supervisor refused, and a `yes` flood while
 * no supervisor is attached. Real tuicd processes, real signals; every pid is checked gone.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { PtyHost } from '../../../supervisor/hosts/ptyHost.js';
import { DetachedHostStarter } from '../../../supervisor/hosts/detachedHostStarter.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { createCounter, hostPid, isAlive, killAll, orphanedCounter } from './keepHelpers.js';

const ENV = { TUIC_CREDENTIAL_STORE: 'file' };
const noop = () => undefined;

interface Row {
  session_id: string;
  pid: number;
  total_written: number;
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'tuicd-keep-'));
}

async function listed(t: Tuicd): Promise<Row[]> {
  return (await t.socket('GET', '/sessions')).json<Row[]>();
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

describe('keeping sessions across supervisors', { timeout: 180_000 }, () => {
  it('SIGTERM ends the sessions by default', async (t) => {
    const dir = tempDir();
    const tuicd = await Tuicd.start({ configDir: dir, env: ENV });
    const pids: number[] = [];
    t.after(async () => {
      await tuicd.stop();
      killAll(dir, pids);
      rmSync(dir, { recursive: true, force: true });
    });
    pids.push((await createCounter(tuicd, dir)).pid);
    const host = hostPid(dir)!;
    tuicd.child.kill('SIGTERM');
    assert.equal(await tuicd.exited, 0);
    await waitFor(() => !isAlive(host) && !isAlive(pids[0]!), 'the pty host and the session to end', 10_000);
  });

  it('SIGINT (Ctrl-C at the foreground) ends the sessions even with services.keep_sessions_on_stop', async (t) => {
    const dir = tempDir();
    const tuicd = await Tuicd.start({ configDir: dir, env: ENV, config: { services: { keep_sessions_on_stop: true } } });
    const pids: number[] = [];
    t.after(async () => {
      await tuicd.stop();
      killAll(dir, pids);
      rmSync(dir, { recursive: true, force: true });
    });
    pids.push((await createCounter(tuicd, dir)).pid);
    const host = hostPid(dir)!;
    tuicd.child.kill('SIGINT');
    assert.equal(await tuicd.exited, 0);
    await waitFor(() => !isAlive(host) && !isAlive(pids[0]!), 'the pty host and the session to end', 10_000);
  });

  it('SIGTERM with --keep-sessions keeps them; status names them; the next tuicd adopts them; restart keeps them; stop ends them', async (t) => {
    const dir = tempDir();
    // Whatever `restart` left running in the background goes first.
    t.after(async () => void (await Tuicd.runToExit(['stop', '--config-dir', dir], ENV)));
    const run = await orphanedCounter(t, dir, ENV);
    const { session: s, host } = run;

    const status = await Tuicd.runToExit(['status', '--config-dir', dir], ENV);
    assert.equal(status.code, 1);
    assert.match(status.stdout, new RegExp(`pty host \\(pid ${host}\\) is running without a supervisor, holding 1 session`));
    assert.match(status.stdout, new RegExp(`${s.session_id} \\(pid ${s.pid}\\)`));

    run.tuicd = await Tuicd.start({ configDir: dir, env: ENV });
    assert.equal((await listed(run.tuicd)).find((r) => r.session_id === s.session_id)?.pid, s.pid);

    // restart: this tuicd goes, a new one (in the background) adopts the session.
    const restarted = await Tuicd.runToExit(['restart', '--config-dir', dir], ENV);
    assert.equal(restarted.code, 0, restarted.stdout + restarted.stderr);
    await run.tuicd.exited;
    const again = await Tuicd.runToExit(['status', '--config-dir', dir, '--json'], ENV);
    assert.equal(again.code, 0, again.stdout);
    assert.ok(isAlive(host) && isAlive(s.pid), 'the session survived the restart');
    assert.equal(hostPid(dir), host);

    const stopped = await Tuicd.runToExit(['stop', '--config-dir', dir], ENV);
    assert.equal(stopped.code, 0);
    assert.match(stopped.stdout, /tuicd \(pid \d+\) stopped/);
    await waitFor(() => !isAlive(host) && !isAlive(s.pid), 'the pty host and the session to end', 10_000);
  });

  it('an orphaned pty host ends its sessions after services.orphan_timeout_min, saying so in its log', async (t) => {
    const dir = tempDir();
    const tuicd = await Tuicd.start({ configDir: dir, env: ENV, config: { services: { keep_sessions_on_stop: true, orphan_timeout_min: 0.03 } } });
    const pids: number[] = [];
    t.after(async () => {
      await tuicd.stop();
      killAll(dir, pids);
      rmSync(dir, { recursive: true, force: true });
    });
    pids.push((await createCounter(tuicd, dir)).pid);
    const host = hostPid(dir)!;
    tuicd.child.kill('SIGTERM');
    await tuicd.exited;
    assert.ok(isAlive(pids[0]!), 'kept at first');
    await waitFor(() => !isAlive(host) && !isAlive(pids[0]!), 'the orphan timeout to end the session and the host', 20_000);
    assert.match(readFileSync(join(dir, 'logs', 'pty-host.log'), 'utf8'), /no supervisor adopted these sessions within services\.orphan_timeout_min/);
    // The next tuicd closes them with that reason.
    const next = await Tuicd.start({ configDir: dir, env: ENV });
    try {
      await next.waitForStderr(/"reason":"orphan_timeout","sessions":1,.*pty host ended its sessions/);
    } finally {
      await next.stop();
    }
  });

  it('a pty host of another protocol version is told to end and a fresh one starts', async (t) => {
    const dir = tempDir();
    const run = await orphanedCounter(t, dir, ENV);
    const { session: s, host: oldHost, pids } = run;
    // As an older build would have written it.
    const statePath = join(dir, 'pty-host.json');
    writeFileSync(statePath, JSON.stringify({ ...JSON.parse(readFileSync(statePath, 'utf8')), protocol_version: 999 }), { mode: 0o600 });

    run.tuicd = await Tuicd.start({ configDir: dir, env: ENV });
    await waitFor(() => !isAlive(oldHost) && !isAlive(s.pid), 'the old host and its session to end', 10_000);
    assert.deepEqual(await listed(run.tuicd), []);
    assert.match(readFileSync(join(dir, 'logs', 'pty-host.log'), 'utf8'), /replaced by a supervisor speaking another pty protocol version/);
    await run.tuicd.waitForStderr(/"reason":"pty_protocol_changed","sessions":1,.*pty host ended its sessions/);
    const fresh = await createCounter(run.tuicd, dir);
    pids.push(fresh.pid);
    const newHost = hostPid(dir)!;
    assert.notEqual(newHost, oldHost);
    await run.tuicd.stop();
    await waitFor(() => !isAlive(newHost) && !isAlive(fresh.pid), 'the fresh host to end with tuicd', 10_000);
  });

  it('a second supervisor cannot adopt the pty host a live one holds', async (t) => {
    const dir = tempDir();
    const tuicd = await Tuicd.start({ configDir: dir, env: ENV });
    const pids: number[] = [];
    const intruder = new PtyHost(
      new DetachedHostStarter({
        entry: new URL('../../../workers/pty/main.js', import.meta.url).pathname,
        env: process.env,
        configDir: dir,
        logDir: join(dir, 'logs'),
        instance: null,
        orphanTimeoutMs: () => 60_000,
        log: { info: noop, warn: noop },
      }),
      { info: noop, warn: noop, error: noop },
    );
    t.after(async () => {
      await intruder.detach();
      await tuicd.stop();
      killAll(dir, pids);
      rmSync(dir, { recursive: true, force: true });
    });
    const s = await createCounter(tuicd, dir);
    pids.push(s.pid);
    await assert.rejects(intruder.client(), /held by another running supervisor/);
    assert.ok(isAlive(hostPid(dir)!));
    // The holder still drives it.
    const w = await tuicd.socket('POST', `/sessions/${s.session_id}/write`, JSON.stringify({ data: 'x' }), { 'content-type': 'application/json' });
    assert.ok(w.status < 300, w.text);
    assert.equal((await listed(tuicd))[0]?.pid, s.pid);
  });

  it('a yes flood while no supervisor is attached keeps running within the ring bound', async (t) => {
    const dir = tempDir();
    let tuicd = await Tuicd.start({ configDir: dir, env: ENV });
    const pids: number[] = [];
    t.after(async () => {
      await tuicd.stop();
      killAll(dir, pids);
      rmSync(dir, { recursive: true, force: true });
    });
    const r = await tuicd.socket('POST', '/sessions', JSON.stringify({ cwd: dir, shell: '/bin/sh', args: ['-c', 'exec yes'] }), {
      'content-type': 'application/json',
    });
    assert.equal(r.status, 201, r.text);
    const s = r.json<{ session_id: string; pid: number }>();
    pids.push(s.pid);
    const host = hostPid(dir)!;
    tuicd.child.kill('SIGKILL');
    await tuicd.exited;
    // Nobody acknowledges: the host does, so the flood is read (not held) and the ring drops the oldest.
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      await new Promise((res) => setTimeout(res, 300));
      samples.push(rssKb(host));
    }
    tuicd = await Tuicd.start({ configDir: dir, env: ENV });
    const row = (await listed(tuicd)).find((x) => x.session_id === s.session_id);
    assert.ok(row, 'adopted');
    // Far past what flow control would allow unread (2 MiB): it was never held.
    assert.ok(row.total_written > 8 * 1024 * 1024, `total_written ${row.total_written}`);
    // The 2 MiB ring, the line log and Node itself: bounded, not the flood's size.
    assert.ok(Math.max(...samples) < 250 * 1024, `pty host RSS ${Math.max(...samples)} kB`);
    const raw = await tuicd.socket('GET', `/sessions/${s.session_id}/output?limit=4096`);
    assert.equal(raw.status, 200, raw.text);
  });
});
