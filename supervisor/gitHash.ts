/**
 * The commit tuicd runs from (`/api/version` git_hash), read from the checkout's .git once at start:
 * no `git` process, and nothing when tuicd was installed without its .git (then null).
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

const HASH_RE = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The commit HEAD names in the repository rooted at `root`, or null if there is none to read. */
export function readGitHash(root: string): string | null {
  const gitDir = resolveGitDir(root);
  if (gitDir === null) return null;
  const head = readText(join(gitDir, 'HEAD'));
  if (head === null) return null;
  if (HASH_RE.test(head)) return head; // detached HEAD
  const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
  if (ref === undefined || ref.split('/').includes('..')) return null;
  // A linked worktree's git dir holds its HEAD; branch refs live in the shared dir `commondir` names.
  const common = readText(join(gitDir, 'commondir'));
  const refDirs = common === null ? [gitDir] : [gitDir, isAbsolute(common) ? common : join(gitDir, common)];
  for (const dir of refDirs) {
    const loose = readText(join(dir, ref));
    if (loose !== null && HASH_RE.test(loose)) return loose;
  }
  // After `git gc` the ref lives only in packed-refs: "<hash> <ref>" lines.
  for (const dir of refDirs) {
    for (const line of (readText(join(dir, 'packed-refs')) ?? '').split('\n')) {
      const [hash, name] = line.split(' ');
      if (name === ref && hash !== undefined && HASH_RE.test(hash)) return hash;
    }
  }
  return null;
}

/** `.git` is a directory, or (worktrees, submodules) a file saying `gitdir: <path>`. */
function resolveGitDir(root: string): string | null {
  const dotGit = join(root, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
  } catch {
    return null;
  }
  const pointer = /^gitdir: (.+)$/.exec(readText(dotGit) ?? '')?.[1];
  return pointer === undefined ? null : isAbsolute(pointer) ? pointer : join(root, pointer);
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}
