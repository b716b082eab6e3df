/**
 * Output rings and line logs growing towards their caps must not make V8 run full collections: V8
 * counts ArrayBuffer memory allocated since the last mark-compact against the old generation's
 * limit, and the pty host's heap is small, so with 500 busy sessions their growth forced a full
 * collection every ~0.4 s (see workers/pty/longLivedBytes.ts). Each case runs in a fresh node with
 * the pty host's young-generation size, grows 64 MiB of rings (or logs) across event-loop turns on
 * a heap just collected, and counts the major collections V8 ran meanwhile (perf_hooks' gc entries):
 * with Buffer.allocUnsafeSlow storage it ran several, with long-lived storage none.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

const GROWTH_SCRIPT = `
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
const { OutputRing } = await import(process.env.RING_URL);
const { LineLog } = await import(process.env.LOG_URL);
const kind = process.argv[1];
globalThis.gc();
let majors = 0;
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
});
observer.observe({ entryTypes: ['gc'] });
const kept = [];
const MIB = 1024 * 1024;
const piece = Buffer.alloc(64 * 1024, 0x78);
const line = 'x'.repeat(2047);
// 64 owners of 1 MiB each, filled 64 KiB at a time, one turn per 64 KiB step across all owners.
for (let i = 0; i < 64; i++) kept.push(kind === 'ring' ? new OutputRing(MIB) : new LineLog(100000, MIB));
for (let step = 0; step < 16; step++) {
  for (const owner of kept) {
    if (kind === 'ring') owner.append(piece);
    else for (let n = 0; n < 32; n++) owner.append(line);
  }
  await turn();
}
await sleep(50);
observer.disconnect();
const held = kept.reduce((sum, owner) => sum + owner.heldBytes, 0);
process.stdout.write(JSON.stringify({ majors, held }));
`;

function grow(kind: 'ring' | 'log'): { majors: number; held: number } {
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=4', '--input-type=module', '-e', GROWTH_SCRIPT, kind], {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      RING_URL: new URL('../../../workers/pty/outputRing.js', import.meta.url).href,
      LOG_URL: new URL('../../../workers/pty/lineLog.js', import.meta.url).href,
    },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { majors: number; held: number };
}

describe('long-lived session storage', () => {
  for (const kind of ['ring', 'log'] as const) {
    test(`64 MiB of ${kind} growth runs no full collection`, () => {
      const { majors, held } = grow(kind);
      assert.ok(held >= 60 * 1024 * 1024, `the ${kind}s grew (${held} bytes held)`);
      assert.equal(majors, 0, `${majors} full collections while the ${kind}s grew`);
    });
  }
});
