/** Orphan worktree routes: list the worktree entries whose directory is gone, remove one. */
import { Type } from 'typebox';

import type { RootGate } from '../fs/rootGate.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { orphanWorktrees, removeOrphan } from '../repos/orphanWorktrees.js';
import { repoPathFrom } from '../repos/repoArgs.js';
import { nonEmpty, OkAnswer, OrphanWorktreeSchema, repoPathFields } from '../repos/repoSchemas.js';
import { gitRoute, RepoQuery } from './repo.js';

/** `path` names the orphan here, so the repository comes only as `repoPath` or `repo_path`. */
const ORPHAN_REPO_KEYS = ['repoPath', 'repo_path'] as const;

export function repoOrphanRoutes(gate: RootGate): Route[] {
  return [
    gitRoute({
      method: 'GET',
      pattern: '/repo/orphan-worktrees',
      summary: 'Worktree entries git still lists whose directory is gone',
      query: RepoQuery,
      answers: { 200: Type.Array(OrphanWorktreeSchema) },
      handler: async ({ query }) => json(await orphanWorktrees(repoPathFrom(gate, query, 'query'))),
    }),
    gitRoute({
      method: 'POST',
      pattern: '/repo/remove-orphan',
      summary: "Remove one orphan worktree entry (git's bookkeeping only; its branch stays)",
      body: Type.Object({
        ...repoPathFields(ORPHAN_REPO_KEYS),
        // The orphan's directory is gone by definition: a string, not an existing-directory argument.
        path: nonEmpty('path', "The orphan's path, as GET /repo/orphan-worktrees lists it."),
      }),
      answers: { 200: OkAnswer },
      handler: async ({ body }) => {
        await removeOrphan(repoPathFrom(gate, body, 'body', ORPHAN_REPO_KEYS), body.path);
        return json({ ok: true });
      },
    }),
  ];
}
