/**
 * GitHub routes, through `gh` (repos/ghCli.ts: unavailable (503) when it is missing or logged out,
 * bad_gateway (502) when GitHub refuses), and the AI-backed routes, which a headless tuicd without a
 * provider refuses as not_implemented (501).
 */
import type { Static, TObject, TSchema } from 'typebox';
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { defineRoute, type RouteDeclaration } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { RootGate } from '../fs/rootGate.js';
import type { GhCli } from '../repos/ghCli.js';
import {
  CheckListSchema,
  ConflictAssistSchema,
  GithubRepoSchema,
  IssueListSchema,
  MergedPrListSchema,
  PostedReviewSchema,
  PullRequestListSchema,
} from '../repos/githubSchemas.js';
import { MergedPrConstants, mergedPrsSince } from '../repos/mergedPrs.js';
import { conflictAssist } from '../repos/conflictAssist.js';
import { checkRepoPath, REPO_PATH_KEYS, repoPathFrom } from '../repos/repoArgs.js';
import { absolutePath, boundedInt, flag, nonEmpty, OkAnswer, repoPathFields, stringList } from '../repos/repoSchemas.js';
import { failure, RepoQuery } from './repo.js';

const PR_FIELDS = 'number,title,state,headRefName,headRefOid,baseRefName,url,isDraft,author,mergeable,reviewDecision,statusCheckRollup,updatedAt';
const ISSUE_FIELDS = 'number,title,state,url,labels,assignees,author,updatedAt';
/** Which issues /repo/issues lists, by `filter`. */
const ISSUE_FILTERS = { assigned: ['--assignee', '@me'], created: ['--author', '@me'], mentioned: ['--mention', '@me'], all: [] } as const;
/** More inline comments than a reviewer writes by hand; keeps one request's payload bounded. */
const MAX_REVIEW_COMMENTS = 500;

/** A pull request or issue number. */
const positive = (key: string, description: string) => Type.Integer({ minimum: 1, description, errorMessage: `'${key}' must be a positive integer` });

const ghDown = failure('gh is not installed or not logged in on the machine running tuicd (`error` says which).');
const ghRefused = failure("GitHub (through gh) refused: `error` carries gh's words.");
/** What every route that runs gh may answer beside its own. */
const ghAnswers = { 502: ghRefused, 503: ghDown };

/** A GitHub route (tag repos). */
function ghRoute<P extends TObject | undefined = undefined, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined>(
  decl: Omit<RouteDeclaration<P, Q, B>, 'tag'>,
): Route {
  return defineRoute<P, Q, B>({ ...decl, tag: 'repos' });
}

const Side = Type.Union([Type.Literal('LEFT'), Type.Literal('RIGHT')], { description: 'The side of the diff (default RIGHT).' });

const ReviewBody = Type.Object({
  ...repoPathFields(REPO_PATH_KEYS),
  prNumber: positive('prNumber', 'The pull request.'),
  event: Type.Optional(
    Type.Union([Type.Literal('COMMENT'), Type.Literal('APPROVE'), Type.Literal('REQUEST_CHANGES')], {
      description: 'COMMENT (default), APPROVE or REQUEST_CHANGES.',
      errorMessage: "'event' must be one of COMMENT, APPROVE, REQUEST_CHANGES",
    }),
  ),
  body: Type.Optional(
    Type.String({ description: "The review's text; a COMMENT or REQUEST_CHANGES review needs it or a comment.", errorMessage: "'body' must be a string" }),
  ),
  comments: Type.Optional(
    Type.Array(
      Type.Object({
        path: Type.String({ minLength: 1, description: 'The file, relative to the repository.' }),
        line: Type.Integer({ minimum: 1, description: 'The (last) line commented on.' }),
        body: Type.String({ minLength: 1 }),
        side: Type.Optional(Side),
        startLine: Type.Optional(Type.Integer({ minimum: 1, description: 'A multi-line comment: its first line, below `line`.' })),
      }),
      {
        description: `Inline comments, at most ${MAX_REVIEW_COMMENTS}.`,
        errorMessage: "'comments' must be an array",
        allOf: [{ maxItems: MAX_REVIEW_COMMENTS, errorMessage: `'comments' may hold at most ${MAX_REVIEW_COMMENTS} entries` }],
      },
    ),
  ),
  commitId: Type.Optional(
    Type.String({ pattern: '^[0-9a-fA-F]{7,64}$', description: 'The commit the review is of.', errorMessage: "'commitId' must be a commit SHA" }),
  ),
});

interface ReviewComment {
  path: string;
  line: number;
  body: string;
  side: 'LEFT' | 'RIGHT';
  start_line?: number;
  start_side?: 'LEFT' | 'RIGHT';
}

