/**
 * `POST /repo/conflict-assist`: will a pull request rebase cleanly onto its base, and if not, where
 * and what to resolve? The pull request's head (from GitHub through `origin`) is checked out
 * detached in a worktree of its own beside the repository, `<repo>__wt/conflict-pr-<n>`, and rebased
 * onto its base branch. The verdict is `clean` (rebased onto a base fetched now), `clean_unverified`
 * (rebased, but onto a base that could not be fetched: a remote-tracking or local branch that may
 * be behind GitHub, which `base_warning` says) or `conflicts` (the worktree is left mid-rebase, its
 * conflicted files listed, with a prompt an agent can work from). Nothing is ever pushed or merged;
 * a clean worktree is removed again. Resolving the conflicts with a model is not this module's:
 * headless tuicd has no model provider.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import type { GhCli } from './ghCli.js';
import { git, GitError } from './gitRunner.js';
import { mainRepoOf } from './worktrees.js';

type BaseSource = 'origin' | 'remote-tracking' | 'local';

interface ConflictAssistResult {
  status: 'clean' | 'clean_unverified' | 'conflicts';
  pr_number: number;
  head_ref: string;
  base_ref: string;
  /** The commit rebased: the pull request's head as fetched (or the local branch of that name). */
  head_sha: string;
  base_sha: string;
  base_source: BaseSource;
  base_warning?: string;
  /** Kept only while there is something to resolve; null once a clean rebase removed it. */
  worktree_path: string | null;
  /** The rebased head, when the rebase went through. */
  rebased_sha: string | null;
  conflicted_files: string[];
  /** What an agent needs to resolve the conflicts in the worktree; null when clean. */
  agent_prompt: string | null;
}

interface PrView {
  number: number;
  headRefName: string;
  headRefOid: string;
  baseRefName: string;
}

/** Refs this module fetches into, per pull request: never a branch a person works on. */
const refPrefix = (pr: number) => `refs/tuicd/conflict-assist/${pr}`;

/** Commit identity for the rebase when the machine has none configured (rebase rewrites committers). */
const FALLBACK_IDENTITY = { GIT_COMMITTER_NAME: 'tuicd', GIT_COMMITTER_EMAIL: 'tuicd@localhost' };
/** Never an editor: a rebase must not wait for a terminal nobody watches. */
const NO_EDITOR = { GIT_EDITOR: 'true', GIT_SEQUENCE_EDITOR: 'true' };

