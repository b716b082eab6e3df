/**
 * A shell that cannot be started (missing, a directory, not executable, not on PATH) is a spawn
 * failure (PTY_SPAWN_FAILED, the supervisor's 500), not a session that exists and exits 1 with
 * node-pty's "execvp(3) failed"; nothing of it stays in the host and the id can be used again.
 */

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ErrorCode } from '../../../shared/errors.js';
import { baseEnv, type PtyHostHandle, startPtyHost } from './ptyHostHarness.js';

describe('pty host: a shell that cannot start', () => {
  let host: PtyHostHandle;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-pty-spawnfail-'));
    host = await startPtyHost();
  });
  after(async () => {
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('missing path, directory, non-executable file, unknown name on PATH: refused, nothing left behind', async () => {
    const notExecutable = join(dir, 'not-executable.sh');
    writeFileSync(notExecutable, '#!/bin/sh\necho hi\n');
    chmodSync(notExecutable, 0o644);
    for (const shell of [join(dir, 'missing-shell'), dir, notExecutable, 'no-such-shell-tuicd']) {
      const session_id = `bad-${shell.length}-${Math.random().toString(36).slice(2)}`;
      const spawn = { session_id, shell, args: [], cwd: tmpdir(), env: baseEnv(), rows: 24, cols: 80 };
      await assert.rejects(host.client.request('spawn', spawn), { code: ErrorCode.PTY_SPAWN_FAILED }, shell);
      const { sessions } = await host.client.request('processes', {});
      assert.ok(!sessions.some((s) => s.session_id === session_id), `${shell}: a session was left in the host`);
      await assert.rejects(host.client.request('readRaw', { session_id }), { code: ErrorCode.PTY_NOT_FOUND });
      // The id is free again: the same id with a real shell starts.
      await host.client.request('spawn', { ...spawn, shell: '/bin/sh', args: ['-c', 'exit 0'] });
      await host.waitForExit(session_id);
      await host.client.request('forget', { session_id });
    }
  });

  test('a shell named without a slash is found on the child PATH', async () => {
    const { id } = await host.spawnSession({ shell: 'sh', args: ['-c', 'echo found-on-path'] });
    await host.waitForText(id, 'found-on-path');
    assert.equal((await host.waitForExit(id)).exit_code, 0);
  });
});
