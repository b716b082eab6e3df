/**
 * The linked git worktree a session's cwd lies in: its top directory and its own git dir, found once
 * at creation (a session's cwd never changes). The branch is read from the git dir's HEAD when asked:
 * a checkout inside the worktree changes it. Plain reads, no git process.
 */
import { checkoutOf, headOf, isLinkedWorktree } from '../repos/gitDirs.js';

export interface SessionWorktree {
  path: string;
  gitDir: string;
}

/** The linked worktree `cwd` is in; null in a main checkout, a submodule, or outside any repository. */
export function worktreeOf(cwd: string): SessionWorktree | null {
  const checkout = checkoutOf(cwd);
  return checkout !== null && isLinkedWorktree(checkout) ? { path: checkout.top, gitDir: checkout.gitDir } : null;
}

/** The branch the worktree has checked out; null when detached or unreadable. */
export function worktreeBranch(w: SessionWorktree): string | null {
  const head = headOf(w.gitDir);
  return head !== null && 'branch' in head ? head.branch : null;
}
