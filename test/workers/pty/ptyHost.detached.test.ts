/**
 * The listening (detached) pty host's own life, driven over its unix socket as tuicd drives it: the
 * records it keeps for the next supervisor, and what it leaves behind when it is left alone.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { connectAgain, type PtyHostHandle, startPtyHost, waitFor } from './ptyHostHarness.js';

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

  test('a record goes with its tombstone when the budget drops it', async (t) => {
    // No budget: a session's tombstone is dropped as soon as it exits.
    const host = await startPtyHost({ env: { TUIC_PTY_TOMBSTONE_BUDGET_BYTES: '0' } });
    t.after(() => host.stop());
    const s = await host.spawnSession({ args: ['-c', 'read x; exit 0'] });
    host.client.emit('record', { session_id: s.id, record: '{"alias":"gone"}' });
    host.client.emit('input', { session_id: s.id }, { payload: Buffer.from('\n'), flush: true });
    await host.waitForExit(s.id);
    await waitFor(
      () => host.dropped.includes(s.id),
      10_000,
      () => 'the tombstone was not dropped',
    );
    await host.client.request('spawn', {
      session_id: s.id,
      shell: '/bin/sh',
      args: SLEEPER.args,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      rows: 24,
      cols: 80,
    });
    const row = (await adoptAfter(host)).sessions.find((x) => x.session_id === s.id);
    assert.ok(row);
    assert.equal(row.record, undefined);
  });

  test('sessions that exited while orphaned are named (reason exit) in the note the host leaves when it ends the rest', async (t) => {
    const host = await startPtyHost();
    const open: Array<{ dispose(): void }> = [];
    t.after(async () => {
      for (const c of open) c.dispose();
      await host.stop();
    });
    const kept = await host.spawnSession(SLEEPER);
    const exits = await host.spawnSession(SLEEPER);
    host.client.dispose(); // orphaned
    const probe = await connectAgain(host.socketPath!);
    open.push(probe);
    const live = async () => (await probe.request('processes', {})).sessions.map((x) => x.session_id);
    // The supervisor's link closed before the probe connected: the exit below reaches nobody but the note.
    assert.deepEqual((await live()).sort(), [kept.id, exits.id].sort());
    process.kill(-exits.pid, 'SIGKILL');
    for (let i = 0; (await live()).includes(exits.id); i++) {
      if (i > 500) throw new Error('the exit never showed');
      await new Promise((r) => setTimeout(r, 20));
    }
    // A supervisor of another protocol version replaces it: the rest end for that reason.
    host.child.kill('SIGUSR2');
    await host.exited;
    const notePath = host.statePath!.replace(/\.json$/, '.ended.json');
    assert.ok(existsSync(notePath));
    const note = JSON.parse(readFileSync(notePath, 'utf8')) as { reason: string; sessions: Array<{ session_id: string; reason?: string }> };
    assert.equal(note.reason, 'pty_protocol_changed');
    assert.deepEqual(
      note.sessions.sort((a, b) => (a.session_id === kept.id ? -1 : b.session_id === kept.id ? 1 : 0)),
      [{ session_id: kept.id }, { session_id: exits.id, reason: 'exit' }],
    );
  });
});
