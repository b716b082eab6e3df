/**
 * Plugin data files: each plugin reads and writes only under `<config dir>/plugins/<id>/data/`.
 * A path is refused before any file is touched when it could leave that directory as written
 * (`..`, `.`, absolute, NUL, backslash) and again after symlinks are resolved (a link that points
 * out), so neither a crafted path nor a link planted in the directory reaches another file.
 */
import { lstat, mkdir, readFile, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import { atomicWriteFile } from '../config/atomicWrite.js';
import { hasDotDot, isInside } from '../fs/rootGate.js';

export const PluginDataLimits = {
  /** Longest relative path accepted. */
  PATH_CHARS: 1024,
  /** A read larger than this is refused (the route answers the whole file in one body). */
  READ_BYTES: 8 * 1024 * 1024,
} as const;

export const PLUGIN_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
const PLUGIN_ID = new RegExp(PLUGIN_ID_PATTERN);

const traversal = (why: string) => new ApiError('invalid_input', `Path traversal is not allowed: ${why}`, { extra: { field: 'path' } });

export class PluginData {
  constructor(private readonly pluginsDir: string) {}

  /** `<config dir>/plugins/<id>/data` (not created). */
  dataDir(pluginId: string): string {
    if (!PLUGIN_ID.test(pluginId)) throw new ApiError('invalid_input', `invalid plugin id '${pluginId.slice(0, 200)}'`, { extra: { field: 'plugin_id' } });
    return join(this.pluginsDir, pluginId, 'data');
  }

  /** The file's bytes; not_found when it or the plugin's data directory is missing. */
  async read(pluginId: string, relPath: string): Promise<Buffer> {
    const dir = this.dataDir(pluginId);
    const segments = checkRelative(relPath);
    const root = await realOrMissing(dir, relPath);
    const target = await realOrMissing(join(dir, ...segments), relPath);
    inside(root, target);
    const info = await stat(target);
    if (!info.isFile()) throw new ApiError('not_found', `plugin data file not found: ${relPath}`);
    if (info.size > PluginDataLimits.READ_BYTES)
      throw new ApiError('payload_too_large', `plugin data file is ${info.size} bytes; at most ${PluginDataLimits.READ_BYTES} are served`);
    return readFile(target);
  }

  /** Replaces (or creates) the file atomically, creating its directories inside the data directory. */
  async write(pluginId: string, relPath: string, content: Buffer): Promise<void> {
    const dir = this.dataDir(pluginId);
    const segments = checkRelative(relPath);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const root = await realpath(dir);
    // Each directory on the way is checked before it is used: a link among them could point out.
    let parent = root;
    for (const name of segments.slice(0, -1)) {
      const next = join(parent, name);
      await mkdir(next, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      parent = await realpath(next);
      inside(root, parent);
    }
    const file = join(parent, segments[segments.length - 1]!);
    const existing = await lstat(file).catch(() => undefined);
    if (existing?.isDirectory()) throw new ApiError('conflict', `${relPath} is a directory`);
    // A link in the file's place is replaced by the rename, never followed: the bytes stay inside.
    await atomicWriteFile(file, content, { mode: 0o600 });
  }

  /** Plugin ids that have a directory under plugins/ (for GET /plugins/list). */
  async ids(): Promise<string[]> {
    const entries = await readdir(this.pluginsDir, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory() && PLUGIN_ID.test(e.name)).map((e) => e.name);
  }
}

/** The path's segments once it is known to stay where it is written: relative, no `.`/`..`, no NUL or backslash. */
function checkRelative(relPath: string): string[] {
  if (relPath.length === 0) throw new ApiError('invalid_input', 'path is required', { extra: { field: 'path' } });
  if (relPath.length > PluginDataLimits.PATH_CHARS)
    throw new ApiError('invalid_input', `path is longer than ${PluginDataLimits.PATH_CHARS} characters`, { extra: { field: 'path' } });
  if (relPath.includes('\0')) throw traversal('NUL in path');
  if (relPath.includes('\\')) throw traversal('backslash in path');
  if (relPath.startsWith('/')) throw traversal('absolute path');
  if (hasDotDot(relPath)) throw traversal("'..' segment");
  const segments = relPath.split('/');
  for (const s of segments) {
    if (s === '.') throw traversal("'.' segment");
    if (s === '') throw traversal('empty segment');
  }
  return segments;
}

async function realOrMissing(path: string, relPath: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new ApiError('not_found', `plugin data file not found: ${relPath}`);
    }
    throw err;
  }
}

/** Containment by whole components on real paths, as the root gate checks every other path. */
function inside(root: string, target: string): void {
  if (!isInside(target, root)) throw traversal('it resolves outside the plugin data directory');
}
