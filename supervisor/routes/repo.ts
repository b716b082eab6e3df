/**
 * The git routes of REFERENCE §1.4 a remote reviewer needs, served from the real `git` binary.
 * Every route takes an absolute repository path (`path`, or `repoPath`); a git failure on the
 * caller's input (not a repository, unknown branch) is a 400 carrying git's own message.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Handler, HttpMethod, RequestContext, Route } from '../http/types.js';
import { isPlainObject } from '../config/merge.js';
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
import { intArg, relativeFileArg, repoPathArg, repoPathFrom, stringArg, stringListArg } from '../repos/repoArgs.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { containedPath } from '../fs/rootGate.js';

/** The standard file-read cap (REFERENCE §1.10: the remote cap); /repo/file is a viewer, not a transfer. */
const FILE_READ_CAP_BYTES = 10 * 1024 * 1024;
const MAX_BATCH_PATHS = 500;

/**
 * Read-only subcommands `run-git` runs. Each one only reads the repository; options that make
 * a reader write a file or run a program (`--output`, `--ext-diff`, `-O`) are refused below.
 */
export const RUN_GIT_ALLOWED = [
  'status',
  'log',
  'diff',
  'show',
  'rev-parse',
  'ls-files',
  'ls-tree',
  'blame',
  'shortlog',
  'describe',
  'for-each-ref',
  'merge-base',
  'rev-list',
  'cat-file',
  'grep',
  'show-ref',
  'name-rev',
  'diff-tree',
  'count-objects',
] as const;
const RUN_GIT_REFUSED_OPTIONS = /^(--output|--ext-diff|--textconv|-O|--open-files-in-pager|--exec)/;

export type Body = Record<string, unknown>;

export function bodyOf(ctx: RequestContext): Body {
  const body = parseJsonBody(ctx);
  if (!isPlainObject(body)) throw new HttpError(400, 'request body must be a JSON object');
  return body as Body;
}

const queryRepo = (ctx: RequestContext): string => repoPathFrom(ctx.query);
const bodyRepo = (body: Body): string => repoPathFrom(body);

