/**
 * The git routes a remote reviewer needs, served from the real `git` binary. Every route takes an
 * absolute repository path (`path`, `repoPath` or `repo_path`); a git failure on the caller's input
 * (not a repository, unknown branch) is refused as invalid_input carrying git's own message.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { TObject, TSchema } from 'typebox';
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { ErrorBodySchema } from '../http/openapi.js';
import { defineRoute, type OtherAnswer, type RouteDeclaration } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';
import { containedIn, type RootGate } from '../fs/rootGate.js';
import type { WorkPool } from '../pool/workPool.js';
import { git, GitError, gitExitCode } from '../repos/gitRunner.js';
import {
  branches,
  changedFiles,
  commitLog,
  currentBranch,
  diffBase,
  diffStats,
  initialsOf,
  MAIN_BRANCH_NAMES,
  mergedBranches,
  porcelainStatus,
  repoInfo,
  worktreeList,
} from '../repos/gitQueries.js';
import { checkRepoPath, firstOf, REPO_PATH_KEYS, relativeFile, repoPathFrom } from '../repos/repoArgs.js';
import { checkRunGitArgs, RUN_GIT_ALLOWED, runGitEnv } from '../repos/runGit.js';
import {
  absolutePath,
  BatchStatsSchema,
  boundedInt,
  BranchSchema,
  ChangedFileSchema,
  CommitEntrySchema,
  DiffStatsSchema,
  flag,
  gitRef,
  nonEmpty,
  OkAnswer,
  relativeFilePath,
  RepoInfoSchema,
  repoPathFields,
  RunGitAnswer,
  stringList,
  StructureSchema,
  SummarySchema,
  WorkingTreeStatusSchema,
} from '../repos/repoSchemas.js';

/** The standard file-read cap for remote callers; /repo/file is a viewer, not a transfer. */
const FILE_READ_CAP_BYTES = 10 * 1024 * 1024;
const MAX_BATCH_PATHS = 500;

/** An error answer a route itself makes: what it means there, in the common error body. */
export function failure(description: string): OtherAnswer {
  return { description, schema: ErrorBodySchema };
}

/** The query of a route that takes only a repository. */
export const RepoQuery = Type.Object(repoPathFields(REPO_PATH_KEYS));

/** A git failure caused by the request is the caller's to fix: invalid_input with git's words (git missing: unavailable). */
function gitFailure(err: unknown, ctx: RequestContext): unknown {
  if (err instanceof GitError && /not a git repository/i.test(err.stderr))
    return new ApiError('invalid_input', `not a git repository: ${ctx.query.get('path') ?? ctx.query.get('repoPath') ?? 'the given path'}`);
  if (err instanceof GitError) return new ApiError(err.exitCode === null ? 'unavailable' : 'invalid_input', err.message);
  return err;
}

/** A /repo route (tag repos) whose git failures are answered as gitFailure says. */
export function gitRoute<P extends TObject | undefined = undefined, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined>(
  decl: Omit<RouteDeclaration<P, Q, B>, 'tag'>,
): Route {
  const { handler } = decl;
  return defineRoute<P, Q, B>({
    ...decl,
    tag: 'repos',
    handler: async (input, ctx) => {
      try {
        return await handler(input, ctx);
      } catch (err) {
        throw gitFailure(err, ctx);
      }
    },
  });
}

export async function aheadBehind(cwd: string): Promise<{ upstream: string | null; ahead: number; behind: number }> {
  try {
    const upstream = (await git(cwd, ['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{u}'])).trim();
    const [behind, ahead] = (await git(cwd, ['rev-list', '--left-right', '--count', '@{u}...HEAD'])).trim().split(/\s+/).map(Number);
    return { upstream, ahead: ahead ?? 0, behind: behind ?? 0 };
  } catch {
    return { upstream: null, ahead: 0, behind: 0 };
  }
}

const FilesBody = Type.Object({
  ...repoPathFields(REPO_PATH_KEYS),
  files: stringList('files', 'Paths relative to the repository.'),
});

