/** /worktrees routes over the shared WorktreeManager core the MCP `repo` tool also uses. */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import type { Static, TObject, TSchema } from 'typebox';
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import type { RootGate } from '../fs/rootGate.js';
import { defineRoute, type RouteDeclaration } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { generateBranchName } from '../repos/branchNames.js';
import { firstOf, repoPathFrom } from '../repos/repoArgs.js';
import { flag, nonEmpty, repoPathFields } from '../repos/repoSchemas.js';
import {
  CreatedWorktreeSchema,
  FinalizeAnswer,
  LifecycleSchema,
  RemoveResultSchema,
  ScriptResultSchema,
  WorktreeListEntrySchema,
  WorktreePathsSchema,
} from '../repos/worktreeSchemas.js';
import { runScript, type WorktreeManager } from '../repos/worktrees.js';
import { failure } from './repo.js';

/** A /worktrees route (tag repos). */
function worktreeRoute<P extends TObject | undefined = undefined, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined>(
  decl: Omit<RouteDeclaration<P, Q, B>, 'tag'>,
): Route {
  return defineRoute<P, Q, B>({ ...decl, tag: 'repos' });
}

/** A string the caller may leave out, send as null or as '' (all three: not given). */
const optionalText = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Null()], { description }));
const given = (value: string | null | undefined): string | undefined => (value === null || value === '' ? undefined : value);

const REMOVE_REPO_KEYS = ['repoPath', 'repo_path', 'path'] as const;

const removeOptions = {
  ...repoPathFields(REMOVE_REPO_KEYS),
  force: Type.Optional(flag('force', 'Remove a checkout with uncommitted work (discarding it), and an unmerged branch (default false).')),
  deleteBranch: Type.Optional(
    flag('deleteBranch', "Delete the worktree's branch when a removal rule shows its commits are in the base branch (default true)."),
  ),
  overrideLock: Type.Optional(flag('overrideLock', 'Remove a locked worktree too (default false).')),
  expectedFingerprint: Type.Optional(Type.String({ description: "The lifecycle's dirty_fingerprint: a checkout changed since is not removed (409)." })),
};
const RemoveQuery = Type.Object(removeOptions);
const RemoveByQuery = Type.Object({
  ...removeOptions,
  workspaceId: Type.Optional(nonEmpty('workspaceId', 'The worktree (its directory name or its branch); `branch` is another spelling. One is required.')),
  branch: Type.Optional(nonEmpty('workspaceId', 'Another spelling of `workspaceId`.')),
});

const noWorktree = failure('No such worktree in the repository.');
const removalRefused = failure('The checkout has uncommitted work (pass force), or changed since `expectedFingerprint`.');