async function revParse(cwd: string, ref: string): Promise<string | null> {
  try {
    return (await git(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim() || null;
  } catch {
    return null;
  }
}

async function identityEnv(repo: string): Promise<Record<string, string>> {
  const email = await git(repo, ['config', 'user.email']).catch(() => '');
  return email.trim() === '' ? { ...FALLBACK_IDENTITY, GIT_AUTHOR_NAME: 'tuicd', GIT_AUTHOR_EMAIL: 'tuicd@localhost' } : {};
}

/** The pull request's head and base as commits here, and where the base came from. */
async function resolveRefs(repo: string, pr: PrView): Promise<{ head: string; base: string; source: BaseSource; warning?: string }> {
  const prefix = refPrefix(pr.number);
  let fetchError: string | null = null;
  try {
    await git(repo, ['fetch', '--no-tags', '--quiet', 'origin', `+refs/pull/${pr.number}/head:${prefix}/head`, `+refs/heads/${pr.baseRefName}:${prefix}/base`]);
  } catch (err) {
    fetchError = err instanceof GitError ? err.stderr.trim().split('\n')[0] || err.message : String(err);
  }
  if (fetchError === null) {
    const head = await revParse(repo, `${prefix}/head`);
    const base = await revParse(repo, `${prefix}/base`);
    if (head !== null && base !== null) return { head, base, source: 'origin' };
  }
  // Offline, or no `origin`: the branches as this repository last saw them.
  const head = (await revParse(repo, `refs/remotes/origin/${pr.headRefName}`)) ?? (await revParse(repo, `refs/heads/${pr.headRefName}`));
  if (head === null)
    throw new ApiError(
      'bad_gateway',
      `cannot get pull request #${pr.number}'s head: fetching it from origin failed (${fetchError ?? 'no such ref'}) and there is no branch '${pr.headRefName}' here`,
    );
  const tracking = await revParse(repo, `refs/remotes/origin/${pr.baseRefName}`);
  const why = `fetching from origin failed (${fetchError ?? 'no such ref'})`;
  if (tracking !== null)
    return {
      head,
      base: tracking,
      source: 'remote-tracking',
      warning: `the base is origin/${pr.baseRefName} as last fetched: ${why}; it may be behind GitHub`,
    };
  const local = await revParse(repo, `refs/heads/${pr.baseRefName}`);
  if (local === null) throw new ApiError('bad_gateway', `cannot get the base branch '${pr.baseRefName}': ${why} and there is no such branch here`);
  return { head, base: local, source: 'local', warning: `the base is the local branch ${pr.baseRefName}: ${why}; it may differ from GitHub's` };
}

function agentPrompt(worktree: string, pr: PrView, files: readonly string[]): string {
  return [
    `Pull request #${pr.number} (${pr.headRefName} into ${pr.baseRefName}) does not rebase cleanly onto ${pr.baseRefName}.`,
    `A rebase is stopped in the worktree at \`${worktree}\` (detached HEAD) with conflicts in:`,
    ...files.map((f) => `- ${f}`),
    `Resolve each file keeping the intent of both sides, \`git add\` it, then run \`git rebase --continue\` (repeat until the rebase finishes). Run the project's tests there.`,
    'Do not push, merge or force-push anything: report the result and leave publishing to a person.',
  ].join('\n');
}

export async function conflictAssist(gh: GhCli, repo: string, prNumber: number): Promise<ConflictAssistResult> {
  const pr = await gh.json<PrView>(repo, ['pr', 'view', String(prNumber), '--json', 'number,headRefName,headRefOid,baseRefName']);
  if (!pr || typeof pr.headRefName !== 'string' || typeof pr.baseRefName !== 'string')
    throw new ApiError('bad_gateway', `gh pr view ${prNumber} answered without the pull request's branches`);
  // Beside the main repository, as every worktree tuicd makes: the path given may be a linked worktree itself.
  const worktreesDir = `${await mainRepoOf(repo)}__wt`;
  const worktree = join(worktreesDir, `conflict-pr-${prNumber}`);
  if (existsSync(worktree))
    throw new ApiError(
      'conflict',
      `a conflict-assist worktree for pull request #${prNumber} is already at ${worktree}: finish or remove it (git worktree remove --force) first`,
    );
  const refs = await resolveRefs(repo, pr);
  const base: Omit<ConflictAssistResult, 'status' | 'worktree_path' | 'rebased_sha' | 'conflicted_files' | 'agent_prompt'> = {
    pr_number: prNumber,
    head_ref: pr.headRefName,
    base_ref: pr.baseRefName,
    head_sha: refs.head,
    base_sha: refs.base,
    base_source: refs.source,
    ...(refs.warning === undefined ? {} : { base_warning: refs.warning }),
  };
  await mkdir(worktreesDir, { recursive: true });
  await git(repo, ['worktree', 'add', '--detach', '--quiet', worktree, refs.head]);
  const remove = () => git(repo, ['worktree', 'remove', '--force', worktree]).catch(() => undefined);
  try {
    await git(worktree, ['rebase', '--quiet', refs.base], { env: { ...NO_EDITOR, ...(await identityEnv(repo)) } });
  } catch (err) {
    const conflicted = (await git(worktree, ['diff', '--name-only', '--diff-filter=U']).catch(() => ''))
      .split('\n')
      .map((f) => f.trim())
      .filter(Boolean);
    if (conflicted.length === 0) {
      await git(worktree, ['rebase', '--abort']).catch(() => undefined);
      await remove();
      throw new ApiError('bad_gateway', `the rebase failed without conflicts: ${(err as Error).message}`);
    }
    return {
      status: 'conflicts',
      ...base,
      worktree_path: worktree,
      rebased_sha: null,
      conflicted_files: conflicted,
      agent_prompt: agentPrompt(worktree, pr, conflicted),
    };
  }
  const rebased = (await git(worktree, ['rev-parse', 'HEAD'])).trim();
  await remove();
  return {
    status: refs.source === 'origin' ? 'clean' : 'clean_unverified',
    ...base,
    worktree_path: null,
    rebased_sha: rebased,
    conflicted_files: [],
    agent_prompt: null,
  };
}
