/** Pump lifecycle with real child processes: spawn errors, the environment the child sees, respawn limit, shutdown. */

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ErrorCode } from '../../../shared/errors.js';
import { isAlive, MOCK_UPSTREAM, mockParams, startPump, waitForRespawnWindow } from './pumpHarness.js';

describe('pump lifecycle', { concurrency: true }, () => {
  test('spawn_fails_for_nonexistent_command: start rejects naming the upstream and the command', async (t) => {
    const pump = await startPump(t);
    await assert.rejects(pump.start(mockParams('normal', { command: 'tuicd-no-such-command-xyz', args: [] })), (err: Error & { code?: string }) => {
      assert.equal(err.code, ErrorCode.UPSTREAM_SPAWN_FAILED);
      assert.match(err.message, /^Upstream 'mock' failed to start 'tuicd-no-such-command-xyz': .*ENOENT.*command not found/);
      return true;
    });
    await assert.rejects(pump.start(mockParams('normal', { cwd: '/no/such/dir/for/tuicd' })), /respawning too fast/);
    const status = await pump.client.request('status', {});
    assert.deepEqual([status.alive, status.pid], [false, null]);
  });

  test('a cwd that does not exist is named as such, not as a missing command', async (t) => {
    const pump = await startPump(t);
    await assert.rejects(pump.start(mockParams('normal', { cwd: '/no/such/dir/for/tuicd' })), (err: Error) => {
      assert.equal(err.message, "Upstream 'mock' cannot start: cwd '/no/such/dir/for/tuicd' is not a directory");
      return true;
    });
  });

  test('arguments spawn() throws on (an empty command) fail start the same way, the hosting thread survives', async (t) => {
    const pump = await startPump(t);
    await assert.rejects(pump.start(mockParams('normal', { command: '' })), (err: Error & { code?: string }) => {
      assert.equal(err.code, ErrorCode.UPSTREAM_SPAWN_FAILED);
      assert.match(err.message, /^Upstream 'mock' failed to start '': The argument 'file' cannot be empty/);
      return true;
    });
    assert.equal((await pump.client.request('status', {})).alive, false);
  });

  test('is_alive is false before the first spawn, and an rpc then fails without sending', async (t) => {
    const pump = await startPump(t);
    assert.equal((await pump.client.request('status', {})).alive, false);
    await assert.rejects(pump.rpc('tools/list'), (err: Error & { data?: { reason?: string } }) => {
      assert.equal(err.data?.reason, 'not_running');
      return true;
    });
  });

  test('env_vars_are_passed_to_child: secrets in the parent env are not, the upstream env is, ~ is expanded, PATH augmented', async (t) => {
    const home = await realpath(await mkdtemp(join(tmpdir(), 'tuicd-stdio-home-')));
    t.after(() => rm(home, { recursive: true, force: true }));
    await symlink(process.execPath, join(home, 'node'));
    await symlink(MOCK_UPSTREAM, join(home, 'mock.js'));
    await mkdir(join(home, '.local', 'bin'), { recursive: true });
    const pump = await startPump(t, {
      ...process.env,
      HOME: home,
      ANTHROPIC_API_KEY: 'sk-ant-must-not-leak',
      AWS_SECRET_ACCESS_KEY: 'nor-this',
      PATH: '/usr/bin:/bin',
    });
    await pump.start(mockParams('normal', { command: '~/node', args: ['~/mock.js'], cwd: '~', env: { UPSTREAM_TOKEN: 'given', LANG: 'C' } }));
    const { env, cwd } = (await pump.callTool('env')) as { env: Record<string, string>; cwd: string };
    assert.equal(env.ANTHROPIC_API_KEY, undefined);
    assert.equal(env.AWS_SECRET_ACCESS_KEY, undefined);
    assert.equal(env.UPSTREAM_TOKEN, 'given');
    assert.equal(env.LANG, 'C');
    assert.equal(env.HOME, home);
    assert.equal(cwd, home);
    const path = env.PATH!.split(':');
    assert.ok(path.includes(join(home, '.local', 'bin')), env.PATH);
    assert.ok(!path.includes(join(home, '.bun', 'bin')), 'a directory that does not exist is not added');
    const unexpected = Object.keys(env).filter(
      (key) => !['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TEMP', 'TMP', 'SHELL', 'TERM', 'UPSTREAM_TOKEN'].includes(key),
    );
    // Node may add a few of its own to a child; none of the parent's others may appear.
    assert.deepEqual(
      unexpected.filter((key) => key in process.env && !key.startsWith('NODE_') && key !== 'PWD' && key !== 'SHLVL' && key !== '_'),
      [],
    );
  });

  test('initialize offers the protocol version, the given capabilities and clientInfo; start answers the server capabilities', async (t) => {
    const pump = await startPump(t);
    const capabilities = { sampling: {}, roots: { listChanged: true } };
    const started = await pump.start(
      mockParams('normal', { protocol_version: '2025-11-25', client_name: 'tuicommander', client_version: '9.9.9', capabilities }),
    );
    assert.equal(started.server_name, 'mock-upstream');
    assert.deepEqual(started.capabilities, { tools: {}, logging: {} });
    assert.deepEqual(started.tools.map((tool) => tool.name).slice(0, 3), ['echo', 'env', 'whoami']);
    const { initParams } = (await pump.callTool('initParams')) as { initParams: unknown };
    assert.deepEqual(initParams, { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'tuicommander', version: '9.9.9' } });
  });

  test('without capabilities, initialize declares none', async (t) => {
    const pump = await startPump(t);
    await pump.start(mockParams('normal'));
    assert.deepEqual(((await pump.callTool('initParams')) as { initParams: { capabilities: unknown } }).initParams.capabilities, {});
  });

  test('ping from the server is answered by the pump at once; one reusing the id of the call in flight is not its answer', async (t) => {
    const pump = await startPump(t);
    await pump.start(mockParams('normal'));
    const ask = async (method: string, sameId: boolean) => ((await pump.callTool('askClient', { method, sameId })) as { response: unknown }).response;
    assert.deepEqual(await ask('ping', false), { jsonrpc: '2.0', id: 'srv-0', result: {} });
    // Requests 1 and 2 were initialize and tools/list, 3 the call above: this call and its ping are both id 4.
    assert.deepEqual(await ask('ping', true), { jsonrpc: '2.0', id: 4, result: {} });
    assert.equal(pump.messages.length, 0, 'ping never leaves the pump');
  });

  test('respawn_rate_limit_blocks_too_fast_respawn, then a respawn after the window replaces the child; ids keep rising', async (t) => {
    const pump = await startPump(t);
    const first = await pump.start(mockParams('normal'));
    const spawnedAt = Date.now();
    const before = (await pump.callTool('whoami')) as { id: number };
    await assert.rejects(pump.start(mockParams('normal')), (err: Error & { code?: string }) => {
      assert.equal(err.code, ErrorCode.UPSTREAM_SPAWN_FAILED);
      assert.match(err.message, /^Upstream 'mock' respawning too fast \(\d+ms since last spawn, min 5000ms\)$/);
      return true;
    });
    assert.ok(isAlive(first.pid), 'a refused respawn leaves the running child alone');
    await waitForRespawnWindow(spawnedAt);
    const second = await pump.start(mockParams('normal'));
    assert.notEqual(second.pid, first.pid);
    await pump.until(() => !isAlive(first.pid), 5_000, 'the first child to be gone');
    assert.equal(pump.exited.length, 1);
    assert.equal(pump.exited[0]!.pid, first.pid);
    const after = (await pump.callTool('whoami')) as { id: number };
    assert.ok(after.id > before.id, `request ids must keep rising across respawns (${before.id} then ${after.id})`);
  });

  test('shutdown_is_idempotent and kills the process group (a grandchild dies too)', async (t) => {
    const pump = await startPump(t);
    const started = await pump.start(mockParams('normal'));
    const { pid: grandchild } = (await pump.callTool('grandchild')) as { pid: number };
    assert.ok(isAlive(grandchild));
    await Promise.all([pump.client.request('shutdown', {}), pump.client.request('shutdown', {})]);
    await pump.client.request('shutdown', {});
    assert.equal(isAlive(started.pid), false);
    await pump.until(() => !isAlive(grandchild), 3_000, 'the grandchild to die with the group');
    assert.equal(pump.exited.length, 1);
    assert.equal(pump.exited[0]!.reason, 'shut down');
    assert.equal((await pump.client.request('status', {})).alive, false);
  });

  test('shutdown SIGKILLs a child that ignores EOF and SIGTERM after the grace period', async (t) => {
    const pump = await startPump(t);
    const started = await pump.start(mockParams('normal', { env: { MOCK_IGNORE_EOF: '1' } }));
    const { pid: grandchild } = (await pump.callTool('grandchild')) as { pid: number };
    await pump.client.request('shutdown', {});
    assert.equal(isAlive(started.pid), false);
    assert.equal(pump.exited[0]!.signal, 'SIGKILL');
    await pump.until(() => !isAlive(grandchild), 3_000, 'the grandchild to die with the group');
  });
});
