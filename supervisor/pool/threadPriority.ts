/**
 * Pool threads run at a lower CPU priority than the supervisor's event loop: on a machine with one
 * core already busy, a content search on both pool threads otherwise competes with the loop on
 * equal terms and the streams' latency follows. Linux schedules threads individually, so setting
 * the nice value of this thread's id (from /proc/thread-self) lowers only this thread; the git
 * processes it starts inherit it. Elsewhere this does nothing.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice 10: still gets every idle cycle, yields to the loop when both want the core. */
export const POOL_THREAD_NICE = 10;

/** Lowers the calling thread's priority; false where the platform offers no per-thread id. */
export function lowerThisThreadsPriority(nice: number = POOL_THREAD_NICE): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
