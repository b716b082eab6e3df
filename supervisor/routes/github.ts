/**
 * GitHub routes of REFERENCE §1.4, through `gh` (repos/ghCli.ts: 503 when it is missing or logged
 * out), and the AI-backed routes, which a headless tuicd without a provider answers with 501.
 */
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Handler, HttpMethod, RequestContext, Route } from '../http/types.js';
import { isPlainObject } from '../config/merge.js';
import type { GhCli } from '../repos/ghCli.js';
import { intArg, repoPathArg, repoPathFrom, stringArg, stringListArg } from '../repos/repoArgs.js';

const PR_FIELDS = 'number,title,state,headRefName,headRefOid,baseRefName,url,isDraft,author,mergeable,reviewDecision,statusCheckRollup,updatedAt';
const ISSUE_FIELDS = 'number,title,state,url,labels,assignees,author,updatedAt';
const MERGE_METHODS = ['merge', 'squash', 'rebase'];
/** REFERENCE §1.4 `issue_filter`: which issues /repo/issues lists. */
const ISSUE_FILTERS: Record<string, string[]> = { assigned: ['--assignee', '@me'], created: ['--author', '@me'], mentioned: ['--mention', '@me'], all: [] };

type Body = Record<string, unknown>;

function bodyOf(ctx: RequestContext): Body {
  const body = parseJsonBody(ctx);
  if (!isPlainObject(body)) throw new HttpError(400, 'request body must be a JSON object');
  return body as Body;
}

function numberArg(value: unknown, key: string): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new HttpError(400, `'${key}' must be a positive integer`);
  return n;
}

const REVIEW_EVENTS = ['COMMENT', 'APPROVE', 'REQUEST_CHANGES'];
/** More inline comments than a reviewer writes by hand; keeps one request's payload bounded. */
const MAX_REVIEW_COMMENTS = 500;

interface ReviewComment {
  path: string;
  line: number;
  body: string;
  side: 'LEFT' | 'RIGHT';
  start_line?: number;
  start_side?: 'LEFT' | 'RIGHT';
}

/** The GitHub "create a review" payload from POST /repo/post-pr-review's body, checked field by field. */
function reviewPayload(body: Body): { event: string; body: string; comments: ReviewComment[]; commit_id?: string } {
  const event = body['event'] ?? 'COMMENT';
  if (typeof event !== 'string' || !REVIEW_EVENTS.includes(event)) throw new HttpError(400, `'event' must be one of ${REVIEW_EVENTS.join(', ')}`);
  const text = body['body'] ?? '';
  if (typeof text !== 'string') throw new HttpError(400, "'body' must be a string");
  const raw = body['comments'] ?? [];
  if (!Array.isArray(raw)) throw new HttpError(400, "'comments' must be an array");
  if (raw.length > MAX_REVIEW_COMMENTS) throw new HttpError(400, `'comments' may hold at most ${MAX_REVIEW_COMMENTS} entries`);
  if (event !== 'APPROVE' && text.trim() === '' && raw.length === 0) throw new HttpError(400, `a ${event} review needs a 'body' or at least one comment`);
  const comments = raw.map((c: unknown, i): ReviewComment => {
    const where = `comments[${i}]`;
    if (!isPlainObject(c)) throw new HttpError(400, `'${where}' must be an object`);
    const entry = c as Body;
    const side = entry['side'] ?? 'RIGHT';
    if (side !== 'LEFT' && side !== 'RIGHT') throw new HttpError(400, `'${where}.side' must be LEFT or RIGHT`);
    const out: ReviewComment = {
      path: stringArg(entry['path'], `${where}.path`),
      line: numberArg(entry['line'], `${where}.line`),
      body: stringArg(entry['body'], `${where}.body`),
      side,
    };
    if (entry['startLine'] !== undefined) {
      const start = numberArg(entry['startLine'], `${where}.startLine`);
      if (start >= out.line) throw new HttpError(400, `'${where}.startLine' must be below '${where}.line'`);
      out.start_line = start;
      out.start_side = side;
    }
    return out;
  });
  const payload: { event: string; body: string; comments: ReviewComment[]; commit_id?: string } = { event, body: text, comments };
  if (body['commitId'] !== undefined) {
    const sha = stringArg(body['commitId'], 'commitId');
    if (!/^[0-9a-f]{7,64}$/i.test(sha)) throw new HttpError(400, "'commitId' must be a commit SHA");
    payload.commit_id = sha;
  }
  return payload;
}

