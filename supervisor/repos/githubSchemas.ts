/**
 * The answers of the GitHub routes: gh's own JSON for the fields each route asks gh for (`--json`),
 * so only those are listed; gh may add more.
 */
import { Type } from 'typebox';

const ghObject = (properties: Parameters<typeof Type.Object>[0], description: string) => Type.Object(properties, { additionalProperties: true, description });

export const PullRequestSchema = ghObject(
  {
    number: Type.Integer(),
    title: Type.String(),
    state: Type.String(),
    url: Type.String(),
  },
  'gh pr list: number, title, state, headRefName, headRefOid, baseRefName, url, isDraft, author, mergeable, reviewDecision, statusCheckRollup, updatedAt.',
);

export const PullRequestListSchema = Type.Array(PullRequestSchema);

export const GithubRepoSchema = ghObject(
  { name: Type.String(), url: Type.String() },
  'gh repo view: name, owner, url, defaultBranchRef, isPrivate, viewerPermission.',
);

export const CheckListSchema = Type.Array(ghObject({ name: Type.String(), state: Type.String() }, 'gh pr checks: name, state, bucket, link, workflow.'));

export const IssueListSchema = Type.Array(
  ghObject(
    { number: Type.Integer(), title: Type.String(), state: Type.String(), url: Type.String() },
    'gh issue list: number, title, state, url, labels, assignees, author, updatedAt.',
  ),
);

export const MergedPrListSchema = Type.Array(
  ghObject({ number: Type.Integer(), title: Type.String(), url: Type.String() }, 'gh pr list --state merged: number, title, mergedAt, author, url, labels.'),
);

export const PostedReviewSchema = Type.Object({
  id: Type.Union([Type.Integer(), Type.Null()]),
  url: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union([Type.String({ description: 'COMMENTED, APPROVED, CHANGES_REQUESTED…' }), Type.Null()]),
  comments: Type.Integer({ minimum: 0, description: 'Inline comments sent.' }),
});

export const ConflictAssistSchema = Type.Object({
  status: Type.Union([Type.Literal('clean'), Type.Literal('clean_unverified'), Type.Literal('conflicts')], {
    description: 'clean: rebased onto a base fetched now; clean_unverified: rebased onto a base that could not be fetched; conflicts: the rebase stopped.',
  }),
  pr_number: Type.Integer(),
  head_ref: Type.String(),
  base_ref: Type.String(),
  head_sha: Type.String(),
  base_sha: Type.String(),
  base_source: Type.Union([Type.Literal('origin'), Type.Literal('remote-tracking'), Type.Literal('local')], {
    description: 'origin: fetched now; remote-tracking: origin/<base> as last fetched; local: the local branch.',
  }),
  base_warning: Type.Optional(Type.String({ description: 'Why the base may be behind GitHub.' })),
  worktree_path: Type.Union([Type.String({ description: 'The worktree left mid-rebase, to resolve in.' }), Type.Null()]),
  rebased_sha: Type.Union([Type.String(), Type.Null()]),
  conflicted_files: Type.Array(Type.String()),
  agent_prompt: Type.Union([Type.String({ description: 'What an agent needs to resolve the conflicts in the worktree.' }), Type.Null()]),
});
