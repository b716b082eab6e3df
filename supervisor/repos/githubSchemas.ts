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
