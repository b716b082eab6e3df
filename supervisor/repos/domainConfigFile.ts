/**
 * One per-domain JSON file in the config dir (repositories.json, repo-settings.json,
 * repo-defaults.json, prompt-library.json): GET returns it (a missing file is `{}`), PUT replaces it
 * atomically under the cross-process file lock, and `update` reads, changes and writes it under that lock. Never cached: another writer (ProjectUpstreams, another process) may
 * change the file. The content belongs to the client; only its top-level shape is checked.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import { atomicWriteFile } from '../config/atomicWrite.js';
import { type LockedContext, withFileLock } from '../config/fileLock.js';
import { isPlainObject } from '../config/merge.js';

export type JsonObject = Record<string, unknown>;

export class DomainConfigFile {
  readonly path: string;
  constructor(
    configDir: string,
    readonly fileName: string,
    /** Checks a body before it is written; throws an ApiError (invalid_input) the client reads. */
    private readonly validate: (value: JsonObject) => void = () => undefined,
  ) {
    this.path = join(configDir, fileName);
  }

  async read(): Promise<JsonObject> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
    const parsed: unknown = JSON.parse(text);
    if (!isPlainObject(parsed)) throw new Error(`${this.fileName} does not hold a JSON object`);
    return parsed as JsonObject;
  }

  async write(value: unknown): Promise<void> {
    if (!isPlainObject(value)) throw new ApiError('invalid_input', `${this.fileName} must be a JSON object`);
    this.validate(value as JsonObject);
    await withFileLock(this.path, (lock) => this.writeLocked(value as JsonObject, lock));
  }

  /**
   * Read-modify-write: `change` gets the content as it is now (`{}` for a missing file) and returns
   * the next; no other writer, in this process or another, comes between the read and the write.
   */
  async update(change: (current: JsonObject) => JsonObject): Promise<void> {
    await withFileLock(this.path, async (lock) => {
      const next = change(await this.read());
      this.validate(next);
      await this.writeLocked(next, lock);
    });
  }

  private async writeLocked(value: JsonObject, lock: LockedContext): Promise<void> {
    await atomicWriteFile(this.path, JSON.stringify(value, null, 2) + '\n', { mode: 0o600, beforeRename: () => lock.assertHeld() });
  }
}
