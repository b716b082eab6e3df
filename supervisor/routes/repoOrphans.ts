/** Orphan worktree routes of REFERENCE §1.4: list the entries whose directory is gone, remove one. */
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { orphanWorktrees, removeOrphan } from '../repos/orphanWorktrees.js';
import { repoPathFrom, stringArg } from '../repos/repoArgs.js';
import { bodyOf, gitRoute } from './repo.js';

export function repoOrphanRoutes(): Route[] {
  return [
    { method: 'GET', pattern: '/repo/orphan-worktrees', handler: gitRoute(async (ctx) => json(await orphanWorktrees(repoPathFrom(ctx.query)))) },
    {
      method: 'POST',
      pattern: '/repo/remove-orphan',
      handler: gitRoute(async (ctx) => {
        const body = bodyOf(ctx);
        // The orphan's directory is gone by definition: a string, not an existing-directory argument.
        await removeOrphan(repoPathFrom(body, ['repoPath', 'repo_path']), stringArg(body['path'], 'path'));
        return json({ ok: true });
      }),
    },
  ];
}
