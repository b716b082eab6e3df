/**
 * The linked git worktree a session's cwd lies in: its top directory (holding a `.git` file that
 * points into `<repo>/.git/worktrees/<name>`) and that git dir, found once at creation (a session's
 * cwd never changes). The branch is read from the git dir's HEAD when asked: a checkout inside the
 * worktree changes it. Plain reads, no git process.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

export interface SessionWorktree {
  path: string;
  gitDir: string;
}

/** How far up from the cwd a `.git` is looked for: deeper trees are not worth the stats. */
const MAX_DEPTH = 64;

export function worktreeOf(cwd: string): SessionWorktree | null {
  let dir = cwd;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const dotGit = join(dir, '.git');
    let st;
    try {
      st = statSync(dotGit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) return null; // a main checkout, not a linked worktree
    if (st?.isFile()) return linkedWorktree(dir, dotGit);
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}

function linkedWorktree(top: string, dotGit: string): SessionWorktree | null {
  let text: string;
  try {
    text = readFileSync(dotGit, 'utf8');
  } catch {
    return null;
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return null;
  const gitDir = isAbsolute(m[1]!) ? m[1]! : resolve(top, m[1]!);
  // Submodules have a `.git` file too, pointing into `.git/modules/`: only linked worktrees count.
  if (!gitDir.includes(`${sep}worktrees${sep}`)) return null;
  return { path: top, gitDir };
}

/** The branch the worktree has checked out; null when detached or unreadable. */
export function worktreeBranch(w: SessionWorktree): string | null {
  try {
    const head = readFileSync(join(w.gitDir, 'HEAD'), 'utf8').trim();
    return head.startsWith('ref: refs/heads/') ? head.slice('ref: refs/heads/'.length) : null;
  } catch {
    return null;
  }
}
