// TaskRegistry on its own (tasks.rs tests), and the task tool end to end on tasks whose sessions
// are real shells that exit, get killed or keep running.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { TASK_STATUSES, TaskConstants, TaskRegistry } from '../../../../supervisor/agents/tasks.js';
import { call, caller, idleShell, startHarness } from './sessionHarness.js';
import type { Harness } from './sessionHarness.js';

describe('TaskRegistry', () => {
  it('create_then_get_round_trips', () => {
    const reg = new TaskRegistry();
    const task = reg.create('session-1', 'owner-a');
    assert.match(task.task_id, /^[0-9a-f-]{36}$/);
    assert.equal(reg.get(task.task_id), task);
    assert.equal(task.status, 'working');
    assert.equal(task.session_id, 'session-1');
    assert.equal(task.owner, 'owner-a');
    assert.equal(reg.get('nope'), undefined);
  });

  it('status_as_str_matches_the_wire', () => {
    assert.deepEqual([...TASK_STATUSES], ['working', 'input_required', 'completed', 'failed', 'cancelled']);
  });

  it('a_terminal_task_rejects_every_further_transition', () => {
    const reg = new TaskRegistry();
    for (const terminal of ['completed', 'failed', 'cancelled'] as const) {
      const task = reg.create('s', 'o');
      assert.equal(reg.transition(task.task_id, terminal), true);
      for (const next of TASK_STATUSES) assert.equal(reg.transition(task.task_id, next), false, `${terminal} → ${next}`);
      assert.equal(reg.get(task.task_id)?.status, terminal);
      reg.markSessionExited('s', 1);
      assert.equal(reg.get(task.task_id)?.status, terminal, 'an exit does not overwrite it either');
    }
  });

  it('input_required_is_not_terminal_and_can_return_to_working', () => {
    const reg = new TaskRegistry();
    const task = reg.create('s', 'o');
    assert.equal(reg.transition(task.task_id, 'input_required', { status_message: 'asks which branch' }), true);
    assert.equal(task.status_message, 'asks which branch');
    assert.equal(reg.transition(task.task_id, 'working'), true);
    assert.equal(task.status, 'working');
    assert.equal(reg.transition(task.task_id, 'input_required'), true);
    reg.markSessionExited('s', 0);
    assert.equal(task.status, 'completed', 'an exit ends an input_required task too');
  });

  it('a session exit completes on 0 and fails otherwise, with the exit status in result and the reason in error_detail', () => {
    const reg = new TaskRegistry();
    const ok = reg.create('s-ok', 'o');
    const bad = reg.create('s-bad', 'o');
    const unknown = reg.create('s-unknown', 'o');
    const other = reg.create('s-other', 'o');
    reg.markSessionExited('s-ok', 0);
    reg.markSessionExited('s-bad', 3);
    reg.markSessionExited('s-unknown', null, 'pty_host_exited');
    assert.equal(ok.status, 'completed');
    assert.deepEqual(ok.result, { session_id: 's-ok', exit_code: 0 });
    assert.equal(ok.error_detail, undefined);
    assert.equal(bad.status, 'failed');
    assert.deepEqual(bad.result, { session_id: 's-bad', exit_code: 3 });
    assert.equal(bad.error_detail, 'agent exited with code 3');
    assert.equal(unknown.status, 'failed');
    assert.equal(unknown.result, undefined, 'no exit status: no result rather than a null exit_code');
    assert.equal(unknown.error_detail, 'session ended without an exit status (pty_host_exited)');
    assert.equal(other.status, 'working', "another session's task is untouched");
  });

  it('reap_expired_drops_only_past_ttl_tasks', () => {
    let now = 1_000_000;
    const reg = new TaskRegistry({ now: () => now });
    const old = reg.create('s', 'o');
    now += TaskConstants.TTL_MS - 1;
    const young = reg.create('s', 'o');
    assert.equal(reg.reapExpired(now), 0, 'one millisecond short of the TTL');
    assert.equal(reg.reapExpired(now + 1), 1);
    assert.equal(reg.get(old.task_id), undefined);
    assert.equal(reg.get(young.task_id), young);
    assert.equal(reg.size, 1);
  });

  it('a_terminal_transition_is_atomic_under_contention', async () => {
    const reg = new TaskRegistry();
    const task = reg.create('s', 'o');
    const contenders = ['completed', 'failed', 'cancelled', 'completed', 'failed', 'cancelled'] as const;
    const wins = await Promise.all(contenders.map(async (to, i) => (await new Promise((r) => setImmediate(r, i)), reg.transition(task.task_id, to))));
    assert.equal(wins.filter(Boolean).length, 1, 'exactly one terminal transition lands');
    assert.equal(task.status, contenders[wins.indexOf(true)]);
  });
});