export function githubRoutes(gh: GhCli): Route[] {
  const routes: Route[] = [];
  const add = (method: HttpMethod, pattern: string, handler: Handler) => routes.push({ method, pattern, handler });
  const qRepo = (ctx: RequestContext) => repoPathFrom(ctx.query);
  const bRepo = (body: Body) => repoPathFrom(body);

  const prs: Handler = async (ctx) => {
    const state = ctx.query.get('include_merged') === 'true' ? 'all' : 'open';
    return json(await gh.json(qRepo(ctx), ['pr', 'list', '--state', state, '--limit', '100', '--json', PR_FIELDS]));
  };
  add('GET', '/repo/prs', prs);
  add('GET', '/repo/pr-statuses', prs);
  add('POST', '/repo/prs/batch', async (ctx) => {
    const body = bodyOf(ctx);
    const paths = stringListArg(body['paths'], 'paths').map((p, i) => repoPathArg(p, `paths[${i}]`));
    const state = body['include_merged'] === true ? 'all' : 'open';
    const out: Record<string, unknown> = {};
    for (const p of paths) out[p] = await gh.json(p, ['pr', 'list', '--state', state, '--limit', '100', '--json', PR_FIELDS]);
    return json(out);
  });
  const github: Handler = async (ctx) =>
    json(await gh.json(qRepo(ctx), ['repo', 'view', '--json', 'name,owner,url,defaultBranchRef,isPrivate,viewerPermission']));
  add('GET', '/repo/github', github);
  add('GET', '/repo/github-status', github);
  const ci: Handler = async (ctx) => {
    const repo = qRepo(ctx);
    const pr = ctx.query.get('pr');
    return json(await gh.json(repo, ['pr', 'checks', ...(pr ? [String(numberArg(pr, 'pr'))] : []), '--json', 'name,state,bucket,link,workflow']));
  };
  add('GET', '/repo/ci', ci);
  add('GET', '/repo/ci-checks', ci);
  add('GET', '/repo/issues', async (ctx) => {
    const filter = ctx.query.get('filter') ?? 'assigned';
    const args = ISSUE_FILTERS[filter];
    if (!args) throw new HttpError(400, `'filter' must be one of ${Object.keys(ISSUE_FILTERS).join(', ')}`);
    return json(
      await gh.json(qRepo(ctx), ['issue', 'list', ...args, '--limit', String(intArg(ctx.query.get('limit'), 'limit', 50, 1, 500)), '--json', ISSUE_FIELDS]),
    );
  });
  for (const verb of ['close', 'reopen'] as const) {
    add('POST', `/repo/issues/${verb}`, async (ctx) => {
      const body = bodyOf(ctx);
      await gh.call(bRepo(body), ['issue', verb, String(numberArg(body['issue_number'], 'issue_number'))]);
      return json({ ok: true });
    });
  }
  add('POST', '/repo/merge-pr', async (ctx) => {
    const body = bodyOf(ctx);
    const repo = bRepo(body);
    const pr = String(numberArg(body['prNumber'], 'prNumber'));
    const method = body['mergeMethod'] ?? 'merge';
    if (typeof method !== 'string' || !MERGE_METHODS.includes(method)) throw new HttpError(400, `'mergeMethod' must be one of ${MERGE_METHODS.join(', ')}`);
    const sha = stringArg(body['expectedHeadSha'], 'expectedHeadSha');
    try {
      await gh.call(repo, ['pr', 'merge', pr, `--${method}`, '--match-head-commit', sha]);
    } catch (err) {
      if (err instanceof HttpError && err.status === 502 && /head|match/i.test(err.message)) throw new HttpError(409, `PR head changed: ${err.message}`);
      throw err;
    }
    const merged = await gh.json<{ mergeCommit?: { oid?: string } }>(repo, ['pr', 'view', pr, '--json', 'mergeCommit']);
    return json({ sha: merged?.mergeCommit?.oid ?? null });
  });
  add('POST', '/repo/approve-pr', async (ctx) => {
    const body = bodyOf(ctx);
    await gh.call(bRepo(body), ['pr', 'review', String(numberArg(body['prNumber'], 'prNumber')), '--approve']);
    return json({ ok: true });
  });
  add('GET', '/repo/pr-diff', async (ctx) =>
    json({ diff: await gh.call(qRepo(ctx), ['pr', 'diff', String(numberArg(ctx.query.get('pr') ?? ctx.query.get('prNumber'), 'pr'))]) }),
  );
  add('POST', '/repo/create-pr', async (ctx) => {
    const body = bodyOf(ctx);
    const args = ['pr', 'create', '--title', stringArg(body['title'], 'title'), '--body', typeof body['body'] === 'string' ? body['body'] : ''];
    if (typeof body['base'] === 'string') args.push('--base', body['base']);
    if (typeof body['head'] === 'string') args.push('--head', body['head']);
    if (body['draft'] === true) args.push('--draft');
    return json({ url: (await gh.call(bRepo(body), args)).trim() });
  });
  add('POST', '/repo/create-issue', async (ctx) => {
    const body = bodyOf(ctx);
    const url = await gh.call(bRepo(body), [
      'issue',
      'create',
      '--title',
      stringArg(body['title'], 'title'),
      '--body',
      typeof body['body'] === 'string' ? body['body'] : '',
    ]);
    return json({ url: url.trim() });
  });
  add('POST', '/repo/post-pr-review', async (ctx) => {
    const body = bodyOf(ctx);
    const pr = numberArg(body['prNumber'], 'prNumber');
    const review = reviewPayload(body);
    // gh fills {owner}/{repo} from the repository's GitHub remote; the payload goes in on stdin.
    const posted = await gh.json<{ id?: number; html_url?: string; state?: string }>(
      bRepo(body),
      ['api', '--method', 'POST', `repos/{owner}/{repo}/pulls/${pr}/reviews`, '--input', '-'],
      JSON.stringify(review),
    );
    return json({ id: posted?.id ?? null, url: posted?.html_url ?? null, state: posted?.state ?? null, comments: review.comments.length });
  });
  add('GET', '/repo/merged-prs', async (ctx) =>
    json(await gh.json(qRepo(ctx), ['pr', 'list', '--state', 'merged', '--limit', '200', '--json', 'number,title,mergedAt,author,url,labels'])),
  );

  // AI-backed: a headless tuicd has no model provider to call.
  const notAvailable: Handler = () => {
    throw new HttpError(501, 'not available in headless tuicd: this route needs an AI provider, and none is configured');
  };
  add('POST', '/repo/pr-review', notAvailable);
  add('POST', '/ai/review/pr', notAvailable);
  add('GET', '/repo/changelog', notAvailable);
  add('POST', '/repo/conflict-assist', notAvailable);
  return routes;
}
