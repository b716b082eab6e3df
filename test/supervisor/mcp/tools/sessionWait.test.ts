// session action=wait against real bash sessions: already met, unknown without subscribing,
// woken by PTY events (no polling, nothing left behind), timeout, abort; and the timeout clamp.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { WaitConstants, clampWaitTimeout } from '../../../../supervisor/sessions/sessionWaiter.js';
import { call, caller, idleShell, outputUntil, startHarness } from './sessionHarness.js';
import type { Harness } from './sessionHarness.js';

/** Timers that keep the process alive (unref'd ones, like the tombstone reaper's, are not counted). */
function liveTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

describe('session wait timeout clamp', () => {
  it('clamp_wait_timeout_defaults_and_caps', () => {
    assert.equal(clampWaitTimeout(undefined), 60_000);
    assert.equal(clampWaitTimeout(0), 60_000);
    assert.equal(clampWaitTimeout(null), 60_000);
    assert.equal(clampWaitTimeout(1), 1);
    assert.equal(clampWaitTimeout(299_999), 299_999);
    assert.equal(clampWaitTimeout(300_000), 295_000);
    assert.equal(clampWaitTimeout(10_000_000), 295_000);
  });

  it('the_advertised_maximum_wait_answers_before_a_client_deadline', () => {
    assert.equal(WaitConstants.MAX_MS, 300_000);
    assert.ok(clampWaitTimeout(WaitConstants.MAX_MS) <= WaitConstants.MAX_MS - 5_000, 'at least 5 s before a client that aborts at 300 s');
  });
});

describe('session action=wait', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  const wait = (args: Record<string, unknown>, who = caller()) => call(h.session, { action: 'wait', ...args }, who);

  it('session_wait_returns_immediately_when_already_idle (subscribing to nothing)', async () => {
    const id = await idleShell(h);
    const before = h.sessions.listenerCounts;
    const r = await wait({ session_id: id, timeout_ms: 20_000 });
    assert.deepEqual(r, { met: true, timed_out: false, until: 'idle', shell_state: 'idle' });
    assert.deepEqual(h.sessions.listenerCounts, before);
  });

  it('session_wait_rejects_an_unknown_session_without_subscribing', async () => {
    let subscriptions = 0;
    const original = { state: h.sessions.onShellState, lifecycle: h.sessions.onLifecycle };
    h.sessions.onShellState = (fn) => (subscriptions++, original.state.call(h.sessions, fn));
    h.sessions.onLifecycle = (fn) => (subscriptions++, original.lifecycle.call(h.sessions, fn));
    try {
      assert.deepEqual(await wait({ session_id: 'no-such-session', until: 'exited' }), { error: 'Unknown session "no-such-session"', code: 'not_found' });
      assert.deepEqual(await wait({ session_id: 'no-such-session' }), { error: 'Unknown session "no-such-session"', code: 'not_found' });
    } finally {
      h.sessions.onShellState = original.state;
      h.sessions.onLifecycle = original.lifecycle;
    }
    assert.equal(subscriptions, 0);
  });

  it('mcp_delivery_regression_session_wait_wakes_from_pty_event_without_polling; the tombstone answers later waits', async () => {
    const id = await idleShell(h);
    const baseline = h.sessions.listenerCounts;
    const r = await call(h.session, { action: 'submit', session_id: id, input: 'sleep 0.3; exit 4' });
    assert.equal(r.submitted, true);
    const timersBefore = liveTimers();
    const waited = await wait({ session_id: id, until: 'exited', timeout_ms: 10_000 });
    assert.deepEqual(waited, { met: true, timed_out: false, until: 'exited', shell_state: 'idle', exit_code: 4 });
    assert.equal(liveTimers(), timersBefore, 'the wait left no timer behind');
    assert.deepEqual(h.sessions.listenerCounts, baseline, 'the wait left no listener behind');
    // 1. already met: the exit tombstone answers, for idle too.
    assert.deepEqual(await wait({ session_id: id, until: 'exited' }), waited);
    assert.equal((await wait({ session_id: id, until: 'idle' })).met, true);
  });

  it('session_wait_met_idle_and_exited: idle waits for the command to finish, not for a quiet moment inside it', async () => {
    const id = await idleShell(h);
    await call(h.session, { action: 'submit', session_id: id, input: 'sleep 1; echo slept-$((6*7))' });
    const waited = await wait({ session_id: id, until: 'idle', timeout_ms: 20_000 });
    assert.deepEqual(waited, { met: true, timed_out: false, until: 'idle', shell_state: 'idle' });
    const out = await call(h.session, { action: 'output', session_id: id });
    assert.ok(out.data.includes('slept-42'), 'idle came after the command printed its result');
  });

  it('mcp_delivery_regression_session_wait_times_out_with_flag; session_wait_timeout_has_no_redundant_hint', async () => {
    const id = await idleShell(h);
    await call(h.session, { action: 'submit', session_id: id, input: 'sleep 30' });
    const baseline = h.sessions.listenerCounts;
    const r = await wait({ session_id: id, until: 'idle', timeout_ms: 300 });
    assert.deepEqual(r, { met: false, timed_out: true, until: 'idle' });
    const exited = await wait({ session_id: id, until: 'exited', timeout_ms: 200 });
    assert.deepEqual(exited, { met: false, timed_out: true, until: 'exited' });
    assert.deepEqual(h.sessions.listenerCounts, baseline);
    await call(h.session, { action: 'input', session_id: id, special_key: 'ctrl+c' });
    assert.equal((await wait({ session_id: id, until: 'idle', timeout_ms: 20_000 })).met, true, 'Ctrl-C ended the job: idle again');
  });

  it('an aborted request ends its wait and releases its listeners and timer', async () => {
    const id = await idleShell(h);
    await call(h.session, { action: 'submit', session_id: id, input: 'sleep 30' });
    const baseline = h.sessions.listenerCounts;
    const timersBefore = liveTimers();
    const controller = new AbortController();
    const pending = wait({ session_id: id, until: 'exited', timeout_ms: 120_000 }, caller({ signal: controller.signal }));
    assert.notDeepEqual(h.sessions.listenerCounts, baseline, 'the wait is subscribed while it runs');
    controller.abort();
    const r = await pending;
    assert.equal(r.met, false);
    assert.equal(r.timed_out, false);
    assert.deepEqual(h.sessions.listenerCounts, baseline);
    assert.equal(liveTimers(), timersBefore);
    await call(h.session, { action: 'kill', session_id: id });
  });

  it('resolves every address form and validates until and session_id', async () => {
    const record = await h.sessions.create({ cwd: h.work, shell: '/bin/bash', tuic_session: 'waiter-identity' });
    for (const ref of [record.alias, 'waiter-identity', record.session_id]) {
      assert.equal((await wait({ session_id: ref, timeout_ms: 20_000 })).met, true, ref);
    }
    assert.deepEqual(await wait({ session_id: record.session_id, until: 'done' }), {
      error: "wait 'until' must be 'idle' or 'exited'",
      code: 'invalid_input',
      field: 'until',
    });
    assert.deepEqual(await wait({ session_id: record.session_id, timeout_ms: '5s' }), {
      error: "'timeout_ms' must be a number",
      code: 'invalid_input',
      field: 'timeout_ms',
    });
    assert.deepEqual(await wait({}), { error: "Action 'wait' requires 'session_id'", code: 'invalid_input', field: 'session_id' });
    await outputUntil(h, record.session_id, (d) => d.length > 0, 'prompt');
  });
});
