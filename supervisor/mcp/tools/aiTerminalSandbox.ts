/**
 * The file tools' sandbox: a session may touch files only under its own root — the git repository
 * its working directory is in (the directory it was started in; a `cd` in the shell does not move
 * it), else that directory. A path is checked the way the root gate checks the routes' paths: NUL
 * and `..` are refused before anything is resolved, a relative path is taken from the root, and
 * containment compares real paths, so an absolute path elsewhere or a symlink out is refused;
 * writes below `.git` are refused as well (git runs what its config names).
 */
import { realpathSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

import { ApiError } from '../../../shared/apiError.js';
import { hasDotDot, RootGate } from '../../fs/rootGate.js';
import { checkoutOf } from '../../repos/gitDirs.js';
import { toplevelOf } from '../../repos/gitRunner.js';
import type { WorkPool } from '../../pool/workPool.js';
import type { SessionRecord } from '../../sessions/sessionRecord.js';
import { ToolError } from './nativeTool.js';

/** Files a non-git root lists at most (a git root lists what git knows, .gitignore honoured). */
const MAX_WALKED_FILES = 50_000;
/** Directories a walk of a non-git root never enters. */
const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/** cwd → the checkout its `.git` search found and what `git rev-parse --show-toplevel` answered then. */
const toplevels = new Map<string, { checkout: string | null; toplevel: string | null }>();
const MAX_CACHED_TOPLEVELS = 256;

/**
 * The repository top of `cwd`, asked of git once per checkout rather than on every call: the answer
 * stands while the nearest `.git` up from `cwd` is the same one (a few stats), so a `git init` or a
 * removed repository is seen at the next call.
 */
async function cachedToplevel(cwd: string): Promise<string | null> {
  const checkout = checkoutOf(cwd)?.top ?? null;
  const hit = toplevels.get(cwd);
  if (hit !== undefined && hit.checkout === checkout) return hit.toplevel;
  const toplevel = checkout === null ? null : await toplevelOf(cwd).catch(() => null);
  if (toplevels.size >= MAX_CACHED_TOPLEVELS) toplevels.clear();
  toplevels.set(cwd, { checkout, toplevel });
  return toplevel;
}

export class SessionSandbox {
  private readonly gate: RootGate;

  private constructor(
    /** The root's real path. */
    readonly root: string,
    /** Whether the root is a git work tree (listing honours .gitignore). */
    readonly isGit: boolean,
  ) {
    this.gate = new RootGate(() => [root]);
  }

  static async of(record: SessionRecord): Promise<SessionSandbox> {
    const top = await cachedToplevel(record.cwd);
    try {
      return new SessionSandbox(realpathSync.native(top ?? record.cwd), top !== null);
    } catch {
      throw new ToolError('not_found', 'No filesystem sandbox for the requested session (its directory no longer exists)');
    }
  }

  /** A client-named path inside the root, absolute; `write` also refuses git's own files. */
  resolve(value: string, key: string, opts: { write?: boolean } = {}): string {
    if (value.includes('\0')) throw new ToolError('forbidden', `Access denied: '${key}' contains a NUL byte`, { field: key });
    if (hasDotDot(value)) throw new ToolError('forbidden', `Access denied: '${key}' contains '..' (path traversal)`, { field: key });
    const full = isAbsolute(value) ? resolve(value) : resolve(this.root, value);
    try {
      this.gate.contain(full, key);
      if (opts.write) this.gate.writable(full, key);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'forbidden' && /outside/.test(err.message))
        throw new ToolError('forbidden', `Access denied: '${key}' is outside the session's sandbox (${this.root})`, { field: key });
      throw err;
    }
    return full;
  }

  static isDirectory(path: string): boolean {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  }

  /** The path relative to the root, `/`-separated ('' for the root). */
  relative(full: string): string {
    return relative(this.root, full).split(sep).join('/');
  }

  /** Every file under the root (relative paths): git's listing for a repository, a bounded walk otherwise. */
  async files(pool: WorkPool): Promise<string[]> {
    if (this.isGit) return pool.listFiles(this.root);
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      const entries = await readdir(join(this.root, dir), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        if (out.length >= MAX_WALKED_FILES) return;
        const rel = dir === '' ? e.name : `${dir}/${e.name}`;
        if (e.isDirectory() && !SKIPPED_DIRS.has(e.name)) await walk(rel);
        else if (e.isFile()) out.push(rel);
      }
    };
    await walk('');
    return out;
  }
}

/**
 * A glob as a RegExp over `/`-separated relative paths: `**` any depth, `*` and `?` within one
 * component, `{a,b}` alternatives. A pattern without `/` matches a file's name at any depth.
 */
export function globRegExp(pattern: string): RegExp {
  const anchored = pattern.includes('/') ? pattern.replace(/^\.?\//, '') : `**/${pattern}`;
  let out = '';
  let braces = 0;
  for (let i = 0; i < anchored.length; i++) {
    const c = anchored[i]!;
    if (c === '*' && anchored[i + 1] === '*') {
      // `**/` is zero or more directories; a trailing `**` is anything.
      if (anchored[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  if (braces > 0) throw new ToolError('invalid_input', `'pattern' has an unclosed '{'`, { field: 'pattern' });
  return new RegExp(`^${out}$`);
}
