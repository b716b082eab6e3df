/** /worktrees routes (REFERENCE §1.9) over the shared WorktreeManager core the MCP `repo` tool also uses. */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';
import { isPlainObject } from '../config/merge.js';
import { generateBranchName } from '../repos/branchNames.js';
import { boolArg, repoPathArg, repoPathFrom, stringArg } from '../repos/repoArgs.js';
import { runScript, type WorktreeManager } from '../repos/worktrees.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';

type Body = Record<string, unknown>;

function bodyOf(ctx: RequestContext): Body {
  const body = parseJsonBody(ctx);
  if (!isPlainObject(body)) throw new HttpError(400, 'request body must be a JSON object');
  return body as Body;
}

function optionalString(value: unknown, key: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new HttpError(400, `'${key}' must be a string`);
  return value;
}

export function worktreeRoutes(manager: WorktreeManager, knownRepos: () => readonly string[]): Route[] {
  const repoFromQuery = (ctx: RequestContext, keys: readonly string[]) => repoPathFrom(ctx.query, keys);
  const remove = async (ctx: RequestContext, workspaceId: string) => {
    const repo = repoFromQuery(ctx, ['repoPath', 'repo_path', 'path']);
    const force = boolArg(ctx.query.get('force'), 'force', false);
    return json(
      await manager.remove(repo, workspaceId, {
        force,
        deleteBranch: boolArg(ctx.query.get('deleteBranch'), 'deleteBranch', true),
        overrideLock: boolArg(ctx.query.get('overrideLock'), 'overrideLock', false),
        expectedFingerprint: ctx.query.get('expectedFingerprint') ?? undefined,
      }),
    );
  };
  return [
    { method: 'GET', pattern: '/worktrees', handler: async () => json(await manager.list(knownRepos())) },
    {
      method: 'POST',
      pattern: '/worktrees',
      handler: async (ctx) => {
        const body = bodyOf(ctx);
        const created = await manager.create({
          base_repo: repoPathArg(body['base_repo'] ?? body['baseRepo'], 'base_repo'),
          branch_name: optionalString(body['branch_name'] ?? body['branchName'], 'branch_name'),
          base_ref: optionalString(body['base_ref'] ?? body['baseRef'], 'base_ref'),
        });
        return json(created, 201);
      },
    },
    {
      method: 'DELETE',
      pattern: '/worktrees',
      handler: async (ctx) => remove(ctx, stringArg(ctx.query.get('workspaceId') ?? ctx.query.get('branch'), 'workspaceId')),
    },
    { method: 'DELETE', pattern: '/worktrees/:workspaceId', handler: async (ctx) => remove(ctx, ctx.params['workspaceId']!) },
    {
      method: 'GET',
      pattern: '/worktrees/dir',
      handler: async (ctx) => json({ dir: manager.baseDirOf(await manager.mainRepoOf(repoFromQuery(ctx, ['repoPath', 'path']))) }),
    },
    { method: 'GET', pattern: '/worktrees/paths', handler: async (ctx) => json(await manager.paths(repoFromQuery(ctx, ['path', 'repoPath']))) },
    {
      method: 'GET',
      pattern: '/worktrees/lifecycle',
      handler: async (ctx) => json(await manager.lifecycle(repoFromQuery(ctx, ['repoPath', 'path']), stringArg(ctx.query.get('workspaceId'), 'workspaceId'))),
    },
    {
      method: 'POST',
      pattern: '/worktrees/generate-name',
      handler: (ctx) => {
        const body = ctx.body.length === 0 ? {} : bodyOf(ctx);
        const existing = body['existing_names'] ?? [];
        if (!Array.isArray(existing) || !existing.every((n) => typeof n === 'string')) throw new HttpError(400, "'existing_names' must be an array of strings");
        return json({ name: generateBranchName(existing as string[]) });
      },
    },
    {
      method: 'POST',
      pattern: '/worktrees/finalize',
      handler: async (ctx) => {
        const body = bodyOf(ctx);
        const repo = repoPathArg(body['repoPath'] ?? body['repo_path'], 'repoPath');
        const id = stringArg(body['workspaceId'] ?? body['branchName'], 'workspaceId');
        const action = body['action'];
        if (action !== 'archive' && action !== 'delete') throw new HttpError(400, "'action' must be archive or delete");
        return json(
          await manager.finalize(repo, id, action, boolArg(body['force'], 'force', false), optionalString(body['expectedFingerprint'], 'expectedFingerprint')),
        );
      },
    },
    {
      method: 'POST',
      pattern: '/worktrees/run-script',
      handler: async (ctx) => {
        const body = bodyOf(ctx);
        const script = stringArg(body['script'], 'script');
        const raw = stringArg(body['cwd'], 'cwd');
        const cwd = raw === '~' ? homedir() : raw.startsWith('~/') ? join(homedir(), raw.slice(2)) : raw;
        if (!existsSync(cwd)) return json({ error: `Working directory does not exist: ${quoteClientInput(cwd)}` }, 500);
        return json(await runScript(script, cwd));
      },
    },
  ];
}