describe('task tool on real sessions', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  const owner = caller({ tuicSession: 'orchestrator-1', mcpSessionId: 'mcp-1' });
  const get = (taskId: string, who = owner) => call(h.task, { action: 'get', task_id: taskId }, who);

  it('a_session_exit_drives_its_task_to_a_terminal_state; task_get_reports_a_failure_under_error_detail_not_error', async () => {
    const id = await idleShell(h);
    const task = h.tasks.create(id, 'orchestrator-1');
    assert.deepEqual(await get(task.task_id), { task_id: task.task_id, status: 'working', status_message: 'agent running', poll_interval_ms: 1000 });
    await call(h.session, { action: 'submit', session_id: id, input: 'exit 3' });
    await call(h.session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: 20_000 });
    const failed = await get(task.task_id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error_detail, 'agent exited with code 3');
    assert.deepEqual(failed.result, { session_id: id, exit_code: 3 });
    assert.equal('error' in failed, false, 'a successful poll of a failed task is not a tool error');
    assert.equal(failed.poll_interval_ms, 1000);
  });

  it('task_get_reports_each_stage_without_blocking: working, then completed on exit 0', async () => {
    const id = await idleShell(h);
    const task = h.tasks.create(id, 'orchestrator-1');
    assert.equal((await get(task.task_id)).status, 'working');
    await call(h.session, { action: 'submit', session_id: id, input: 'exit 0' });
    await call(h.session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: 20_000 });
    const done = await get(task.task_id);
    assert.deepEqual(done, {
      task_id: task.task_id,
      status: 'completed',
      status_message: 'agent exited with code 0',
      result: { session_id: id, exit_code: 0 },
      poll_interval_ms: 1000,
    });
  });

  it('task_cancel_is_final_and_leaves_the_agent_running; a_cancelled_task_is_not_resurrected_by_the_session_exit', async () => {
    const id = await idleShell(h);
    const task = h.tasks.create(id, 'orchestrator-1');
    const cancelled = await call(h.task, { action: 'cancel', task_id: task.task_id }, owner);
    assert.deepEqual(Object.keys(cancelled).sort(), ['cancelled', 'note', 'status', 'task_id']);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.cancelled, true);
    assert.equal(h.sessions.get(id).exit, null, 'the agent still runs');
    const again = await call(h.task, { action: 'cancel', task_id: task.task_id }, owner);
    assert.equal(again.cancelled, false);
    assert.equal(again.status, 'cancelled');
    assert.equal('error' in again, false, 'cancelling a finished task is not an error');
    await call(h.session, { action: 'kill', session_id: id });
    assert.equal((await get(task.task_id)).status, 'cancelled', 'the kill did not overwrite the cancel');
  });

  it('a kill fails the task with the reason and the exit status the host reports; a cancel racing the exit reports the state that stands', async () => {
    const id = await idleShell(h);
    const task = h.tasks.create(id, 'orchestrator-1');
    await call(h.session, { action: 'kill', session_id: id });
    // The kill closes the session at once; its status comes with the host's exit report.
    await call(h.session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: 20_000 });
    const failed = await get(task.task_id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error_detail, /killed/);
    assert.deepEqual(failed.result, { session_id: id, exit_code: 137 }, 'SIGKILL: 128 + 9');
    const late = await call(h.task, { action: 'cancel', task_id: task.task_id }, owner);
    assert.deepEqual({ status: late.status, cancelled: late.cancelled }, { status: 'failed', cancelled: false });
  });

  it('a_task_owned_by_another_identity_is_refused; the owner is found by identity or by the pending MCP session id', async () => {
    const id = await idleShell(h);
    const byIdentity = h.tasks.create(id, 'orchestrator-1');
    const byPending = h.tasks.create(id, 'mcp-pending-7');
    const stranger = caller({ tuicSession: 'someone-else', mcpSessionId: 'mcp-2' });
    assert.deepEqual(await get(byIdentity.task_id, stranger), { error: 'task_id is not owned by the calling identity', code: 'forbidden' });
    assert.deepEqual(await call(h.task, { action: 'cancel', task_id: byIdentity.task_id }, stranger), {
      error: 'task_id is not owned by the calling identity',
      code: 'forbidden',
    });
    assert.equal(byIdentity.status, 'working');
    // Spawned before binding an identity, polled after: the MCP session id still owns it.
    const bound = caller({ tuicSession: 'orchestrator-9', mcpSessionId: 'mcp-pending-7' });
    assert.equal((await get(byPending.task_id, bound)).status, 'working');
  });

  it('errors: unknown task, missing task_id, remote cancel; a remote get stays open', async () => {
    const id = await idleShell(h);
    const task = h.tasks.create(id, 'orchestrator-1');
    assert.deepEqual(await get('00000000-0000-0000-0000-000000000000'), { error: 'unknown or expired task_id', code: 'not_found' });
    // A missing required argument is named by the schema check, in the words every tool uses.
    assert.deepEqual(await call(h.task, { action: 'get' }, owner), { error: 'task_id is required', code: 'invalid_input', field: 'task_id' });
    assert.deepEqual(await call(h.task, { action: 'get', task_id: '' }, owner), {
      error: "Action 'get' requires 'task_id'",
      code: 'invalid_input',
      field: 'task_id',
    });
    assert.deepEqual(await call(h.task, { action: 'get', task_id: 7 }, owner), { error: 'task_id must be a string', code: 'invalid_input', field: 'task_id' });
    const remoteOwner = caller({ tuicSession: 'orchestrator-1', isLoopback: false, listener: 'tcp' });
    assert.deepEqual(await call(h.task, { action: 'cancel', task_id: task.task_id }, remoteOwner), {
      error: 'Task cancellation is restricted to localhost connections',
      code: 'forbidden',
    });
    assert.equal(task.status, 'working');
    assert.equal((await get(task.task_id, remoteOwner)).status, 'working');
    assert.match(
      (await call(h.task, { action: 'wait', task_id: task.task_id }, owner)).error,
      /^Unknown action 'wait' for tool 'task'\. Available: get, cancel$/,
    );
  });
});
