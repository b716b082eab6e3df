/**
 * The git panel routes of REFERENCE §1.4 beyond repo.ts: a file's history and blame, the stash,
 * and the one-call panel header. Same conventions as repo.ts: git's failures on the caller's input are 400s.
 */
import { HttpError, json } from '../http/types.js';
import type { Handler, HttpMethod, Route } from '../http/types.js';
import { commitLog, currentBranch, MAIN_BRANCH_NAMES, porcelainStatus } from '../repos/gitQueries.js';
import { fileBlame, stashList } from '../repos/gitHistory.js';
import { git, GitError } from '../repos/gitRunner.js';
import { boolArg, intArg, relativeFileArg, repoPathFrom } from '../repos/repoArgs.js';
import { aheadBehind, bodyOf, gitRoute, type Body } from './repo.js';

function stashIndexArg(body: Body): number {
  const index = body['index'];
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) throw new HttpError(400, "'index' must be a non-negative integer");
  return index;
}

/** apply/pop that collide with the work tree leave the stash in place; that is a 409 carrying git's words. */
async function stashApply(repo: string, verb: 'apply' | 'pop', index: number): Promise<void> {
  try {
    await git(repo, ['stash', verb, '-q', `stash@{${index}}`]);
  } catch (err) {
    if (err instanceof GitError) {
      const words = `${err.stdout}\n${err.stderr}`.trim();
      if (/CONFLICT|would be overwritten|already exists, no checkout/.test(words)) throw new HttpError(409, `git stash ${verb} failed: ${words}`);
    }
    throw err;
  }
}

export function repoHistoryRoutes(): Route[] {
  const routes: Route[] = [];
  const add = (method: HttpMethod, pattern: string, handler: Handler) => routes.push({ method, pattern, handler: gitRoute(handler) });

  add('GET', '/repo/file-history', async (ctx) => {
    const repo = repoPathFrom(ctx.query);
    const file = relativeFileArg(ctx.query.get('file'), 'file');
    // Any integer is taken and clamped into 1..1000; only a non-integer is refused.
    const count = Math.min(1000, Math.max(1, intArg(ctx.query.get('count'), 'count', 50, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)));
    return json(await commitLog(repo, count, 'HEAD', file));
  });
  add('GET', '/repo/file-blame', async (ctx) => {
    const repo = repoPathFrom(ctx.query);
    const file = relativeFileArg(ctx.query.get('file'), 'file');
    const ref = ctx.query.get('ref') || null;
    // An option-looking ref would be read by git as an option.
    if (ref?.startsWith('-')) throw new HttpError(400, "'ref' must not start with '-'");
    return json(await fileBlame(repo, file, ref));
  });
  add('GET', '/repo/stash', async (ctx) => json(await stashList(repoPathFrom(ctx.query))));
  add('POST', '/repo/stash', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = repoPathFrom(body);
    const message = body['message'];
    if (message !== undefined && message !== null && typeof message !== 'string') throw new HttpError(400, "'message' must be a string");
    const untracked = boolArg(body['include_untracked'], 'include_untracked', false);
    const before = (await stashList(repo)).length;
    await git(repo, ['stash', 'push', '-q', ...(untracked ? ['--include-untracked'] : []), ...(message ? ['-m', message] : [])]);
    // `git stash push` with nothing to save exits 0 and stores nothing: say so.
    return json({ ok: true, created: (await stashList(repo)).length > before });
  });
  for (const verb of ['apply', 'pop'] as const) {
    add('POST', `/repo/stash/${verb}`, async (ctx) => {
      const body = bodyOf(ctx);
      await stashApply(repoPathFrom(body), verb, stashIndexArg(body));
      return json({ ok: true });
    });
  }
  add('POST', '/repo/stash/drop', async (ctx) => {
    const body = bodyOf(ctx);
    await git(repoPathFrom(body), ['stash', 'drop', '-q', `stash@{${stashIndexArg(body)}}`]);
    return json({ ok: true });
  });
  add('GET', '/repo/panel-context', async (ctx) => {
    const repo = repoPathFrom(ctx.query);
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
  });
  return routes;
}
