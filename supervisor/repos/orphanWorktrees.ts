/**
 * Orphan worktrees: entries git still lists whose directory is gone (`prunable`). Removal is one
 * entry at a time: `git worktree remove --force` drops a missing worktree's admin data, whereas
 * `git worktree prune` would drop every orphan at once.
 */
import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { worktreeList } from './gitQueries.js';
import { git } from './gitRunner.js';

export interface OrphanWorktree {
  path: string;
  branch: string | null;
  head: string | null;
}

export async function orphanWorktrees(repo: string): Promise<OrphanWorktree[]> {
  return (await worktreeList(repo)).filter((w) => w.prunable).map((w) => ({ path: w.path, branch: w.branch, head: w.head }));
}

/** Removes one orphan entry; a path that is not an orphan (live, unknown, the main tree) is refused. */
export async function removeOrphan(repo: string, path: string): Promise<void> {
  if (!(await orphanWorktrees(repo)).some((o) => o.path === path))
    throw new ApiError('invalid_input', `not an orphan worktree of this repository: ${quoteClientInput(path)}`);
  await git(repo, ['worktree', 'remove', '--force', '--', path]);
  // Git's own check: the entry must be gone now.
  if ((await worktreeList(repo)).some((w) => w.path === path))
    throw new ApiError('internal', `git still lists the worktree after removal: ${quoteClientInput(path)}`);
}
