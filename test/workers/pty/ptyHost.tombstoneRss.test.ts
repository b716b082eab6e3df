/**
 * Closed sessions' memory (issue 26 item 5), measured: 100 sessions that each print 1 MB and exit
 * grow a real pty host's RSS by well under what their full buffers held (2 MiB ring plus ~1 MB of
 * log lines each: over 300 MB before tombstones). The bound is loose (the closed-session budget's
 * worth plus 100 MB) so a loaded machine does not flake it; the bench reports the figure.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { type PtyHostHandle, startPtyHost } from './ptyHostHarness.js';

const SESSIONS = 100;
const AT_ONCE = 4;
const MB = 1024 * 1024;

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m === null) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

describe('pty host: memory of closed sessions stays bounded over a churn', () => {
  let host: PtyHostHandle;
  let dir: string;
  before(async () => {
    host = await startPtyHost();
    dir = mkdtempSync(join(tmpdir(), 'tuicd-churn-'));
  });
  after(async () => {
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test(`${SESSIONS} sessions × 1 MB printed and exited: the host's RSS grows by less than 64 MiB + 100 MB`, { timeout: 90_000 }, async () => {
    const file = join(dir, 'one-mb.txt');
    // 10,000 lines of 100 bytes: the ring and the line log both fill as an ordinary flood would.
    writeFileSync(file, `${'y'.repeat(99)}\n`.repeat(10_000));
    const run = async () => {
      const { id } = await host.spawnSession({ args: ['-c', `cat '${file}'`] });
      await host.waitForExit(id, 60_000);
      host.record(id).chunks.length = 0; // the test's own copy is not the host's memory
    };
    // One first, so the baseline includes a session's worth of code paths warmed up.
    await run();
    const baseline = rssBytes(host.child.pid!);
    const started = Date.now();
    let peak = baseline;
    for (let i = 1; i < SESSIONS; i += AT_ONCE) {
      await Promise.all(Array.from({ length: Math.min(AT_ONCE, SESSIONS - i) }, run));
      peak = Math.max(peak, rssBytes(host.child.pid!));
    }
    const held = await host.client.request('tombstones', {});
    const growth = peak - baseline;
    process.stdout.write(
      `# churn: ${SESSIONS} × 1 MB in ${Date.now() - started} ms; host RSS ${(baseline / MB).toFixed(0)} → peak ${(peak / MB).toFixed(0)} MB ` +
        `(+${(growth / MB).toFixed(0)} MB); ${held.count} tombstones hold ${(held.bytes / MB).toFixed(1)} MB\n`,
    );
    assert.equal(held.count, SESSIONS, 'every tombstone fits the default budget');
    assert.ok(held.bytes <= held.budget_bytes);
    assert.ok(growth < held.budget_bytes + 100 * MB, `the host grew by ${(growth / MB).toFixed(0)} MB`);
  });
});
