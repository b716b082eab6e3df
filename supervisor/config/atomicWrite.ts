// Crash-safe file replacement: a reader sees the old file or the new one, never a torn write.
// Temp file in the same directory (rename is only atomic within one filesystem), fsync, rename,
// then fsync the directory so the rename itself survives a power cut.

import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** Permission bits of the new file; applied with fchmod so the umask cannot widen or narrow it. */
  mode: number;
  /** Last check before the rename (e.g. "is the lock still ours?"); throwing aborts the write. */
  beforeRename?: () => void;
}

/** Temp names start with a dot and end in `.tmp` so they are easy to spot and never collide. */
export function tempPathFor(filePath: string): string {
  const suffix = `${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  return join(dirname(filePath), `.${basename(filePath)}.${suffix}`);
}

async function fsyncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (err) {
    // Windows cannot open or fsync a directory (EISDIR/EPERM); the rename is still atomic there.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL') throw err;
  } finally {
    await handle?.close();
  }
}

/** Replaces `filePath` with `data` (text as UTF-8, or bytes) atomically. On any failure the temp file is removed. */
export async function atomicWriteFile(filePath: string, data: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
  const tmp = tempPathFor(filePath);
  try {
    const handle = await open(tmp, 'wx', options.mode);
    try {
      await handle.chmod(options.mode);
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    options.beforeRename?.();
    await rename(tmp, filePath);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncDirectory(dirname(filePath));
}
