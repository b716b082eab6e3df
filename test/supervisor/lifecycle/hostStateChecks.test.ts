/**
 * The pty host's state file is trusted only when it is this user's and owner-only: a file opened to
 * others, or one that is not JSON of the expected shape, is refused with a clear error and never
 * connected to; the host it names is left alone.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { readHostState } from '../../../supervisor/hosts/ptyHostState.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { createCounter, hostPid, isAlive, killAll, orphanedCounter } from './keepHelpers.js';

const ENV = { TUIC_CREDENTIAL_STORE: 'file' };

test('a state file open to others is refused and its host left alone; a malformed one is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-hoststate-'));
  const run = await orphanedCounter(t, dir, ENV);
  const { session: s, host } = run;

  const statePath = join(dir, 'pty-host.json');
  chmodSync(statePath, 0o644);
  assert.throws(() => readHostState(statePath), /has mode 644, not owner-only/);
  run.tuicd = await Tuicd.start({ configDir: dir, env: ENV });
  await run.tuicd.waitForStderr(/could not adopt the running pty host/);
  const refused = await run.tuicd.socket('POST', '/sessions', JSON.stringify({ cwd: dir, shell: '/bin/sh' }), { 'content-type': 'application/json' });
  assert.notEqual(refused.status, 201);
  assert.match(refused.text, /not owner-only/);
  assert.ok(isAlive(host) && isAlive(s.pid), 'the host it names is left alone');
  // Not stop(): the test helper would end the host it finds.
  run.tuicd.child.kill('SIGTERM');
  await run.tuicd.exited;

  const malformed = join(dir, 'malformed.json');
  writeFileSync(malformed, '{"pid": "nope"}', { mode: 0o600 });
  assert.throws(() => readHostState(malformed), /malformed/);
  chmodSync(statePath, 0o600);
  // Back to owner-only and well-formed: adopted.
  run.tuicd = await Tuicd.start({ configDir: dir, env: ENV });
  const rows = (await run.tuicd.socket('GET', '/sessions')).json<Array<{ session_id: string; pid: number }>>();
  assert.equal(rows[0]?.pid, s.pid);
});

test('a pty host killed outright leaves a stale state file and socket: the next start replaces them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-hoststale-'));
  let tuicd = await Tuicd.start({ configDir: dir, env: ENV });
  const pids: number[] = [];
  t.after(async () => {
    await tuicd.stop();
    killAll(dir, pids);
    rmSync(dir, { recursive: true, force: true });
  });
  const s = await createCounter(tuicd, dir);
  pids.push(s.pid);
  const host = hostPid(dir)!;
  const oldSocket = readHostState(join(dir, 'pty-host.json'))!.socket;
  tuicd.child.kill('SIGKILL');
  await tuicd.exited;
  process.kill(host, 'SIGKILL');
  process.kill(-s.pid, 'SIGKILL');
  await waitFor(() => !isAlive(host), 'the host to be gone');
  assert.ok(existsSync(oldSocket), 'SIGKILL leaves the socket file');

  tuicd = await Tuicd.start({ configDir: dir, env: ENV });
  assert.deepEqual((await tuicd.socket('GET', '/sessions')).json(), []);
  const fresh = await createCounter(tuicd, dir);
  pids.push(fresh.pid);
  assert.notEqual(hostPid(dir), host);
  assert.equal(existsSync(oldSocket), false, 'the stale socket file is removed');
});

test("a second tuicd on a live one's config dir never replaces its pty host, even one it could not speak to", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-hostsecond-'));
  const tuicd = await Tuicd.start({ configDir: dir, env: ENV });
  const pids: number[] = [];
  t.after(async () => {
    await tuicd.stop();
    killAll(dir, pids);
    rmSync(dir, { recursive: true, force: true });
  });
  const s = await createCounter(tuicd, dir);
  pids.push(s.pid);
  const host = hostPid(dir)!;
  // As a newer build would see it: a host of another protocol version.
  const statePath = join(dir, 'pty-host.json');
  writeFileSync(statePath, JSON.stringify({ ...readHostState(statePath), protocol_version: 999 }), { mode: 0o600 });
  const second = await Tuicd.runToExit(['--config-dir', dir], ENV);
  assert.notEqual(second.code, 0);
  assert.ok(isAlive(host) && isAlive(s.pid), "the first tuicd's host and session live on");
  assert.equal((await tuicd.socket('GET', '/sessions')).json<Array<{ pid: number }>>()[0]?.pid, s.pid);
});
