/** The pty host through its channel, with real shells on real PTYs: requests, echo, resize, exit, errors. */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ErrorCode, type SupervisorError } from '../../../shared/errors.js';
import { type PtyHostHandle, sleep, startPtyHost, waitFor } from './ptyHostHarness.js';

const PROMPT = '$ ';

describe('pty host: requests over the channel', () => {
  let host: PtyHostHandle;
  before(async () => {
    host = await startPtyHost();
  });
  after(() => host.stop());

  test('ping answers with the host pid', async () => {
    assert.deepEqual(await host.client.request('ping', {}), { pid: host.child.pid });
  });

  test('output round-trip: `echo hello` arrives as data, then exit 0 with the byte count', async () => {
    const { id, pid, shell } = await host.spawnSession({ args: ['-c', 'echo hello'] });
    assert.ok(pid > 0);
    assert.equal(shell, '/bin/sh');
    const exit = await host.waitForExit(id);
    const r = host.record(id);
    assert.equal(r.text, 'hello\r\n');
    assert.deepEqual(exit, { exit_code: 0, signal: null, total_written: 7 });
    assert.equal(r.contiguousLength(), 7);
    assert.equal(r.lateData, 0);
  });

  test('write reaches the shell and its output comes back', async () => {
    const { id } = await host.spawnSession();
    await host.waitForText(id, PROMPT);
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('echo round-$((20+22))\r') });
    await host.waitForText(id, 'round-42\r\n');
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('exit 5\r') });
    assert.equal((await host.waitForExit(id)).exit_code, 5);
  });

  test('resize is seen by `stty size`', async () => {
    const { id } = await host.spawnSession({ rows: 24, cols: 80 });
    await host.waitForText(id, PROMPT);
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('stty size\r') });
    await host.waitForText(id, '24 80\r\n');
    await host.client.request('resize', { session_id: id, rows: 33, cols: 101 });
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('stty size\r') });
    await host.waitForText(id, '33 101\r\n');
    await host.client.request('kill', { session_id: id });
    await host.waitForExit(id);
  });

  test('bash: a typed `exit 7` gives exit_code 7; buffers stay readable until forget', async () => {
    const { id } = await host.spawnSession({ shell: 'bash', args: ['--norc', '--noprofile', '-i'] });
    await host.waitForText(id, PROMPT);
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('echo tomb-$((6+1)); exit 7\r') });
    const exit = await host.waitForExit(id);
    assert.equal(exit.exit_code, 7);
    assert.equal(exit.signal, null);
    const r = host.record(id);
    assert.equal(exit.total_written, r.contiguousLength());

    const all = await host.client.requestWithPayload('readRaw', { session_id: id, offset: 0 });
    assert.deepEqual(all.result, { start: 0, total_written: exit.total_written });
    assert.deepEqual(Buffer.from(all.payload ?? []), r.bytes);
    const tail = await host.client.requestWithPayload('readRaw', { session_id: id, limit: 10 });
    assert.deepEqual(tail.result, { start: exit.total_written - 10, total_written: exit.total_written });
    assert.deepEqual(Buffer.from(tail.payload ?? []), r.bytes.subarray(-10));
    const middle = await host.client.requestWithPayload('readRaw', { session_id: id, offset: 2, limit: 5 });
    assert.equal(middle.result.start, 2);
    assert.deepEqual(Buffer.from(middle.payload ?? []), r.bytes.subarray(2, 7));
    const past = await host.client.requestWithPayload('readRaw', { session_id: id, offset: exit.total_written + 100 });
    assert.equal(past.result.start, exit.total_written);
    assert.equal(past.payload, undefined); // An empty payload arrives as undefined.

    // A dead terminal takes input, resizes and signals without complaint, and is no process any more.
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('ignored\r') });
    await host.client.request('resize', { session_id: id, rows: 10, cols: 10 });
    await host.client.request('kill', { session_id: id, signal: 'SIGKILL' });
    const { sessions } = await host.client.request('processes', {});
    assert.ok(!sessions.some((s) => s.session_id === id));

    await host.client.request('forget', { session_id: id });
    await assert.rejects(host.client.request('readRaw', { session_id: id }), { code: ErrorCode.PTY_NOT_FOUND });
  });

  test('an unknown session id is PTY_NOT_FOUND on every method that takes one', async () => {
    const session_id = 'no-such-session';
    const calls: Array<Promise<unknown>> = [
      host.client.request('write', { session_id }, { payload: Buffer.from('x') }),
      host.client.request('resize', { session_id, rows: 2, cols: 2 }),
      host.client.request('pause', { session_id }),
      host.client.request('resume', { session_id }),
      host.client.request('kill', { session_id }),
      host.client.request('readRaw', { session_id }),
      host.client.request('readLog', { session_id }),
      host.client.request('forget', { session_id }),
    ];
    for (const call of calls) {
      await assert.rejects(call, (err: SupervisorError) => {
        assert.equal(err.code, ErrorCode.PTY_NOT_FOUND);
        assert.deepEqual(err.data, { session_id });
        return true;
      });
    }
  });

  test('spawn refuses an id in use and a cwd that does not exist', async () => {
    const { id } = await host.spawnSession({ args: ['-c', 'sleep 5'] });
    const params = { session_id: id, cwd: '/', env: {}, rows: 5, cols: 5 };
    await assert.rejects(host.client.request('spawn', params), { code: 'PTY_SPAWN_FAILED' });
    await assert.rejects(host.client.request('spawn', { ...params, session_id: `${id}-2`, cwd: '/no/such/dir' }), { code: 'PTY_SPAWN_FAILED' });
    const { sessions, host_pid } = await host.client.request('processes', {});
    assert.equal(host_pid, host.child.pid);
    assert.ok(sessions.some((s) => s.session_id === id));
    assert.ok(!sessions.some((s) => s.session_id === `${id}-2`));
    await host.client.request('kill', { session_id: id, signal: 'KILL' });
    assert.equal((await host.waitForExit(id)).signal, 9);
  });

  test('shell state: busy on output, idle after 500 ms of quiet, one event per change', async () => {
    const { id } = await host.spawnSession();
    const r = host.record(id);
    await host.waitForText(id, PROMPT);
    await waitFor(
      () => r.states.length === 2,
      3_000,
      () => `states: ${r.states.join()}`,
    );
    assert.deepEqual(r.states, ['busy', 'idle']);
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('echo a; sleep 0.2; echo b; sleep 0.2; echo c\r') });
    await host.waitForText(id, 'c\r\n');
    await waitFor(
      () => r.states.length === 4,
      3_000,
      () => `states: ${r.states.join()}`,
    );
    assert.deepEqual(r.states, ['busy', 'idle', 'busy', 'idle']);
    await host.client.request('kill', { session_id: id });
    await host.waitForExit(id);
  });

  test('kill sends SIGHUP to the process group by default', async () => {
    const { id } = await host.spawnSession({ args: ['-c', 'echo ready; sleep 30; echo never'] });
    await host.waitForText(id, 'ready');
    await host.client.request('kill', { session_id: id });
    const exit = await host.waitForExit(id);
    assert.deepEqual([exit.exit_code, exit.signal], [null, 1]);
    assert.ok(!host.record(id).text.includes('never'));
  });

  test('kill escalates to SIGKILL when the group ignores SIGHUP', async () => {
    const { id } = await host.spawnSession({ args: ['-c', "trap '' HUP TERM; echo ready; sleep 30; true"] });
    await host.waitForText(id, 'ready');
    const started = Date.now();
    await host.client.request('kill', { session_id: id, signal: 'SIGTERM' });
    await sleep(500);
    assert.equal(host.record(id).exit, undefined, 'ignored SIGTERM must not end it yet');
    const exit = await host.waitForExit(id, 10_000);
    assert.equal(exit.signal, 9);
    assert.ok(Date.now() - started >= 2_500, `escalated after ${Date.now() - started} ms`);
  });

  test('kill with an unknown signal name is refused', async () => {
    const { id } = await host.spawnSession({ args: ['-c', 'sleep 5'] });
    await assert.rejects(host.client.request('kill', { session_id: id, signal: 'SIGNOPE' }), { code: ErrorCode.INVALID_MESSAGE });
    await host.client.request('forget', { session_id: id });
  });
});
