/**
 * The git panel routes beyond repo.ts: a file's history and blame, the stash, and the one-call panel
 * header. Same conventions as repo.ts: git's failures on the caller's input are invalid_input.
 */
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import type { RootGate } from '../fs/rootGate.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { fileBlame, stashList } from '../repos/gitHistory.js';
import { commitLog, currentBranch, MAIN_BRANCH_NAMES, porcelainStatus } from '../repos/gitQueries.js';
import { git, GitError } from '../repos/gitRunner.js';
import { REPO_PATH_KEYS, relativeFile, repoPathFrom } from '../repos/repoArgs.js';
import {
  BlameLineSchema,
  CommitEntrySchema,
  flag,
  gitRef,
  OkAnswer,
  PanelContextSchema,
  relativeFilePath,
  repoPathFields,
  StashEntrySchema,
} from '../repos/repoSchemas.js';
import { aheadBehind, failure, gitRoute, RepoQuery } from './repo.js';

/** apply/pop that collide with the work tree leave the stash in place; that is a conflict carrying git's words. */
async function stashApply(repo: string, verb: 'apply' | 'pop', index: number): Promise<void> {
  try {
    await git(repo, ['stash', verb, '-q', `stash@{${index}}`]);
  } catch (err) {
    if (err instanceof GitError) {
      const words = `${err.stdout}\n${err.stderr}`.trim();
      if (/CONFLICT|would be overwritten|already exists, no checkout/.test(words)) throw new ApiError('conflict', `git stash ${verb} failed: ${words}`);
    }
    throw err;
  }
}

const FileQuery = Type.Object({ ...repoPathFields(REPO_PATH_KEYS), file: relativeFilePath('file') });

const StashIndexBody = Type.Object({
  ...repoPathFields(REPO_PATH_KEYS),
  index: Type.Integer({ minimum: 0, description: 'The stash entry, `stash@{index}`.', errorMessage: "'index' must be a non-negative integer" }),
});

const escapes = failure('The file path escapes the repository (`..`, NUL, absolute).');

export function repoHistoryRoutes(gate: RootGate): Route[] {
  const applyOrPop = (verb: 'apply' | 'pop') =>
    gitRoute({
      method: 'POST',
      pattern: `/repo/stash/${verb}`,
      summary: verb === 'apply' ? 'Apply a stash entry and keep it' : 'Apply a stash entry and drop it',
      body: StashIndexBody,
      answers: { 200: OkAnswer, 409: failure("The entry collides with the work tree; the stash is kept. `error` carries git's words.") },
      handler: async ({ body }) => {
        await stashApply(repoPathFrom(gate, body, 'body'), verb, body.index);
        return json({ ok: true });
      },
    });

  return [
    gitRoute({
      method: 'GET',
      pattern: '/repo/file-history',
      summary: "A file's commits, newest first, across renames (`git log --follow`)",
      query: Type.Object({
        ...FileQuery.properties,
        count: Type.Optional(
          Type.Integer({
            description: 'How many (default 50); any integer is taken and clamped into 1..1000.',
            errorMessage: "'count' must be an integer, got {quoted}",
          }),
        ),
      }),
      answers: { 200: Type.Array(CommitEntrySchema), 403: escapes },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const file = relativeFile(query.file, 'file');
        const count = Math.min(1000, Math.max(1, query.count ?? 50));
        return json(await commitLog(repo, count, 'HEAD', file));
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/file-blame',
      summary: "Who last changed each line of a file (at a revision, or the work tree's HEAD)",
      query: Type.Object({ ...FileQuery.properties, ref: Type.Optional(gitRef('ref', 'The revision to blame at; empty or absent: HEAD and the work tree.')) }),
      answers: { 200: Type.Array(BlameLineSchema), 403: escapes },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const file = relativeFile(query.file, 'file');
        return json(await fileBlame(repo, file, query.ref || null));
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/stash',
      summary: 'The stash entries, newest first',
      query: RepoQuery,
      answers: { 200: Type.Array(StashEntrySchema) },
      handler: async ({ query }) => json(await stashList(repoPathFrom(gate, query, 'query'))),
    }),
    gitRoute({
      method: 'POST',
      pattern: '/repo/stash',
      summary: 'Stash the work tree (untracked files too on request); `created` is false when there was nothing to stash',
      body: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        message: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "The entry's name.", errorMessage: "'message' must be a string" })),
        include_untracked: Type.Optional(flag('include_untracked', 'Stash untracked files too (default false).')),
      }),
      answers: { 200: Type.Object({ ok: Type.Literal(true), created: Type.Boolean() }) },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        const message = body.message;
        const before = (await stashList(repo)).length;
        await git(repo, ['stash', 'push', '-q', ...(body.include_untracked ? ['--include-untracked'] : []), ...(message ? ['-m', message] : [])]);
        // `git stash push` with nothing to save exits 0 and stores nothing: say so.
        return json({ ok: true, created: (await stashList(repo)).length > before });
      },
    }),
    applyOrPop('apply'),
    applyOrPop('pop'),
    gitRoute({
      method: 'POST',
      pattern: '/repo/stash/drop',
      summary: 'Drop a stash entry',
      body: StashIndexBody,
      answers: { 200: OkAnswer },
      handler: async ({ body }) => {
        await git(repoPathFrom(gate, body, 'body'), ['stash', 'drop', '-q', `stash@{${body.index}}`]);
        return json({ ok: true });
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/panel-context',
      summary: "The git panel's header in one call: branch, upstream, counts, stashes, the last commit",
      query: RepoQuery,
      answers: { 200: PanelContextSchema },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const [branch, status, tracking, stashes, last] = await Promise.all([
          currentBranch(repo),
          porcelainStatus(repo),
          aheadBehind(repo),
          stashList(repo),
          commitLog(repo, 1),
        ]);
        const head = last[0];
        return json({
          branch,
          ...tracking,
          staged_count: status.filter((e) => e.staged).length,
          unstaged_count: status.filter((e) => e.unstaged).length,
          untracked_count: status.filter((e) => e.untracked).length,
          stash_count: stashes.length,
          last_commit: head ? { sha: head.sha, subject: head.subject, timestamp: head.timestamp } : null,
          is_main_branch: branch !== null && MAIN_BRANCH_NAMES.includes(branch),
        });
      },
    }),
  ];
}
