/** File operations of install-bridge: backups beside the file, and writes that never leave a half-written config. */
import { randomBytes } from 'node:crypto';
import { chmodSync, constants, copyFileSync, mkdirSync, realpathSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Mode of files install-bridge creates: agent configs may later hold tokens. */
const NEW_FILE_MODE = 0o600;

/** 20260102T030405678Z: sortable, and no two backups of one run share it (see the suffix loop). */
function stamp(now: Date): string {
  return now.toISOString().replace(/[-:.]/g, '');
}

/** Copies `file` to `<file>.tuicd-backup-<timestamp>` with its mode; returns the backup's path. */
export function backup(file: string, now: Date): string {
  const mode = statSync(file).mode & 0o7777;
  const base = `${file}.tuicd-backup-${stamp(now)}`;
  for (let n = 0; ; n++) {
    const target = n === 0 ? base : `${base}-${n}`;
    try {
      copyFileSync(file, target, constants.COPYFILE_EXCL);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    chmodSync(target, mode);
    return target;
  }
}

/**
 * Replaces the file's content through a temporary file and a rename, so an agent reading it meanwhile
 * sees the old or the new text, never a mix. A symlinked config (dotfile managers) is written through:
 * its target changes, the link stays. The mode is kept; a new file gets 0600 and its directories.
 */
export function writeAtomic(file: string, text: string): void {
  let target = file;
  let mode = NEW_FILE_MODE;
  try {
    target = realpathSync(file);
    mode = statSync(target).mode & 0o7777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(file), { recursive: true });
  }
  const tmp = join(dirname(target), `.${basename(target)}.tuicd-tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(tmp, text, { mode, flag: 'wx' });
    chmodSync(tmp, mode);
    renameSync(tmp, target);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // never created, or already renamed
    }
    throw err;
  }
}

/** Removes a file if it is there; whether it was. */
export function removeIfPresent(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