export function worktreeRoutes(manager: WorktreeManager, knownRepos: () => readonly string[], gate: RootGate): Route[] {
  const remove = async (query: Static<typeof RemoveQuery>, workspaceId: string) =>
    json(
      await manager.remove(repoPathFrom(gate, query, 'query', REMOVE_REPO_KEYS), workspaceId, {
        force: query.force ?? false,
        deleteBranch: query.deleteBranch ?? true,
        overrideLock: query.overrideLock ?? false,
        expectedFingerprint: query.expectedFingerprint,
      }),
    );
  const removeSummary = "Remove a worktree's checkout, and its branch when its commits are in the base branch";
  return [
    worktreeRoute({
      method: 'GET',
      pattern: '/worktrees',
      summary: 'Linked worktrees of every known repository (registered, or with a session in it)',
      answers: { 200: Type.Array(WorktreeListEntrySchema) },
      handler: async () => json(await manager.list(knownRepos())),
    }),
    worktreeRoute({
      method: 'POST',
      pattern: '/worktrees',
      summary: 'Create a worktree beside the repository (`<repo>__wt/<branch>`) on a new or existing branch',
      body: Type.Object({
        ...repoPathFields(['base_repo', 'baseRepo']),
        branch_name: optionalText('The branch (new from `base_ref`, or existing); absent: a generated name. `branchName` is another spelling.'),
        branchName: optionalText('Another spelling of `branch_name`.'),
        base_ref: optionalText('What a new branch starts from (default HEAD). `baseRef` is another spelling.'),
        baseRef: optionalText('Another spelling of `base_ref`.'),
      }),
      answers: { 201: CreatedWorktreeSchema, 409: failure('The worktree directory exists already, or git refused to add it.') },
      handler: async ({ body }) => {
        const created = await manager.create({
          base_repo: repoPathFrom(gate, body, 'body', ['base_repo', 'baseRepo']),
          branch_name: given(body.branch_name ?? body.branchName),
          base_ref: given(body.base_ref ?? body.baseRef),
        });
        return json(created, 201);
      },
    }),
    worktreeRoute({
      method: 'DELETE',
      pattern: '/worktrees',
      summary: removeSummary,
      query: RemoveByQuery,
      answers: { 200: RemoveResultSchema, 404: noWorktree, 409: removalRefused },
      handler: async ({ query }) => remove(query, firstOf(query, ['workspaceId', 'branch'], 'query', 'a non-empty string').value),
    }),
    worktreeRoute({
      method: 'DELETE',
      pattern: '/worktrees/:workspaceId',
      summary: removeSummary,
      params: Type.Object({ workspaceId: Type.String({ description: 'The worktree: its directory name or its branch.' }) }),
      query: RemoveQuery,
      answers: { 200: RemoveResultSchema, 404: noWorktree, 409: removalRefused },
      handler: async ({ params, query }) => remove(query, params.workspaceId),
    }),
    worktreeRoute({
      method: 'GET',
      pattern: '/worktrees/dir',
      summary: "The directory a repository's worktrees live in",
      query: Type.Object(repoPathFields(['repoPath', 'path'])),
      answers: { 200: Type.Object({ dir: Type.String() }) },
      handler: async ({ query }) => json({ dir: manager.baseDirOf(await manager.mainRepoOf(repoPathFrom(gate, query, 'query', ['repoPath', 'path']))) }),
    }),
    worktreeRoute({
      method: 'GET',
      pattern: '/worktrees/paths',
      summary: "A repository's linked worktrees by workspace id",
      query: Type.Object(repoPathFields(['path', 'repoPath'])),
      answers: { 200: WorktreePathsSchema },
      handler: async ({ query }) => json(await manager.paths(repoPathFrom(gate, query, 'query', ['path', 'repoPath']))),
    }),
    worktreeRoute({
      method: 'GET',
      pattern: '/worktrees/lifecycle',
      summary: 'What removing a worktree would do: dirty and untracked files, whether its commits are merged, live sessions in it',
      query: Type.Object({ ...repoPathFields(['repoPath', 'path']), workspaceId: nonEmpty('workspaceId', 'The worktree: its directory name or its branch.') }),
      answers: { 200: LifecycleSchema, 404: noWorktree },
      handler: async ({ query }) => json(await manager.lifecycle(repoPathFrom(gate, query, 'query', ['repoPath', 'path']), query.workspaceId)),
    }),
    worktreeRoute({
      method: 'POST',
      pattern: '/worktrees/generate-name',
      summary: 'A fresh branch name (adjective-noun) not among `existing_names`',
      body: Type.Object({
        existing_names: Type.Optional(
          Type.Array(Type.String({ errorMessage: "'existing_names' must be an array of strings" }), {
            description: 'Names to avoid.',
            errorMessage: "'existing_names' must be an array of strings",
          }),
        ),
      }),
      emptyBody: {},
      answers: { 200: Type.Object({ name: Type.String() }) },
      handler: ({ body }) => json({ name: generateBranchName(body.existing_names ?? []) }),
    }),
    worktreeRoute({
      method: 'POST',
      pattern: '/worktrees/finalize',
      summary: 'Finish with a worktree: archive (remove the checkout, keep the branch) or delete (both; an unmerged one asks first unless forced)',
      body: Type.Object({
        ...repoPathFields(['repoPath', 'repo_path']),
        workspaceId: Type.Optional(
          nonEmpty('workspaceId', 'The worktree (its directory name or its branch); `branchName` is another spelling. One is required.'),
        ),
        branchName: Type.Optional(nonEmpty('workspaceId', 'Another spelling of `workspaceId`.')),
        action: Type.Union([Type.Literal('archive'), Type.Literal('delete')], { errorMessage: "'action' must be archive or delete" }),
        force: Type.Optional(flag('force', 'Delete without asking, uncommitted work and unmerged commits included (default false).')),
        expectedFingerprint: optionalText("The lifecycle's dirty_fingerprint: a checkout changed since is not removed (409)."),
      }),
      answers: { 200: FinalizeAnswer, 404: noWorktree, 409: removalRefused },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body', ['repoPath', 'repo_path']);
        const id = firstOf(body, ['workspaceId', 'branchName'], 'body', 'a non-empty string').value;
        return json(await manager.finalize(repo, id, body.action, body.force ?? false, given(body.expectedFingerprint)));
      },
    }),
    worktreeRoute({
      method: 'POST',
      pattern: '/worktrees/run-script',
      summary: 'Run a shell script in a directory (`~` expanded); its exit code and output',
      body: Type.Object({
        script: nonEmpty('script', 'Run with `sh -c`, no timeout.'),
        cwd: nonEmpty('cwd', 'The directory, inside a known repository, worktree or session directory; `~` and `~/…` are expanded.'),
      }),
      answers: {
        200: ScriptResultSchema,
        403: failure('The directory is outside every known repository, worktree and session directory.'),
        500: failure('The working directory does not exist.'),
      },
      handler: async ({ body }) => {
        const raw = body.cwd;
        const cwd = gate.absolute(raw === '~' ? homedir() : raw.startsWith('~/') ? join(homedir(), raw.slice(2)) : raw, 'cwd');
        // Answered 500 (`internal`), as this route always has.
        if (!existsSync(cwd)) throw new ApiError('internal', `Working directory does not exist: ${quoteClientInput(cwd)}`);
        return json(await runScript(body.script, cwd));
      },
    }),
  ];
}
