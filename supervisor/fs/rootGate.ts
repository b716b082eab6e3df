/**
 * The root gate: every path a request names (a repository argument, a file in it, an absolute file,
 * a transfer's sources and destination, a working directory) reaches the file system only inside a
 * root: a registered repository, one of its worktrees, or a live session's working directory (and
 * the repository that holds it). `..`, NUL and relative paths are refused BEFORE the containment
 * check: `/repo/../../etc/passwd` would otherwise pass a lexical prefix test while the OS resolves it
 * outside. Containment compares real paths (symlinks resolved with realpath, on the path and on the
 * roots) by whole components, so `/src/app-evil` is not inside `/src/app`, a symlink out of a root is
 * refused and one into another root is not. A path that does not exist yet (a file about to be
 * written) is judged by the real path of its deepest existing ancestor. The refusal is `forbidden`
 * and names only the argument, never the file, and is the same whether the file exists or not.
 *
 * Writes (and deletes, moves, directories made) are refused below a `.git` component of a root: a
 * repository's config, hooks and attributes there name commands git runs (`core.fsmonitor`,
 * `core.pager`, filter drivers, hooks), so a file write would become a command.
 */
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';

import { ApiError } from '../../shared/apiError.js';

/** True when a path has a `..` segment: it must be refused before any resolution hides it. */
export function hasDotDot(path: string): boolean {
  return path.split(/[\\/]/).includes('..');
}

export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The real path of `path`, or of its deepest existing ancestor joined with the rest (a file about to be written). */
export function realPathOrAncestor(path: string): string {
  let current = path;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return rest.length === 0 ? real : resolve(real, ...rest.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      rest.push(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      current = parent;
    }
  }
}

/** How long the roots' real paths are reused while the list of roots stays the same. */
const ROOTS_TTL_MS = 1000;

const outside = (key: string) => new ApiError('forbidden', `Access denied: '${key}' is outside every registered repository, worktree and session directory`);

export class RootGate {
  private cache: { key: string; at: number; real: string[] } | null = null;

  /** `roots`: the roots now (absolute paths; called on every check, so cheap). */
  constructor(private readonly roots: () => readonly string[]) {}

  /** The roots' real paths (a root that does not exist stands for itself). */
  private realRoots(): string[] {
    const roots = this.roots();
    const key = roots.join('\0');
    const now = Date.now();
    if (this.cache && this.cache.key === key && now - this.cache.at < ROOTS_TTL_MS) return this.cache.real;
    const real = [...new Set(roots.map((r) => realPathOrAncestor(resolve(r))))];
    this.cache = { key, at: now, real };
    return real;
  }

  /** Whether an absolute path without `..` leads inside a root. */
  allows(path: string): boolean {
    const real = realPathOrAncestor(resolve(path));
    return this.realRoots().some((r) => isInside(real, r));
  }

  /** An already validated absolute path (no NUL, no `..`), resolved; forbidden unless it leads inside a root. */
  contain(path: string, key: string): string {
    const full = resolve(path);
    if (!this.allows(full)) throw outside(key);
    return full;
  }

  /**
   * A path about to be written, created, deleted or moved (already through the gate): forbidden when
   * its real path lies in a `.git` directory (or is a `.git` file) below the root that holds it.
   */
  writable(path: string, key: string): string {
    const full = resolve(path);
    const real = realPathOrAncestor(full);
    let holder: string | undefined;
    for (const root of this.realRoots()) if (isInside(real, root) && (holder === undefined || root.length > holder.length)) holder = root;
    if (holder === undefined) throw outside(key);
    if (real.slice(holder.length).split(sep).includes('.git'))
      throw new ApiError(
        'forbidden',
        `Access denied: '${key}' is inside a repository's .git directory (git's own files are not written here: they can name commands git runs)`,
      );
    return full;
  }

  /** The whole gate for a client-supplied absolute path: NUL, `..` and relative paths are forbidden too. */
  absolute(value: string, key: string): string {
    if (value.includes('\0')) throw new ApiError('forbidden', `Access denied: '${key}' contains a NUL byte`);
    if (hasDotDot(value)) throw new ApiError('forbidden', `Access denied: '${key}' contains '..' (path traversal)`);
    if (!isAbsolute(value)) throw new ApiError('forbidden', `Access denied: '${key}' must be an absolute path`);
    return this.contain(value, key);
  }

  /** Whether a contained path is an existing directory (asked only after the gate, so it tells nothing about outside). */
  static isDirectory(path: string): boolean {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  }
}

/** A path inside one directory (a repository's file): forbidden unless its real path stays in that directory's. */
export function containedIn(dir: string, path: string, key: string): string {
  const full = resolve(path);
  if (!isInside(full, resolve(dir)) || !isInside(realPathOrAncestor(full), realPathOrAncestor(resolve(dir))))
    throw new ApiError('forbidden', `Access denied: '${key}' leads outside its repository`);
  return full;
}
