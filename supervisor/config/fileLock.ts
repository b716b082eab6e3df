// Serializes read-modify-write cycles on one file: an in-process mutex (cheap, FIFO) around a
// cross-process advisory lock on `<file>.lock`. proper-lockfile is used because Node has no flock:
// its mkdir-based lock is atomic on local and network filesystems, needs no native addon, and
// refreshes the lock's mtime so a lock left by a crashed process goes stale and can be taken over.

import { resolve } from 'node:path';

import lockfile from 'proper-lockfile';

export const FILE_LOCK_CONSTANTS = {
  /** A lock whose mtime is older than this belongs to a dead process (proper-lockfile refreshes it every STALE/2). */
  STALE_MS: 10_000,
  /**
   * Retry schedule while another process holds the lock: short first waits (a config save takes a
   * few ms), capped at 250 ms, ~20 s in total so a stale lock left by a crash is taken over.
   */
  RETRIES: { retries: 80, factor: 1.5, minTimeout: 5, maxTimeout: 250, randomize: true },
} as const;

export interface LockedContext {
  /** Throws if the cross-process lock was lost (e.g. event loop stalled past STALE_MS). */
  assertHeld(): void;
}

const tails = new Map<string, Promise<void>>();

/** FIFO mutex per key inside this process. */
async function withProcessMutex<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolveMine) => {
    release = resolveMine;
  });
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** Runs `fn` holding both locks for `filePath`; the lock file is `<filePath>.lock` (a directory). */
export async function withFileLock<T>(filePath: string, fn: (ctx: LockedContext) => Promise<T>): Promise<T> {
  const target = resolve(filePath);
  return withProcessMutex(target, async () => {
    let compromised: Error | undefined;
    const releaseLock = await lockfile.lock(target, {
      realpath: false, // the file may not exist yet
      lockfilePath: `${target}.lock`,
      stale: FILE_LOCK_CONSTANTS.STALE_MS,
      retries: { ...FILE_LOCK_CONSTANTS.RETRIES },
      onCompromised: (err) => {
        // The default handler throws from a timer and kills the process; fail the save instead.
        compromised = err;
      },
    });
    const ctx: LockedContext = {
      assertHeld() {
        if (compromised !== undefined) throw compromised;
      },
    };
    try {
      return await fn(ctx);
    } finally {
      if (compromised === undefined) await releaseLock();
    }
  });
}
