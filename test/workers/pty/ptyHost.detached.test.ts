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
});
