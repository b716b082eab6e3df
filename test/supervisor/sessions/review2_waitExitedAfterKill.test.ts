// session action=wait until=exited right after kill/close: the supervisor marks the session closed
// before the pty host reports the real exit, and the wait must answer with that status (exit_code),
// not with the bare closed mark. Real bash sessions over a real pty host.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { createSessionTool } from '../../../supervisor/mcp/tools/session.js';
import type { NativeTool } from '../../../supervisor/mcp/tools/nativeTool.js';
import { call, idleShell, startHarness } from '../mcp/tools/sessionHarness.js';
import type { Harness } from '../mcp/tools/sessionHarness.js';

/** Timers that keep the process alive (unref'd ones, like the tombstone reaper's, are not counted). */
function liveTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/**
 * A wait with a deadline far off must be answered by the exit report itself (it comes within the
 * host's 3 s kill grace): an answer only at the deadline means the report never woke the wait.
 */
const FAR_DEADLINE_MS = 60_000;
const WOKEN_WITHIN_MS = 15_000;
async function answeredBeforeDeadline<T>(answer: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${WOKEN_WITHIN_MS} ms of a ${FAR_DEADLINE_MS} ms wait: the exit report did not wake it`)),
      WOKEN_WITHIN_MS,
    );
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('session wait until=exited after kill or close', () => {
  let h: Harness;
  let session: NativeTool;
  before(() => {
    h = startHarness();
    session = createSessionTool({ sessions: h.sessions });
  });
  after(() => h.stop());

  it('a wait issued right after kill answers with exit_code 128+SIGKILL', async () => {
    const id = await idleShell(h);
    const baseline = h.sessions.listenerCounts;
    const timersBefore = liveTimers();
    assert.deepEqual(await call(session, { action: 'kill', session_id: id }), { ok: true });
    assert.notEqual(h.sessions.get(id).exit, null, 'kill marks the session closed at once');
    const waited = await answeredBeforeDeadline(call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: FAR_DEADLINE_MS }));
    assert.deepEqual(waited, { met: true, timed_out: false, until: 'exited', shell_state: 'idle', exit_code: 137 });
    assert.deepEqual(h.sessions.listenerCounts, baseline, 'the wait left no listener behind');
    assert.equal(liveTimers(), timersBefore, 'the wait left no timer behind');
    // The tombstone now answers the same at once.
    assert.deepEqual(await call(session, { action: 'wait', session_id: id, until: 'exited' }), waited);
  });

  it('a wait issued right after close answers with the status of the hung-up shell', async () => {
    const id = await idleShell(h);
    assert.deepEqual(await call(session, { action: 'close', session_id: id }), { ok: true });
    assert.equal(h.sessions.get(id).exit?.reason, 'closed');
    const waited = await answeredBeforeDeadline(call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: FAR_DEADLINE_MS }));
    // bash dies of the SIGHUP the closing terminal sends: 128 + 1.
    assert.deepEqual(waited, { met: true, timed_out: false, until: 'exited', shell_state: 'idle', exit_code: 129 });
  });

  it('a wait already running when the session is killed answers with the exit code too', async () => {
    const id = await idleShell(h);
    await call(session, { action: 'submit', session_id: id, input: 'sleep 30' });
    const pending = call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: FAR_DEADLINE_MS });
    await call(session, { action: 'kill', session_id: id });
    assert.deepEqual(await answeredBeforeDeadline(pending), { met: true, timed_out: false, until: 'exited', shell_state: 'idle', exit_code: 137 });
  });

  it('a wait pending when the killed session is forgotten (DELETE on its tombstone) answers at once', async () => {
    const id = await idleShell(h);
    await h.sessions.kill(id);
    const pending = call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: FAR_DEADLINE_MS });
    // close() on a tombstone forgets it: the host drops the session, so no exit report will ever come.
    await h.sessions.close(id);
    const answer = await answeredBeforeDeadline(pending);
    assert.equal(answer.met, true, JSON.stringify(answer));
    assert.equal(answer.until, 'exited');
  });

  it('a live session still times out, with nothing left behind', async () => {
    const id = await idleShell(h);
    const baseline = h.sessions.listenerCounts;
    const timersBefore = liveTimers();
    assert.deepEqual(await call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: 200 }), {
      met: false,
      timed_out: true,
      until: 'exited',
    });
    assert.deepEqual(h.sessions.listenerCounts, baseline);
    assert.equal(liveTimers(), timersBefore);
    await call(session, { action: 'kill', session_id: id });
  });

  it('a wait whose deadline comes before the status still reports the closed session as exited; a later one gets the status', async () => {
    const id = await idleShell(h);
    const receipt = await call(session, { action: 'submit', session_id: id, input: "trap '' HUP" });
    assert.equal(receipt.submitted, true, JSON.stringify(receipt));
    assert.equal((await call(session, { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 })).met, true);
    assert.deepEqual(await call(session, { action: 'close', session_id: id }), { ok: true });
    assert.deepEqual(await call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: 100 }), {
      met: true,
      timed_out: false,
      until: 'exited',
      shell_state: 'idle',
    });
    // The host SIGKILLs the shell that ignored the hang-up once its kill grace is over.
    assert.deepEqual(await answeredBeforeDeadline(call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: FAR_DEADLINE_MS })), {
      met: true,
      timed_out: false,
      until: 'exited',
      shell_state: 'idle',
      exit_code: 137,
    });
  });

  it('a host that dies before reporting the exit: the wait answers at its death, without exit_code', async () => {
    const id = await idleShell(h);
    // A shell that ignores the hang-up: the host would SIGKILL it only after its kill grace.
    const receipt = await call(session, { action: 'submit', session_id: id, input: "trap '' HUP" });
    assert.equal(receipt.submitted, true, JSON.stringify(receipt));
    assert.equal((await call(session, { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 })).met, true);
    const shellPid = h.sessions.get(id).pid;
    const hostPid = h.host.pid!;
    try {
      assert.deepEqual(await call(session, { action: 'close', session_id: id }), { ok: true });
      const pending = call(session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: FAR_DEADLINE_MS });
      process.kill(hostPid, 'SIGKILL');
      assert.deepEqual(await answeredBeforeDeadline(pending), { met: true, timed_out: false, until: 'exited', shell_state: 'idle' });
    } finally {
      try {
        process.kill(shellPid, 'SIGKILL'); // orphaned by its host
      } catch {
        // Already gone.
      }
    }
  });
});
