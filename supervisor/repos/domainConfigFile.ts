/**
 * One per-domain JSON file in the config dir (repositories.json, repo-settings.json,
 * repo-defaults.json): GET returns it (a missing file is `{}`), PUT replaces it atomically under the
 * cross-process file lock. Never cached: another writer (ProjectUpstreams, another process) may
 * change the file. The content belongs to the client; only its top-level shape is checked.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import { atomicWriteFile } from '../config/atomicWrite.js';
import { withFileLock } from '../config/fileLock.js';
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
    await withFileLock(this.path, async (lock) => {
      await atomicWriteFile(this.path, JSON.stringify(value, null, 2) + '\n', { mode: 0o600, beforeRename: () => lock.assertHeld() });
    });
  }
}
