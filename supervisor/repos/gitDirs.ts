/** Where a checkout keeps its git state, read from disk without running git (pool threads use it per path). */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

export interface GitDirs {
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
