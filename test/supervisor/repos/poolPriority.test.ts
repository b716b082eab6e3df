// Pool threads yield the CPU to the supervisor's loop: after the real pool ran a task, a thread of
// this process runs at POOL_THREAD_NICE while the main thread keeps its own priority (Linux only).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, it } from 'node:test';

import { WorkPool } from '../../../supervisor/pool/workPool.js';
import { POOL_THREAD_NICE } from '../../../supervisor/pool/threadPriority.js';

/** Nice value of each thread of this process, from /proc/self/task/<tid>/stat (field 19). */
function threadNices(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd on
      out.set(Number(tid), Number(fields[16]));
    } catch {
      // The thread ended while listing.
    }
  }
  return out;
}

describe('pool thread priority', { skip: !existsSync('/proc/thread-self') && 'needs Linux /proc' }, () => {
  it('a pool thread runs at nice 10; the main thread is left as it was', async () => {
    const mainBefore = getPriority();
    const before = [...threadNices().values()].filter((n) => n === POOL_THREAD_NICE).length;
    const pool = new WorkPool();
    try {
      await pool.gitText(process.cwd(), ['--version']);
      const lowered = [...threadNices().values()].filter((n) => n === POOL_THREAD_NICE).length;
      assert.ok(lowered > before, `no thread at nice ${POOL_THREAD_NICE}: ${JSON.stringify([...threadNices()])}`);
      assert.equal(getPriority(), mainBefore, 'the main thread keeps its priority');
      assert.equal(threadNices().get(process.pid), mainBefore);
    } finally {
      await pool.destroy();
    }
  });
});
