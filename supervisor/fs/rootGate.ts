/**
 * deny_unless_in_roots: an absolute path a client names reaches the file system only inside a known
 * repository root (registered, a live session's, or one of their worktrees). `..`, NUL and relative
 * paths are refused BEFORE the containment check: `/repo/../../etc/passwd` would otherwise pass a
 * lexical prefix test while the OS resolves it outside. Containment compares whole path components,
 * so `/src/app-evil` is not inside `/src/app`. A symlink inside a root may point elsewhere inside a
 * root; one pointing outside every root is refused too (the real path of the deepest existing
 * ancestor must also be inside a root).
 */
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, resolve, sep } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import { hasDotDot } from '../repos/repoArgs.js';

export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The real path of `path`, or of its deepest existing ancestor joined with the rest (a file about to be written). */
async function realPathOrAncestor(path: string): Promise<string> {
  let current = path;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await realpath(current);
      return rest.length === 0 ? real : resolve(real, ...rest.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      rest.push(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      current = parent;
    }
  }
}

/** Contains an already validated absolute path: forbidden unless it, and where it really leads, is inside a root. */
export async function containedPath(roots: readonly string[], path: string): Promise<string> {
  const full = resolve(path);
  const lexical = roots.map((r) => resolve(r)).filter((r) => isInside(full, r));
  if (lexical.length === 0) throw new ApiError('forbidden', 'Access denied: path is outside every registered repository');
  const real = await realPathOrAncestor(full);
  for (const r of lexical) {
    const realRoot = await realPathOrAncestor(r);
    if (isInside(real, realRoot)) return full;
  }
  throw new ApiError('forbidden', 'Access denied: path leads outside its repository (symlink)');
}

/** The whole gate for a client-supplied path (a non-empty string): NUL, `..` and relative paths are forbidden too. */
export async function denyUnlessInRoots(value: string, key: string, roots: readonly string[]): Promise<string> {
  if (value.includes('\0')) throw new ApiError('forbidden', `Access denied: '${key}' contains a NUL byte`);
  if (hasDotDot(value)) throw new ApiError('forbidden', `Access denied: '${key}' contains '..' (path traversal)`);
  if (!isAbsolute(value)) throw new ApiError('forbidden', `Access denied: '${key}' must be an absolute path`);
  return containedPath(roots, value);
}