const fileList = (files: readonly string[]) => files.map((f, i) => relativeFile(f, `files[${i}]`));

const escapes = failure('A file path escapes the repository (`..`, NUL, absolute).');

export function repoRoutes(pool: WorkPool, gate: RootGate): Route[] {
  const files = (pattern: string) =>
    gitRoute({
      method: 'GET',
      pattern,
      summary: 'Changed files against HEAD (staged and unstaged, untracked too) with their line counts',
      query: RepoQuery,
      answers: { 200: Type.Array(ChangedFileSchema) },
      handler: async ({ query }) => json(await changedFiles(repoPathFrom(gate, query, 'query'))),
    });
  const branchList = (pattern: string, refs: string[], summary: string) =>
    gitRoute({
      method: 'GET',
      pattern,
      summary,
      query: RepoQuery,
      answers: { 200: Type.Array(BranchSchema) },
      handler: async ({ query }) => json(await branches(repoPathFrom(gate, query, 'query'), refs)),
    });
  const index = (pattern: string, summary: string, run: (repo: string, files: string[]) => Promise<void>) =>
    gitRoute({
      method: 'POST',
      pattern,
      summary,
      body: FilesBody,
      answers: { 200: OkAnswer, 403: escapes },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        await run(repo, fileList(body.files));
        return json({ ok: true });
      },
    });

  return [
    gitRoute({
      method: 'GET',
      pattern: '/repo/info',
      summary: "A path's repository: its top level, name, initials, branch and clean/dirty/merge/conflict status",
      query: RepoQuery,
      answers: { 200: RepoInfoSchema },
      handler: async ({ query }) => json(await repoInfo(repoPathFrom(gate, query, 'query'))),
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/initials',
      summary: "A name's two-letter initials, as the repository list shows them",
      query: Type.Object({ name: nonEmpty('name') }),
      answers: { 200: Type.Object({ initials: Type.String() }) },
      handler: ({ query }) => json({ initials: initialsOf(query.name) }),
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/diff',
      summary: "The repository's diff: staged, unstaged, or all changes against HEAD (default)",
      query: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        scope: Type.Optional(
          Type.Union([Type.Literal('staged'), Type.Literal('unstaged'), Type.Literal('all')], {
            description: '`all` (default): the work tree against HEAD; `staged`: the index; `unstaged`: the work tree against the index.',
            errorMessage: "'scope' must be staged, unstaged or all, got {quoted}",
          }),
        ),
      }),
      answers: { 200: Type.Object({ diff: Type.String() }) },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const scope = query.scope ?? 'all';
        const args = scope === 'staged' ? ['diff', '--cached'] : scope === 'unstaged' ? ['diff'] : ['diff', await diffBase(repo)];
        // A diff can be tens of MB: read and held on a pool thread, not here.
        return json({ diff: await pool.gitText(repo, args) });
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/diff-stats',
      summary: 'Lines added and deleted in the work tree against HEAD',
      query: RepoQuery,
      answers: { 200: DiffStatsSchema },
      handler: async ({ query }) => json(await diffStats(repoPathFrom(gate, query, 'query'))),
    }),
    gitRoute({
      method: 'POST',
      pattern: '/repo/diff-stats/batch',
      summary: 'Diff stats, last-commit time and clean/dirty for many checkouts at once',
      description:
        'A checkout that is not a repository is an `error` for that path only; a checkout unchanged since an earlier batch is answered without running git.',
      body: Type.Object({
        paths: stringList('paths', `Absolute checkout paths, at most ${MAX_BATCH_PATHS}.`, {
          maxItems: MAX_BATCH_PATHS,
          items: absolutePath('paths[]', 'An existing directory.'),
        }),
      }),
      answers: { 200: BatchStatsSchema },
      handler: async ({ body }) => json(await pool.diffStatsBatch(body.paths.map((p, i) => checkRepoPath(gate, p, `paths[${i}]`, 'body')))),
    }),
    files('/repo/files'),
    files('/repo/changed-files'),
    gitRoute({
      method: 'GET',
      pattern: '/repo/file-diff',
      summary: "One file's diff against HEAD (an untracked file shows whole, as added), or its staged diff",
      query: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        file: relativeFilePath('file'),
        staged: Type.Optional(flag('staged', 'The staged diff (index against HEAD) instead of the work tree against HEAD.')),
      }),
      answers: { 200: Type.Object({ diff: Type.String() }), 403: escapes },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const file = relativeFile(query.file, 'file');
        const staged = query.staged === true;
        const args = staged ? ['diff', '--cached', '--', file] : ['diff', await diffBase(repo), '--', file];
        let diff = await pool.gitText(repo, args);
        // An untracked file has no diff against HEAD: show it whole, as added.
        if (diff === '' && !staged && (await porcelainStatus(repo)).some((e) => e.untracked && e.path === file)) diff = await noIndexDiff(repo, file);
        return json({ diff });
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/file',
      summary: "A file's content: from the work tree, or at a revision (`ref`)",
      query: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        file: relativeFilePath('file'),
        ref: Type.Optional(gitRef('ref', 'A revision to read the file at (`git show <ref>:<file>`); empty or absent: the work tree.')),
      }),
      answers: {
        200: Type.Object({ content: Type.String() }),
        403: escapes,
        404: failure('No such file in the work tree.'),
        413: failure(`The file is over ${FILE_READ_CAP_BYTES} bytes.`),
      },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const file = relativeFile(query.file, 'file');
        if (query.ref) return json({ content: await git(repo, ['show', `${query.ref}:${file}`]) });
        const full = containedIn(repo, join(repo, file), 'file');
        const st = await stat(full).catch(() => null);
        if (!st?.isFile()) throw new ApiError('not_found', `no such file: ${quoteClientInput(file)}`);
        if (st.size > FILE_READ_CAP_BYTES) throw new ApiError('payload_too_large', `file is ${st.size} bytes; the cap is ${FILE_READ_CAP_BYTES}`);
        return json({ content: await readFile(full, 'utf8') });
      },
    }),
    branchList('/repo/branches', ['refs/heads', 'refs/remotes'], 'Local and remote branches, most recently committed first'),
    branchList('/repo/local-branches', ['refs/heads'], 'Local branches, most recently committed first'),
    gitRoute({
      method: 'GET',
      pattern: '/repo/branches/merged',
      summary: 'Branches merged into HEAD',
      query: RepoQuery,
      answers: { 200: Type.Array(Type.String()) },
      handler: async ({ query }) => json(await mergedBranches(repoPathFrom(gate, query, 'query'))),
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/recent-commits',
      summary: 'The last commits of HEAD, newest first',
      query: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), count: Type.Optional(boundedInt('count', 1, 100, 'How many (default 5).')) }),
      answers: { 200: Type.Array(CommitEntrySchema) },
      handler: async ({ query }) => json(await commitLog(repoPathFrom(gate, query, 'query'), query.count ?? 5)),
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/commit-log',
      summary: 'The log of a revision (default HEAD), newest first',
      query: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        count: Type.Optional(boundedInt('count', 1, 1000, 'How many (default 50).')),
        ref: Type.Optional(gitRef('ref', 'The revision (default HEAD).')),
      }),
      answers: { 200: Type.Array(CommitEntrySchema) },
      handler: async ({ query }) => json(await commitLog(repoPathFrom(gate, query, 'query'), query.count ?? 50, query.ref ?? 'HEAD')),
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/summary',
      summary: 'Branch, upstream and ahead/behind, changed files, line counts and the last commit in one call',
      query: RepoQuery,
      answers: { 200: SummarySchema },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const [branch, stats, status, tracking, last] = await Promise.all([
          currentBranch(repo),
          diffStats(repo),
          porcelainStatus(repo),
          aheadBehind(repo),
          commitLog(repo, 1),
        ]);
        return json({ branch, ...tracking, changed_files: status.length, ...stats, last_commit: last[0] ?? null });
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/structure',
      summary: "Each branch's checkout path, and the branches merged into HEAD",
      query: RepoQuery,
      answers: { 200: StructureSchema },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const [worktrees, merged] = await Promise.all([worktreeList(repo), mergedBranches(repo)]);
        return json({ worktree_paths: Object.fromEntries(worktrees.filter((w) => w.branch).map((w) => [w.branch, w.path])), merged_branches: merged });
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/working-tree-status',
      summary: 'Staged, unstaged and untracked files, with the branch and its upstream',
      query: RepoQuery,
      answers: { 200: WorkingTreeStatusSchema },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const [branch, entries, tracking] = await Promise.all([currentBranch(repo), porcelainStatus(repo), aheadBehind(repo)]);
        const pick = (f: (e: (typeof entries)[number]) => boolean) => entries.filter(f).map((e) => ({ path: e.path, status: e.code.trim() }));
        return json({
          branch,
          ...tracking,
          staged: pick((e) => e.staged),
          unstaged: pick((e) => e.unstaged),
          untracked: entries.filter((e) => e.untracked).map((e) => e.path),
        });
      },
    }),
    index('/repo/stage', 'Stage files (`git add`)', async (repo, files) => void (await git(repo, ['add', '--', ...files]))),
    index('/repo/unstage', 'Unstage files (the index goes back to HEAD for them)', async (repo, files) => {
      // Before the first commit there is no HEAD to reset to: take the files out of the index.
      if ((await diffBase(repo)) === 'HEAD') await git(repo, ['reset', '-q', 'HEAD', '--', ...files]);
      else await git(repo, ['rm', '--cached', '-q', '--', ...files]);
    }),
    index('/repo/discard', "Discard files' changes: tracked ones back to HEAD, untracked ones deleted", async (repo, files) => {
      const status = new Map((await porcelainStatus(repo)).map((e) => [e.path, e]));
      const untracked = files.filter((f) => status.get(f)?.untracked);
      const tracked = files.filter((f) => !status.get(f)?.untracked);
      if (tracked.length > 0) await git(repo, ['checkout', 'HEAD', '--', ...tracked]);
      if (untracked.length > 0) await git(repo, ['clean', '-f', '-q', '--', ...untracked]);
    }),
    gitRoute({
      method: 'POST',
      pattern: '/repo/commit',
      summary: 'Commit what is staged with a message',
      body: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), message: nonEmpty('message', 'The commit message.') }),
      answers: { 200: Type.Object({ ok: Type.Literal(true), sha: Type.String({ description: 'The new commit.' }) }) },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        await git(repo, ['commit', '-q', '-F', '-'], { input: body.message });
        return json({ ok: true, sha: (await git(repo, ['rev-parse', 'HEAD'])).trim() });
      },
    }),
    gitRoute({
      method: 'POST',
      pattern: '/repo/checkout-remote',
      summary: 'Check out a remote branch as a new local branch tracking it',
      body: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        branchName: Type.Optional(gitRef('branchName', 'The remote branch (`origin/feature`); the local one drops the remote name.', { nonEmpty: true })),
        branch_name: Type.Optional(gitRef('branchName', 'Another spelling of `branchName`.', { nonEmpty: true })),
      }),
      answers: { 200: Type.Object({ ok: Type.Literal(true), branch: Type.String({ description: 'The new local branch.' }) }) },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        const remoteBranch = firstOf(body, ['branchName', 'branch_name'], 'body', 'a non-empty string').value;
        const local = remoteBranch.replace(/^[^/]+\//, '');
        await git(repo, ['checkout', '-q', '-b', local, '--track', remoteBranch]);
        return json({ ok: true, branch: local });
      },
    }),
    gitRoute({
      method: 'POST',
      pattern: '/repo/branch/rename',
      summary: 'Rename a local branch',
      body: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), old_name: nonEmpty('old_name'), new_name: nonEmpty('new_name') }),
      answers: { 200: OkAnswer },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        const newName = body.new_name;
        if ((await gitExitCode(repo, ['check-ref-format', '--branch', newName])) !== 0 || newName.startsWith('-'))
          throw new ApiError('invalid_input', `not a valid branch name: ${quoteClientInput(newName)}`);
        await git(repo, ['branch', '-m', '--', body.old_name, newName]);
        return json({ ok: true });
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/is-main-branch',
      summary: 'Whether a branch name is a main branch (main, master, develop)',
      query: Type.Object({ branch: nonEmpty('branch') }),
      answers: { 200: Type.Object({ is_main: Type.Boolean() }) },
      handler: ({ query }) => json({ is_main: MAIN_BRANCH_NAMES.includes(query.branch) }),
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/markdown-files',
      summary: 'Markdown files git would show (tracked, and untracked but not ignored), sorted',
      query: RepoQuery,
      answers: { 200: Type.Array(Type.String()) },
      handler: async ({ query }) => {
        const out = await git(repoPathFrom(gate, query, 'query'), [
          'ls-files',
          '-z',
          '--cached',
          '--others',
          '--exclude-standard',
          '--',
          '*.md',
          '*.markdown',
          '*.MD',
        ]);
        return json(out.split('\0').filter(Boolean).sort());
      },
    }),
    gitRoute({
      method: 'GET',
      pattern: '/repo/remote-url',
      summary: "A remote's URL (default origin), or null when there is no such remote",
      query: Type.Object({ ...repoPathFields(REPO_PATH_KEYS), remote: Type.Optional(Type.String({ description: 'The remote (default origin).' })) }),
      answers: { 200: Type.Object({ url: Type.Union([Type.String(), Type.Null()]) }) },
      handler: async ({ query }) => {
        const repo = repoPathFrom(gate, query, 'query');
        const remote = query.remote ?? 'origin';
        const code = await gitExitCode(repo, ['remote', 'get-url', remote]);
        return json({ url: code === 0 ? (await git(repo, ['remote', 'get-url', remote])).trim() : null });
      },
    }),
    gitRoute({
      method: 'POST',
      pattern: '/repo/run-git',
      summary: 'Run one read-only git subcommand; its exit code, stdout and stderr',
      description: `Allowed subcommands (by their real names; aliases are never resolved): ${RUN_GIT_ALLOWED.join(', ')}. Each takes only an explicit list of its options; a long option may be abbreviated as git allows (to a unique prefix of an allowed option), a prefix of a refused one (\`--output\`, \`--open-files-in-pager\`, \`--ext-diff\`, \`--textconv\`…) or of several is refused, and global options (\`-c\`, \`-C\`, \`--git-dir\`…) are never taken. git runs in the repository with a scrubbed environment (no system or global config, \`cat\` as the pager, no external diff or textconv).`,
      body: Type.Object({
        ...repoPathFields(REPO_PATH_KEYS),
        args: Type.Array(Type.String(), {
          minItems: 1,
          description: "git's arguments, the subcommand first.",
          errorMessage: "'args' must be a non-empty array of strings",
        }),
      }),
      answers: { 200: RunGitAnswer },
      handler: async ({ body }) => {
        const repo = repoPathFrom(gate, body, 'body');
        const args = checkRunGitArgs(body.args);
        try {
          return json({ exit_code: 0, stdout: await git(repo, args, { replaceEnv: runGitEnv(process.env) }), stderr: '' });
        } catch (err) {
          if (err instanceof GitError && err.exitCode !== null) return json({ exit_code: err.exitCode, stdout: '', stderr: err.stderr });
          throw err;
        }
      },
    }),
  ];
}

/** An untracked file as a whole-file addition (git diff --no-index exits 1 when files differ). */
async function noIndexDiff(repo: string, file: string): Promise<string> {
  try {
    return await git(repo, ['diff', '--no-index', '--', '/dev/null', file]);
  } catch (err) {
    if (err instanceof GitError && err.exitCode === 1) return err.stdout;
    throw err;
  }
}
