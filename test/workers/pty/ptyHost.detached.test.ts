/**
 * The listening (detached) pty host's own life, driven over its unix socket as tuicd drives it: the
 * records it keeps for the next supervisor, and what it leaves behind when it is left alone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { connectAgain, type PtyHostHandle, startPtyHost } from './ptyHostHarness.js';

const SLEEPER = { args: ['-c', 'sleep 1000'] };

/** The next supervisor's view: the adopt answer of a fresh connection (the previous link closed first). */
async function adoptAfter(host: PtyHostHandle) {
  host.client.dispose();
  const next = await connectAgain(host.socketPath!);
  try {
    return await next.request('adopt', {});
  } finally {
    next.dispose();
  }
}

describe('detached pty host', () => {
  test("a forgotten session's record is dropped with it: an id spawned again later does not inherit it", async (t) => {
    const host = await startPtyHost();
    t.after(() => host.stop());
    const first = await host.spawnSession(SLEEPER);
    host.client.emit('record', { session_id: first.id, record: '{"alias":"old"}' });
    await host.client.request('forget', { session_id: first.id });
    // The supervisor may bring a forgotten id back (the host drops a stale tombstone for it too).
    await host.client.request('spawn', {
      session_id: first.id,
      shell: '/bin/sh',
      args: SLEEPER.args,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      rows: 24,
      cols: 80,
    });
    const adopted = await adoptAfter(host);
    const row = adopted.sessions.find((s) => s.session_id === first.id);
    assert.ok(row, 'the new session is adopted');
    assert.equal(row.record, undefined, "the forgotten session's record is not the new one's");
  });

  test("a connection that only looks (processes, as tuicd status asks) does not take the supervisor's place", async (t) => {
    const host = await startPtyHost();
    const open: Array<{ dispose(): void }> = [];
    t.after(async () => {
      for (const c of open) c.dispose();
      await host.stop();
    });
    const s = await host.spawnSession(SLEEPER);
    host.client.dispose(); // orphaned
    const probe = await connectAgain(host.socketPath!);
    open.push(probe);
    assert.deepEqual(
      (await probe.request('processes', {})).sessions.map((x) => x.session_id),
      [s.id],
    );
    // While the probe is still connected, the next supervisor adopts.
    const next = await connectAgain(host.socketPath!);
    open.push(next);
    const adopted = await next.request('adopt', {});
    assert.deepEqual(
      adopted.sessions.map((x) => x.session_id),
      [s.id],
    );
    // It holds the host now: a second supervisor is refused, the probe may still look.
    const intruder = await connectAgain(host.socketPath!);
    open.push(intruder);
    await assert.rejects(intruder.request('adopt', {}), /held by another running supervisor/);
    await assert.rejects(intruder.request('resize', { session_id: s.id, rows: 30, cols: 90 }), /held by another running supervisor/);
    assert.equal((await probe.request('processes', {})).sessions.length, 1);
    assert.deepEqual(await next.request('ping', {}), { pid: host.child.pid });
  });
});
