/**
 * Where a checkout keeps its git state, read from disk without running git (pool threads use it per
 * path; sessions and the ai_terminal tools use it for the checkout, worktree and branch of a cwd).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

interface GitDirs {
  /** This checkout's own git dir (HEAD, index): `.git`, or `<common>/worktrees/<name>` for a linked worktree. */
  gitDir: string;
  /** The repository's shared git dir (refs, config, objects). */
  commonDir: string;
}

/** A checkout's git dirs from its `.git` (a directory, or a `gitdir:` file in a linked worktree); null when `path` is not a checkout's top. */
export function gitDirsOf(path: string): GitDirs | null {
  try {
    const dotGit = join(path, '.git');
    let gitDir = dotGit;
    try {
      const pointer = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
      if (pointer) gitDir = resolve(path, pointer[1]!.trim());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
    }
    let commonDir = gitDir;
    try {
      const rel = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
      commonDir = isAbsolute(rel) ? rel : resolve(gitDir, rel);
    } catch {
      /* the main checkout: its git dir is the common dir */
    }
    return { gitDir, commonDir };
  } catch {
    return null;
  }
}

/** A checkout found from a directory inside it: its top (the directory holding `.git`) and its git dirs. */
interface Checkout extends GitDirs {
  top: string;
}

/** How far up from a directory a `.git` is looked for: deeper trees are not worth the stats. */
const MAX_DEPTH = 64;

/** The checkout `cwd` lies in: the nearest directory up holding a `.git`; null outside any. */
export function checkoutOf(cwd: string): Checkout | null {
  let dir = resolve(cwd);
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (existsSync(join(dir, '.git'))) {
      const dirs = gitDirsOf(dir);
      return dirs === null ? null : { top: dir, ...dirs };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}

/**
 * A linked worktree (`git worktree add`): its own git dir is not the repository's common one, as
 * `git rev-parse --git-dir` and `--git-common-dir` would say. A submodule's `.git` is a `gitdir:`
 * file too, but its git dir is its own common dir.
 */
export function isLinkedWorktree(dirs: GitDirs): boolean {
  return resolve(dirs.gitDir) !== resolve(dirs.commonDir);
}

/** What HEAD names: the branch, or for a detached HEAD its commit; null when unreadable. */
export function headOf(gitDir: string): { branch: string } | { commit: string } | null {
  let head: string;
  try {
    head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
  } catch {
    return null;
  }
  const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
  if (ref) return { branch: ref[1]! };
  return /^[0-9a-f]{40,64}$/.test(head) ? { commit: head } : null;
}