/** A git failure caused by the request is the caller's to fix: 400 with git's words. */
export function gitRoute(handler: Handler): Handler {
  return async (ctx) => {
    try {
      return await handler(ctx);
    } catch (err) {
      if (err instanceof GitError && /not a git repository/i.test(err.stderr))
        throw new HttpError(400, `not a git repository: ${ctx.query.get('path') ?? ctx.query.get('repoPath') ?? 'the given path'}`);
      if (err instanceof GitError) throw new HttpError(err.exitCode === null ? 503 : 400, err.message);
      throw err;
    }
  };
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

export function repoRoutes(pool: WorkPool): Route[] {
  const routes: Route[] = [];
  const add = (method: HttpMethod, pattern: string, handler: Handler) => routes.push({ method, pattern, handler: gitRoute(handler) });

  add('GET', '/repo/info', async (ctx) => json(await repoInfo(queryRepo(ctx))));
  add('GET', '/repo/initials', (ctx) => json({ initials: initialsOf(stringArg(ctx.query.get('name'), 'name')) }));
  add('GET', '/repo/diff', async (ctx) => {
    const repo = queryRepo(ctx);
    const scope = ctx.query.get('scope') ?? 'all';
    const args = scope === 'staged' ? ['diff', '--cached'] : scope === 'unstaged' ? ['diff'] : scope === 'all' ? ['diff', await diffBase(repo)] : null;
    if (!args) throw new HttpError(400, `'scope' must be staged, unstaged or all, got ${quoteClientInput(scope)}`);
    // A diff can be tens of MB: read and held on a pool thread, not here.
    return json({ diff: await pool.gitText(repo, args) });
  });
  add('GET', '/repo/diff-stats', async (ctx) => json(await diffStats(queryRepo(ctx))));
  add('POST', '/repo/diff-stats/batch', async (ctx) => {
    const body = bodyOf(ctx);
    const paths = stringListArg(body['paths'], 'paths');
    if (paths.length > MAX_BATCH_PATHS) throw new HttpError(400, `at most ${MAX_BATCH_PATHS} paths per batch`);
    return json(await pool.diffStatsBatch(paths.map((p, i) => repoPathArg(p, `paths[${i}]`))));
  });
  const files: Handler = async (ctx) => json(await changedFiles(queryRepo(ctx)));
  add('GET', '/repo/files', files);
  add('GET', '/repo/changed-files', files);
  add('GET', '/repo/file-diff', async (ctx) => {
    const repo = queryRepo(ctx);
    const file = relativeFileArg(ctx.query.get('file'), 'file');
    const staged = ctx.query.get('staged') === 'true';
    const args = staged ? ['diff', '--cached', '--', file] : ['diff', await diffBase(repo), '--', file];
    let diff = await pool.gitText(repo, args);
    // An untracked file has no diff against HEAD: show it whole, as added.
    if (diff === '' && !staged && (await porcelainStatus(repo)).some((e) => e.untracked && e.path === file)) diff = await noIndexDiff(repo, file);
    return json({ diff });
  });
  add('GET', '/repo/file', async (ctx) => {
    const repo = queryRepo(ctx);
    const file = relativeFileArg(ctx.query.get('file'), 'file');
    const ref = ctx.query.get('ref');
    if (ref) {
      if (ref.startsWith('-')) throw new HttpError(400, "'ref' must not start with '-'");
      return json({ content: await git(repo, ['show', `${ref}:${file}`]) });
    }
    const full = await containedPath([repo], join(repo, file));
    const st = await stat(full).catch(() => null);
    if (!st?.isFile()) throw new HttpError(404, `no such file: ${quoteClientInput(file)}`);
    if (st.size > FILE_READ_CAP_BYTES) throw new HttpError(413, `file is ${st.size} bytes; the cap is ${FILE_READ_CAP_BYTES}`);
    return json({ content: await readFile(full, 'utf8') });
  });
  add('GET', '/repo/branches', async (ctx) => json(await branches(queryRepo(ctx), ['refs/heads', 'refs/remotes'])));
  add('GET', '/repo/local-branches', async (ctx) => json(await branches(queryRepo(ctx), ['refs/heads'])));
  add('GET', '/repo/branches/merged', async (ctx) => json(await mergedBranches(queryRepo(ctx))));
  add('GET', '/repo/recent-commits', async (ctx) => json(await commitLog(queryRepo(ctx), intArg(ctx.query.get('count'), 'count', 5, 1, 100))));
  add('GET', '/repo/commit-log', async (ctx) => {
    const ref = ctx.query.get('ref') ?? 'HEAD';
    if (ref.startsWith('-')) throw new HttpError(400, "'ref' must not start with '-'");
    return json(await commitLog(queryRepo(ctx), intArg(ctx.query.get('count'), 'count', 50, 1, 1000), ref));
  });
  add('GET', '/repo/summary', async (ctx) => {
    const repo = queryRepo(ctx);
    const [branch, stats, status, tracking, last] = await Promise.all([
      currentBranch(repo),
      diffStats(repo),
      porcelainStatus(repo),
      aheadBehind(repo),
      commitLog(repo, 1),
    ]);
    return json({ branch, ...tracking, changed_files: status.length, ...stats, last_commit: last[0] ?? null });
  });
  add('GET', '/repo/structure', async (ctx) => {
    const repo = queryRepo(ctx);
    const [worktrees, merged] = await Promise.all([worktreeList(repo), mergedBranches(repo)]);
    return json({ worktree_paths: Object.fromEntries(worktrees.filter((w) => w.branch).map((w) => [w.branch, w.path])), merged_branches: merged });
  });
  add('GET', '/repo/working-tree-status', async (ctx) => {
    const repo = queryRepo(ctx);
    const [branch, entries, tracking] = await Promise.all([currentBranch(repo), porcelainStatus(repo), aheadBehind(repo)]);
    const pick = (f: (e: (typeof entries)[number]) => boolean) => entries.filter(f).map((e) => ({ path: e.path, status: e.code.trim() }));
    return json({
      branch,
      ...tracking,
      staged: pick((e) => e.staged),
      unstaged: pick((e) => e.unstaged),
      untracked: entries.filter((e) => e.untracked).map((e) => e.path),
    });
  });
  const fileList = (body: Body) => stringListArg(body['files'], 'files').map((f, i) => relativeFileArg(f, `files[${i}]`));
  add('POST', '/repo/stage', async (ctx) => {
    const body = bodyOf(ctx);
    await git(bodyRepo(body), ['add', '--', ...fileList(body)]);
    return json({ ok: true });
  });
  add('POST', '/repo/unstage', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const files = fileList(body);
    // Before the first commit there is no HEAD to reset to: take the files out of the index.
    if ((await diffBase(repo)) === 'HEAD') await git(repo, ['reset', '-q', 'HEAD', '--', ...files]);
    else await git(repo, ['rm', '--cached', '-q', '--', ...files]);
    return json({ ok: true });
  });
  add('POST', '/repo/discard', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const files = fileList(body);
    const status = new Map((await porcelainStatus(repo)).map((e) => [e.path, e]));
    const untracked = files.filter((f) => status.get(f)?.untracked);
    const tracked = files.filter((f) => !status.get(f)?.untracked);
    if (tracked.length > 0) await git(repo, ['checkout', 'HEAD', '--', ...tracked]);
    if (untracked.length > 0) await git(repo, ['clean', '-f', '-q', '--', ...untracked]);
    return json({ ok: true });
  });
  add('POST', '/repo/commit', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const message = stringArg(body['message'], 'message');
    await git(repo, ['commit', '-q', '-F', '-'], { input: message });
    return json({ ok: true, sha: (await git(repo, ['rev-parse', 'HEAD'])).trim() });
  });
  add('POST', '/repo/checkout-remote', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const remoteBranch = stringArg(body['branchName'] ?? body['branch_name'], 'branchName');
    if (remoteBranch.startsWith('-')) throw new HttpError(400, "'branchName' must not start with '-'");
    const local = remoteBranch.replace(/^[^/]+\//, '');
    await git(repo, ['checkout', '-q', '-b', local, '--track', remoteBranch]);
    return json({ ok: true, branch: local });
  });
  add('POST', '/repo/branch/rename', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const oldName = stringArg(body['old_name'], 'old_name');
    const newName = stringArg(body['new_name'], 'new_name');
    if ((await gitExitCode(repo, ['check-ref-format', '--branch', newName])) !== 0 || newName.startsWith('-'))
      throw new HttpError(400, `not a valid branch name: ${quoteClientInput(newName)}`);
    await git(repo, ['branch', '-m', '--', oldName, newName]);
    return json({ ok: true });
  });
  add('GET', '/repo/is-main-branch', (ctx) => json({ is_main: MAIN_BRANCH_NAMES.includes(stringArg(ctx.query.get('branch'), 'branch')) }));
  add('GET', '/repo/markdown-files', async (ctx) => {
    const out = await git(queryRepo(ctx), ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', '*.md', '*.markdown', '*.MD']);
    return json(out.split('\0').filter(Boolean).sort());
  });
  add('GET', '/repo/remote-url', async (ctx) => {
    const repo = queryRepo(ctx);
    const remote = ctx.query.get('remote') ?? 'origin';
    const code = await gitExitCode(repo, ['remote', 'get-url', remote]);
    return json({ url: code === 0 ? (await git(repo, ['remote', 'get-url', remote])).trim() : null });
  });
  add('POST', '/repo/run-git', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bodyRepo(body);
    const args = body['args'];
    if (!Array.isArray(args) || args.length === 0 || !args.every((a) => typeof a === 'string'))
      throw new HttpError(400, "'args' must be a non-empty array of strings");
    const sub = args[0] as string;
    if (!(RUN_GIT_ALLOWED as readonly string[]).includes(sub))
      throw new HttpError(400, `git subcommand ${quoteClientInput(sub)} is not allowed; allowed: ${RUN_GIT_ALLOWED.join(', ')}`);
    const refused = (args as string[]).find((a) => RUN_GIT_REFUSED_OPTIONS.test(a));
    if (refused) throw new HttpError(400, `git option ${quoteClientInput(refused)} is not allowed through run-git`);
    try {
      return json({ exit_code: 0, stdout: await git(repo, args as string[]), stderr: '' });
    } catch (err) {
      if (err instanceof GitError && err.exitCode !== null) return json({ exit_code: err.exitCode, stdout: '', stderr: err.stderr });
      throw err;
    }
  });
  return routes;
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
