/**
 * A supervisor that leaves its pty host running (detach) exits only once the frames it sent last
 * (the sessions' records) have reached the host: the next supervisor adopts the latest state. The
 * host is stopped (SIGSTOP) while the records are sent, so they queue in the leaving process; it
 * resumes once that process says it is detaching.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';

import { DetachedHostStarter } from '../../../supervisor/hosts/detachedHostStarter.js';
import { type AdoptResult, PtyHost } from '../../../supervisor/hosts/ptyHost.js';
import { isHostOf } from '../../../supervisor/hosts/ptyHostState.js';

const CHILD = new URL('./fixtures/detachRecordsChild.js', import.meta.url).pathname;
const noop = () => undefined;

test('detach waits until the last records are written before the supervisor exits', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pty-detach-flush-'));
  const statePath = join(dir, 'pty-host.json');
  let hostPid: number | null = null;
  const child = spawn(process.execPath, [CHILD, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const childExited = once(child, 'exit');
  const next = new PtyHost(
    new DetachedHostStarter({
      entry: new URL('../../../workers/pty/main.js', import.meta.url).pathname,
      env: process.env,
      configDir: dir,
      logDir: join(dir, 'logs'),
      instance: null,
      orphanTimeoutMs: () => 60_000,
      log: { info: noop, warn: noop },
    }),
    { info: noop, warn: noop, error: noop },
  );
  t.after(async () => {
    child.kill('SIGKILL');
    if (hostPid !== null && isHostOf(hostPid, statePath)) process.kill(hostPid, 'SIGCONT');
    await next.stop();
    if (hostPid !== null && isHostOf(hostPid, statePath)) process.kill(hostPid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = JSON.parse(String((await lines.next()).value)) as { host_pid: number; session_id: string };
  hostPid = first.host_pid;
  assert.ok(isHostOf(hostPid, statePath));
  process.kill(hostPid, 'SIGSTOP');
  child.stdin!.write('go\n');
  assert.equal((await lines.next()).value, 'detaching');
  process.kill(hostPid, 'SIGCONT');
  await childExited;

  let adopted: AdoptResult | undefined;
  next.onAdopted((a) => (adopted = a));
  await next.client();
  const row = adopted?.sessions.find((s) => s.session_id === first.session_id);
  assert.ok(row, 'the session is adopted');
  assert.ok(row.record !== undefined, 'with a record');
  const record = JSON.parse(row.record) as { n: number; last: boolean };
  assert.equal(record.n, 32, 'the last record sent is the one the host kept');
  assert.equal(record.last, true);
});
