// The foreground process of a real session's terminal, fresh and through the listing cache.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { FOREGROUND_LIST_TTL_MS, foregroundForListing, foregroundJobRuns, foregroundOf, processName } from '../../../supervisor/sessions/foreground.js';
import { call, idleShell, startHarness } from '../mcp/tools/sessionHarness.js';
import type { Harness } from '../mcp/tools/sessionHarness.js';
import { nodeBinary } from '../../helpers/node22.js';

let h: Harness;
before(() => {
  h = startHarness();
});
after(() => h.stop());

async function until<T>(read: () => T, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: last saw ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('a job in the foreground is seen fresh; the listing reuses its answer for one TTL, then refreshes', async () => {
  const id = await idleShell(h);
  const pid = h.sessions.get(id).pid;
  const atPrompt = foregroundOf(pid);
  assert.equal(atPrompt?.name, 'bash');
  assert.equal(atPrompt?.isSessionProcess, true);
  assert.equal(foregroundJobRuns(atPrompt), false);

  const t0 = 1_000_000;
  assert.equal(foregroundForListing(pid, t0)?.name, 'bash');
  await call(h.session, { action: 'input', session_id: id, input: 'sleep 30\r' });
  const job = await until(
    () => foregroundOf(pid),
    (fg) => fg?.name === 'sleep',
    'sleep in the foreground',
  );
  assert.equal(foregroundJobRuns(job), true);

  assert.equal(foregroundForListing(pid, t0 + FOREGROUND_LIST_TTL_MS - 1)?.name, 'bash', 'within the TTL the listing is not re-read');
  assert.equal(foregroundForListing(pid, t0 + FOREGROUND_LIST_TTL_MS)?.name, 'sleep', 'after it, it is');
  await call(h.session, { action: 'kill', session_id: id });
});

test('a Node 24 program started under an agent name is seen by that name, though Node 24 renames its comm to MainThread', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-fg-'));
  const agent = join(dir, 'codex');
  symlinkSync(nodeBinary(24), agent);
  const child = spawn(agent, ['-e', 'setTimeout(() => {}, 10_000)'], { stdio: 'ignore' });
  try {
    await until(
      () => readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim(),
      (c) => c === 'MainThread',
      'Node 24 renamed its main thread',
    );
    assert.equal(processName(child.pid!), 'codex');
    const sleeper = spawn('sleep', ['10'], { stdio: 'ignore' });
    try {
      await until(
        () => processName(sleeper.pid!),
        (n) => n === 'sleep',
        'any other program is named by its comm',
      );
    } finally {
      sleeper.kill('SIGKILL');
    }
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