/** The GitHub "create a review" payload: what the schema cannot say is checked here. */
function reviewPayload(body: Static<typeof ReviewBody>): { event: string; body: string; comments: ReviewComment[]; commit_id?: string } {
  const event = body.event ?? 'COMMENT';
  const text = body.body ?? '';
  const raw = body.comments ?? [];
  if (event !== 'APPROVE' && text.trim() === '' && raw.length === 0)
    throw new ApiError('invalid_input', `a ${event} review needs a 'body' or at least one comment`);
  const comments = raw.map((c, i): ReviewComment => {
    const where = `comments[${i}]`;
    const side = c.side ?? 'RIGHT';
    const out: ReviewComment = { path: c.path, line: c.line, body: c.body, side };
    if (c.startLine !== undefined) {
      if (c.startLine >= out.line)
        throw new ApiError('invalid_input', `'${where}.startLine' must be below '${where}.line'`, { extra: { field: `${where}.startLine` } });
      out.start_line = c.startLine;
      out.start_side = side;
    }
    return out;
  });
  const payload: { event: string; body: string; comments: ReviewComment[]; commit_id?: string } = { event, body: text, comments };
  if (body.commitId !== undefined) payload.commit_id = body.commitId;
  return payload;
}

export function githubRoutes(gh: GhCli, gate: RootGate): Route[] {
  const prs = (pattern: string) =>
    ghRoute({
      method: 'GET',
      pattern,
      summary: 'Open pull requests (merged and closed too with `include_merged`), at most 100',
      query: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), include_merged: Type.Optional(flag('include_merged', 'Every state, not only open.')) }),
      answers: { 200: PullRequestListSchema, ...ghAnswers },
      handler: async ({ query }) =>
        json(
          await gh.json(repoPathFrom(gate, query, 'query'), [
            'pr',
            'list',
            '--state',
            query.include_merged === true ? 'all' : 'open',
            '--limit',
            '100',
            '--json',
            PR_FIELDS,
          ]),
        ),
    });
  const github = (pattern: string) =>
    ghRoute({
      method: 'GET',
      pattern,
      summary: "The repository's GitHub side: name, owner, URL, default branch, visibility, the viewer's permission",
      query: RepoQuery,
      answers: { 200: GithubRepoSchema, ...ghAnswers },
      handler: async ({ query }) =>
        json(await gh.json(repoPathFrom(gate, query, 'query'), ['repo', 'view', '--json', 'name,owner,url,defaultBranchRef,isPrivate,viewerPermission'])),
    });
  const ci = (pattern: string) =>
    ghRoute({
      method: 'GET',
      pattern,
      summary: "CI checks of a pull request (default: the current branch's)",
      query: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), pr: Type.Optional(positive('pr', 'The pull request.')) }),
      answers: { 200: CheckListSchema, ...ghAnswers },
      handler: async ({ query }) =>
        json(
          await gh.json(repoPathFrom(gate, query, 'query'), [
            'pr',
            'checks',
            ...(query.pr === undefined ? [] : [String(query.pr)]),
            '--json',
            'name,state,bucket,link,workflow',
          ]),
        ),
    });
  const issueState = (verb: 'close' | 'reopen') =>
    ghRoute({
      method: 'POST',
      pattern: `/repo/issues/${verb}`,
      summary: verb === 'close' ? 'Close an issue' : 'Reopen an issue',
      body: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), issue_number: positive('issue_number', 'The issue.') }),
      answers: { 200: OkAnswer, ...ghAnswers },
      handler: async ({ body }) => {
        await gh.call(repoPathFrom(gate, body, 'body'), ['issue', verb, String(body.issue_number)]);
        return json({ ok: true });
      },
    });
  // AI-backed: a headless tuicd has no model provider to call.
  const notAvailable = (method: 'GET' | 'POST', pattern: string, summary: string) =>
    ghRoute({
      method,
      pattern,
      summary: `${summary} (needs an AI provider: always not_implemented in headless tuicd)`,
      answers: { 501: failure('Not available in headless tuicd: this route needs an AI provider, and none is configured.') },
      handler: () => {
        throw new ApiError('not_implemented', 'not available in headless tuicd: this route needs an AI provider, and none is configured');
      },
    });

  return [
    prs('/repo/prs'),
    prs('/repo/pr-statuses'),
    ghRoute({
      method: 'POST',
      pattern: '/repo/prs/batch',
      summary: "Several repositories' pull requests, keyed by path",
      body: Type.Object({
        paths: stringList('paths', 'Absolute repository paths.', { items: absolutePath('paths[]', 'An existing directory.') }),
        include_merged: Type.Optional(flag('include_merged', 'Every state, not only open.')),
      }),
      answers: { 200: Type.Record(Type.String(), PullRequestListSchema), ...ghAnswers },
      handler: async ({ body }) => {
        const paths = body.paths.map((p, i) => checkRepoPath(gate, p, `paths[${i}]`, 'body'));
        const state = body.include_merged === true ? 'all' : 'open';
        const out: Record<string, unknown> = {};
        for (const p of paths) out[p] = await gh.json(p, ['pr', 'list', '--state', state, '--limit', '100', '--json', PR_FIELDS]);
        return json(out);
      },
    }),
    github('/repo/github'),
    github('/repo/github-status'),
    ci('/repo/ci'),
    ci('/repo/ci-checks'),
    ghRoute({
      method: 'GET',
      pattern: '/repo/issues',
      summary: 'Issues assigned to, created by or mentioning the gh user, or all',
      query: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        filter: Type.Optional(
          Type.Union(
            Object.keys(ISSUE_FILTERS).map((f) => Type.Literal(f)),
            {
              description: 'assigned (default), created, mentioned or all.',
              errorMessage: `'filter' must be one of ${Object.keys(ISSUE_FILTERS).join(', ')}`,
            },
          ),
        ),
        limit: Type.Optional(boundedInt('limit', 1, 500, 'How many (default 50).')),
      }),
      answers: { 200: IssueListSchema, ...ghAnswers },
      handler: async ({ query }) => {
        const filter = ISSUE_FILTERS[(query.filter ?? 'assigned') as keyof typeof ISSUE_FILTERS];
        return json(
          await gh.json(repoPathFrom(gate, query, 'query'), ['issue', 'list', ...filter, '--limit', String(query.limit ?? 50), '--json', ISSUE_FIELDS]),
        );
      },
    }),
    issueState('close'),
    issueState('reopen'),
    ghRoute({
      method: 'POST',
      pattern: '/repo/merge-pr',
      summary: 'Merge a pull request, only if its head is still the commit the caller reviewed',
      body: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        prNumber: positive('prNumber', 'The pull request.'),
        mergeMethod: Type.Optional(
          Type.Union([Type.Literal('merge'), Type.Literal('squash'), Type.Literal('rebase')], {
            description: 'merge (default), squash or rebase.',
            errorMessage: "'mergeMethod' must be one of merge, squash, rebase",
          }),
        ),
        expectedHeadSha: nonEmpty('expectedHeadSha', 'The head commit the caller saw; a moved head is a conflict and nothing is merged.'),
      }),
      answers: {
        200: Type.Object({ sha: Type.Union([Type.String({ description: 'The merge commit.' }), Type.Null()]) }),
        409: failure('The pull request head changed since `expectedHeadSha`; nothing was merged.'),
        ...ghAnswers,
      },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        const pr = String(body.prNumber);
        try {
          await gh.call(repo, ['pr', 'merge', pr, `--${body.mergeMethod ?? 'merge'}`, '--match-head-commit', body.expectedHeadSha]);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'bad_gateway' && /head|match/i.test(err.message))
            throw new ApiError('conflict', `PR head changed: ${err.message}`);
          throw err;
        }
        const merged = await gh.json<{ mergeCommit?: { oid?: string } }>(repo, ['pr', 'view', pr, '--json', 'mergeCommit']);
        return json({ sha: merged?.mergeCommit?.oid ?? null });
      },
    }),
    ghRoute({
      method: 'POST',
      pattern: '/repo/approve-pr',
      summary: 'Approve a pull request',
      body: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), prNumber: positive('prNumber', 'The pull request.') }),
      answers: { 200: OkAnswer, ...ghAnswers },
      handler: async ({ body }) => {
        await gh.call(repoPathFrom(gate, body, 'body'), ['pr', 'review', String(body.prNumber), '--approve']);
        return json({ ok: true });
      },
    }),
    ghRoute({
      method: 'GET',
      pattern: '/repo/pr-diff',
      summary: "A pull request's diff",
      query: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        pr: Type.Optional(positive('pr', 'The pull request (or `prNumber`; one is required).')),
        prNumber: Type.Optional(positive('pr', 'Another spelling of `pr`.')),
      }),
      answers: { 200: Type.Object({ diff: Type.String() }), ...ghAnswers },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const pr = query.pr ?? query.prNumber;
        if (pr === undefined) throw new ApiError('invalid_input', "'pr' must be a positive integer", { extra: { field: 'pr', in: 'query' } });
        return json({ diff: await gh.call(repo, ['pr', 'diff', String(pr)]) });
      },
    }),
    ghRoute({
      method: 'POST',
      pattern: '/repo/create-pr',
      summary: 'Open a pull request; its URL',
      body: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        title: nonEmpty('title'),
        body: Type.Optional(Type.String({ description: "The pull request's description." })),
        base: Type.Optional(Type.String({ description: 'The branch to merge into (default: the repository default).' })),
        head: Type.Optional(Type.String({ description: 'The branch to merge (default: the current one).' })),
        draft: Type.Optional(Type.Boolean()),
      }),
      answers: { 200: Type.Object({ url: Type.String() }), ...ghAnswers },
      handler: async ({ body }) => {
        const args = ['pr', 'create', '--title', body.title, '--body', body.body ?? ''];
        if (body.base !== undefined) args.push('--base', body.base);
        if (body.head !== undefined) args.push('--head', body.head);
        if (body.draft === true) args.push('--draft');
        return json({ url: (await gh.call(repoPathFrom(gate, body, 'body'), args)).trim() });
      },
    }),
    ghRoute({
      method: 'POST',
      pattern: '/repo/create-issue',
      summary: 'Open an issue; its URL',
      body: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        title: nonEmpty('title'),
        body: Type.Optional(Type.String({ description: "The issue's text." })),
      }),
      answers: { 200: Type.Object({ url: Type.String() }), ...ghAnswers },
      handler: async ({ body }) => {
        const url = await gh.call(repoPathFrom(gate, body, 'body'), ['issue', 'create', '--title', body.title, '--body', body.body ?? '']);
        return json({ url: url.trim() });
      },
    }),
    ghRoute({
      method: 'POST',
      pattern: '/repo/post-pr-review',
      summary: 'Post one review of a pull request with its inline comments',
      body: ReviewBody,
      answers: { 200: PostedReviewSchema, ...ghAnswers },
      handler: async ({ body }) => {
        const review = reviewPayload(body);
        // gh fills {owner}/{repo} from the repository's GitHub remote; the payload goes in on stdin.
        const posted = await gh.json<{ id?: number; html_url?: string; state?: string }>(
          repoPathFrom(gate, body, 'body'),
          ['api', '--method', 'POST', `repos/{owner}/{repo}/pulls/${body.prNumber}/reviews`, '--input', '-'],
          JSON.stringify(review),
        );
        return json({ id: posted?.id ?? null, url: posted?.html_url ?? null, state: posted?.state ?? null, comments: review.comments.length });
      },
    }),
    ghRoute({
      method: 'GET',
      pattern: '/repo/merged-prs',
      summary: `Merged pull requests, newest first, at most ${MergedPrConstants.MAX_RESULTS}; with \`sinceTag\`, only those merged after that tag (through gh's GraphQL)`,
      query: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        sinceTag: Type.Optional(
          Type.String({
            pattern: '^(?!-)[A-Za-z0-9._/+-]{1,200}$',
            description: 'A tag of the local repository: only pull requests merged after it was made (the changelog since a release).',
            errorMessage: "'sinceTag' must be a tag name (letters, digits, . _ / + -, not starting with '-')",
          }),
        ),
      }),
      answers: { 200: MergedPrListSchema, 404: failure('`sinceTag` names no tag of the local repository.'), ...ghAnswers },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        if (query.sinceTag !== undefined) return json(await mergedPrsSince(gh, repo, query.sinceTag));
        return json(
          await gh.json(repo, [
            'pr',
            'list',
            '--state',
            'merged',
            '--limit',
            String(MergedPrConstants.MAX_RESULTS),
            '--json',
            'number,title,mergedAt,author,url,labels',
          ]),
        );
      },
    }),
    notAvailable('POST', '/repo/pr-review', 'An AI review of a pull request'),
    notAvailable('POST', '/ai/review/pr', 'An AI review of a pull request'),
    notAvailable('GET', '/repo/changelog', 'An AI-written changelog'),
    ghRoute({
      method: 'POST',
      pattern: '/repo/conflict-assist',
      summary:
        'Rebase a pull request onto its base in a worktree of its own and say whether it goes through: clean, clean_unverified (the base could not be fetched) or conflicts (the worktree is left mid-rebase, with the conflicted files and a prompt for an agent). Never pushes or merges. `resolve: true` (a model resolving the conflicts) is not available headless',
      body: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        prNumber: positive('prNumber', 'The pull request.'),
        resolve: Type.Optional(flag('resolve', 'Have a model resolve the conflicts (needs an AI provider: not_implemented in headless tuicd).')),
      }),
      answers: {
        200: ConflictAssistSchema,
        409: failure("A conflict-assist worktree for this pull request is still there (the last run's conflicts): finish or remove it first."),
        501: failure('`resolve: true` needs an AI provider, and headless tuicd has none.'),
        ...ghAnswers,
      },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        if (body.resolve === true)
          throw new ApiError(
            'not_implemented',
            'resolving conflicts with a model is not available in headless tuicd (no AI provider); call without resolve to get the worktree, the conflicted files and a prompt for an agent',
          );
        return json(await conflictAssist(gh, repo, body.prNumber));
      },
    }),
  ];
}
