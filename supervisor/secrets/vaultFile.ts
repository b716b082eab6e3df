// The owner-only vault file: secret values when no OS keyring is reachable, plus the record of
// which secrets live in a keyring, so a keyring that is unreachable later reads as an error and
// never as "no secret". Written atomically (temp + fsync + rename) under a cross-process lock.

import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

import lockfile from 'proper-lockfile';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';

/** Only the owner may read the vault or list its directory. */
export const VAULT_FILE_MODE = 0o600;
export const VAULT_DIR_MODE = 0o700;
const VAULT_VERSION = 1;
/** A holder that crashed leaves a lock dir behind; older than this it is taken over. Writes take milliseconds. */
const LOCK_STALE_MS = 10_000;
/** Another process's write takes milliseconds: retry briefly rather than fail the caller. */
const LOCK_RETRIES = { retries: 40, minTimeout: 10, maxTimeout: 250 };

export interface VaultDoc {
  version: typeof VAULT_VERSION;
  /** Secret values held in this file. */
  secrets: Record<string, string>;
  /** Names whose value lives in an OS keyring, with the keyring's backend name. */
  keyring: Record<string, string>;
  /** Keyring copies superseded while that keyring was unreachable; deleted once it is back. */
  stale: Record<string, string>;
}

export function emptyVault(): VaultDoc {
  return { version: VAULT_VERSION, secrets: {}, keyring: {}, stale: {} };
}

function isStringMap(value: unknown): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'string');
}

function corrupt(path: string, problem: string): SupervisorError {
  return new SupervisorError(
    ErrorCode.VAULT_CORRUPT,
    `credential vault ${path} ${problem}; it was left untouched: repair it, or move it aside to start an empty vault`,
    { path },
  );
}

/** Parses and checks a vault document; anything unexpected is refused, never repaired. */
export function parseVault(text: string, path: string): VaultDoc {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw corrupt(path, `is not valid JSON (${(err as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw corrupt(path, 'is not a JSON object');
  const o = doc as Record<string, unknown>;
  if (o['version'] !== VAULT_VERSION) throw corrupt(path, `has unsupported version ${JSON.stringify(o['version'])} (expected ${VAULT_VERSION})`);
  for (const key of ['secrets', 'keyring', 'stale'] as const) {
    if (o[key] !== undefined && !isStringMap(o[key])) throw corrupt(path, `field "${key}" must be an object of strings`);
  }
  return {
    version: VAULT_VERSION,
    secrets: { ...(o['secrets'] as Record<string, string> | undefined) },
    keyring: { ...(o['keyring'] as Record<string, string> | undefined) },
    stale: { ...(o['stale'] as Record<string, string> | undefined) },
  };
}

function isOwnedByUs(uid: number): boolean {
  return typeof process.getuid !== 'function' || process.getuid() === uid;
}

export class VaultFile {
  /** Serialises this process's read-modify-write cycles; the lock file covers other processes. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The last document read, keyed by the file's identity (inode, size, mtime). */
  private cached: { key: string; doc: VaultDoc } | null = null;

  constructor(readonly path: string) {}

  /** Creates the directory owner-only and tightens an existing vault or directory that is not. */
  async prepare(): Promise<void> {
    const dir = dirname(this.path);
    await mkdir(dir, { recursive: true, mode: VAULT_DIR_MODE });
    for (const [target, mode] of [
      [dir, VAULT_DIR_MODE],
      [this.path, VAULT_FILE_MODE],
    ] as const) {
      const st = await stat(target).catch(() => null);
      // Only our own files: chmod on someone else's would fail, and their mode is their business.
      if (st !== null && (st.mode & 0o077) !== 0 && isOwnedByUs(st.uid)) await chmod(target, mode);
    }
  }

  /** The current document; a missing file is an empty vault, a malformed one a VAULT_CORRUPT error. */
  async read(): Promise<VaultDoc> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyVault();
      throw corrupt(this.path, `cannot be read (${(err as Error).message})`);
    }
    return parseVault(text, this.path);
  }

  /**
   * The current document for reading only (never mutate it): the file is parsed again only when it
   * changed (every write renames a new file into place, so its inode changes; another process's
   * too). Credentials are read on every upstream request: a stat instead of a read and a parse.
   */
  async peek(): Promise<Readonly<VaultDoc>> {
    let key: string;
    try {
      const st = await stat(this.path, { bigint: true });
      key = `${st.ino}:${st.size}:${st.mtimeNs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        this.cached = null;
        return emptyVault();
      }
      throw corrupt(this.path, `cannot be read (${(err as Error).message})`);
    }
    if (this.cached?.key === key) return this.cached.doc;
    // Replaced between the stat and the read: the newer document is cached under the older key,
    // so the next stat differs and reads again; nothing older than the file is ever served.
    const doc = await this.read();
    this.cached = { key, doc };
    return doc;
  }

  /**
   * Re-reads the file under the lock, lets `change` edit it (it may await keyring calls; throwing
   * aborts without writing) and writes it back atomically if it changed.
   */
  update<T>(change: (doc: VaultDoc) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.lockedUpdate(change));
    // The queue must survive a failed update; the caller still sees the failure through `run`.
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async lockedUpdate<T>(change: (doc: VaultDoc) => Promise<T>): Promise<T> {
    const release = await lockfile.lock(this.path, {
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: LOCK_RETRIES,
      // The default rethrows from a timer and kills the process; our write is atomic anyway, so a
      // lost lock only means a concurrent writer may win, as it would without the lock.
      onCompromised: () => undefined,
    });
    try {
      const doc = await this.read();
      const before = JSON.stringify(doc);
      const result = await change(doc);
      if (JSON.stringify(doc) !== before) await this.write(doc);
      return result;
    } finally {
      await release().catch(() => undefined); // already released or taken over as stale: nothing left to free
    }
  }

  private async write(doc: VaultDoc): Promise<void> {
    const tmp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      const fh = await open(tmp, 'wx', VAULT_FILE_MODE);
      try {
        await fh.chmod(VAULT_FILE_MODE); // the umask may have cleared bits we need; never adds any
        await fh.writeFile(`${JSON.stringify(doc, null, 2)}\n`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined); // never created, or already renamed: nothing to clean
      throw new SupervisorError(ErrorCode.VAULT_WRITE_FAILED, `cannot write credential vault ${this.path}: ${(err as Error).message}`, {
        path: this.path,
      });
    }
    await syncDir(dirname(this.path));
  }
}

/** Makes the rename durable. Some platforms (Windows) cannot open a directory: the rename stands. */
async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Directory fsync unsupported here (EISDIR/EPERM on Windows); the data file itself was synced.
  }
}
