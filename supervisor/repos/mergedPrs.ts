/**
 * Merged pull requests since a tag (the changelog's source), through gh's GraphQL: `gh pr list`
 * cannot filter by merge date, so the repository's merged pull requests are paged newest update
 * first and kept while merged after the tag's date. A pull request merged after the tag was updated
 * after it too, so the first page whose oldest update predates the tag is the last one needed.
 */
import { ApiError } from '../../shared/apiError.js';
import type { GhCli } from './ghCli.js';
import { git } from './gitRunner.js';

export const MergedPrConstants = {
  /** What /repo/merged-prs answers at most, with or without a tag. */
  MAX_RESULTS: 200,
  PAGE_SIZE: 100,
  /** Pages read at most for one answer (a tag years old in a busy repository stops here). */
  MAX_PAGES: 10,
} as const;

/** One merged pull request, in the shape `gh pr list --json number,title,mergedAt,author,url,labels` gives. */
export interface MergedPr {
  number: number;
  title: string;
  url: string;
  mergedAt: string;
  author: { login: string } | null;
  labels: Array<{ name: string }>;
}

// gh fills {owner} and {repo} in -F fields from the repository's GitHub remote.
const QUERY = `query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequests(states: MERGED, first: ${MergedPrConstants.PAGE_SIZE}, after: $after, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes { number title url mergedAt updatedAt author { login } labels(first: 20) { nodes { name } } }
    }
  }
}`;

interface PageNode {
  number: number;
  title: string;
  url: string;
  mergedAt: string | null;
  updatedAt: string;
  author: { login: string } | null;
  labels: { nodes: Array<{ name: string }> } | null;
}

interface Page {
  data?: { repository?: { pullRequests?: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: PageNode[] } } | null };
}

/** When the tag was made: the tagger's date for an annotated tag, the commit's for a lightweight one. */
export async function tagDate(repoPath: string, tag: string): Promise<number> {
  const out = (await git(repoPath, ['for-each-ref', '--format=%(creatordate:iso-strict)', `refs/tags/${tag}`])).trim();
  if (out === '') throw new ApiError('not_found', `no tag '${tag}' in the repository (fetch tags first: git fetch --tags)`, { extra: { field: 'sinceTag' } });
  return Date.parse(out.split('\n')[0]!);
}

export async function mergedPrsSince(gh: GhCli, repoPath: string, tag: string): Promise<MergedPr[]> {
  const since = await tagDate(repoPath, tag);
  const out: MergedPr[] = [];
  let after: string | null = null;
  for (let page = 0; page < MergedPrConstants.MAX_PAGES; page++) {
    const args = ['api', 'graphql', '-F', 'owner={owner}', '-F', 'name={repo}', '-f', `query=${QUERY}`];
    if (after !== null) args.push('-f', `after=${after}`);
    const answer = await gh.json<Page>(repoPath, args);
    const prs = answer?.data?.repository?.pullRequests;
    if (!prs) throw new ApiError('bad_gateway', 'gh api graphql answered without the repository’s pull requests');
    for (const n of prs.nodes) {
      if (n.mergedAt === null || Date.parse(n.mergedAt) <= since) continue;
      out.push({ number: n.number, title: n.title, url: n.url, mergedAt: n.mergedAt, author: n.author, labels: n.labels?.nodes ?? [] });
    }
    const oldest = prs.nodes.at(-1);
    if (!prs.pageInfo.hasNextPage || prs.pageInfo.endCursor === null || oldest === undefined || Date.parse(oldest.updatedAt) <= since) break;
    after = prs.pageInfo.endCursor;
  }
  out.sort((a, b) => Date.parse(b.mergedAt) - Date.parse(a.mergedAt));
  return out.slice(0, MergedPrConstants.MAX_RESULTS);
}
