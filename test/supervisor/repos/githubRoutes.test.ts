/**
 * The GitHub routes and the MCP repo tool's GitHub actions, with gh logged in, logged out, failing
 * and missing. GitHub cannot be reached from here, so gh is a scripted stand-in
 * (test/fixtures/fakeGh) that answers as gh 2.x does and records each call: the tests check what
 * tuicd asks gh for, and how it turns gh's answers and refusals into HTTP and tool errors.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { validatorOf } from '../../../shared/schemaCheck.js';
import type { GhCli } from '../../../supervisor/repos/ghCli.js';
import type { RootGate } from '../../../supervisor/fs/rootGate.js';
import { githubRoutes } from '../../../supervisor/routes/github.js';
import { fakeGh, type FakeGh } from '../../fixtures/fakeGh/fakeGhLauncher.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { mcpSocketClient, type McpSocketClient } from '../../helpers/mcpSocket.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const HEAD = '0123456789abcdef0123456789abcdef01234567';

/** A tag made at a given date (the tagger's), as a release tag would be. */
function tagAt(sb: GitSandbox, repo: string, tag: string, isoDate: string): void {
  execFileSync('git', ['tag', '-a', tag, '-m', tag], { cwd: repo, env: { ...process.env, ...sb.env, GIT_COMMITTER_DATE: isoDate }, stdio: 'ignore' });
}

/** Every route that runs gh, with a request it accepts: [method, path, body]. */
function everyGhRoute(repo: string): Array<['GET' | 'POST', string, unknown?]> {
  const q = encodeURIComponent(repo);
  return [
    ['GET', `/repo/prs?path=${q}`],
    ['GET', `/repo/pr-statuses?path=${q}`],
    ['POST', '/repo/prs/batch', { paths: [repo] }],
    ['GET', `/repo/github?path=${q}`],
    ['GET', `/repo/github-status?path=${q}`],
    ['GET', `/repo/ci?path=${q}&pr=7`],
    ['GET', `/repo/ci-checks?path=${q}&pr=7`],
    ['GET', `/repo/issues?path=${q}`],
    ['POST', '/repo/issues/close', { repo_path: repo, issue_number: 12 }],
    ['POST', '/repo/issues/reopen', { repo_path: repo, issue_number: 12 }],
    ['POST', '/repo/merge-pr', { repoPath: repo, prNumber: 7, expectedHeadSha: HEAD }],
    ['POST', '/repo/approve-pr', { repoPath: repo, prNumber: 7 }],
    ['GET', `/repo/pr-diff?path=${q}&pr=7`],
    ['POST', '/repo/create-pr', { repoPath: repo, title: 'x' }],
    ['POST', '/repo/create-issue', { repoPath: repo, title: 'x' }],
    ['POST', '/repo/post-pr-review', { repoPath: repo, prNumber: 7, event: 'APPROVE' }],
    ['GET', `/repo/merged-prs?path=${q}`],
    ['GET', `/repo/merged-prs?path=${q}&sinceTag=v1.0`],
    ['POST', '/repo/conflict-assist', { repoPath: repo, prNumber: 7 }],
  ];
}

/** Every repo tool action that runs gh, with arguments it accepts. */
function everyGhAction(repo: string): Array<Record<string, unknown>> {
  return [
    { action: 'prs', path: repo },
    { action: 'issues', path: repo, filter: 'all' },
    { action: 'close_issue', path: repo, issue_number: 12 },
    { action: 'reopen_issue', path: repo, issue_number: 12 },
  ];
}

/** Every gh route and repo action answers the same refusal: `status` and `code` with `error` matching. */
async function expectEveryGhRefused(t: Tuicd, repo: string, status: number, code: string, error: RegExp): Promise<void> {
  for (const [method, path, body] of everyGhRoute(repo)) {
    const r = body === undefined ? await t.socket(method, path) : await t.socket(method, path, JSON.stringify(body), { 'content-type': 'application/json' });
    assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
    assert.equal(r.json().code, code, `${method} ${path}`);
    assert.match(r.json().error, error, `${method} ${path}`);
  }
  const mcp = await mcpSocketClient(t);
  for (const args of everyGhAction(repo)) {
    const r = await mcp.callTool('repo', args);
    assert.equal(r.isError, true, JSON.stringify(args));
    assert.equal(r.value.code, code, JSON.stringify(r.value));
    assert.match(r.value.error, error, JSON.stringify(r.value));
  }
}

describe('GitHub routes through gh', () => {
  let sb: GitSandbox;
  let gh: FakeGh;
  let t: Tuicd;
  let repo: string;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': '# app\n' });
    tagAt(sb, repo, 'v1.0', '2026-03-01T00:00:00Z');
    tagAt(sb, repo, 'v0.9', '2026-02-01T00:00:00Z');
    gh = fakeGh(HEAD);
    t = await Tuicd.start({ env: { ...sb.env, ...gh.env } });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
    if (gh) rmSync(gh.dir, { recursive: true, force: true });
  });

  it('lists pull requests with the fields the panel shows, run in the repository', async () => {
    const r = await t.socket('GET', `/repo/prs?path=${encodeURIComponent(repo)}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json()[0].number, 7);
    const call = gh.calls().find((c) => c.args[0] === 'pr' && c.args[1] === 'list');
    assert.ok(call, 'gh pr list was called');
    assert.equal(call.cwd, repo);
    assert.deepEqual(call.args.slice(0, 4), ['pr', 'list', '--state', 'open']);
    assert.ok(call.args.includes('--json'));
  });

  it("answers what the routes declare, gh's JSON passed through", async () => {
    const declared = githubRoutes({} as GhCli, {} as RootGate);
    const q = encodeURIComponent(repo);
    const check = async (method: 'GET' | 'POST', pattern: string, path: string, body?: unknown) => {
      const r = method === 'GET' ? await t.socket('GET', path) : await post(path, body);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      const schema = declared.find((d) => d.method === method && d.pattern === pattern)?.spec?.answers[200];
      assert.ok(schema, `${pattern} declares its answer`);
      const v = validatorOf(schema as never);
      assert.ok(v.Check(r.json()), `${pattern}: ${JSON.stringify([...v.Errors(r.json())].slice(0, 3))}`);
    };
    await check('GET', '/repo/prs', `/repo/prs?path=${q}&include_merged=true`);
    await check('GET', '/repo/pr-statuses', `/repo/pr-statuses?repoPath=${q}`);
    await check('GET', '/repo/merged-prs', `/repo/merged-prs?path=${q}`);
    await check('POST', '/repo/prs/batch', '/repo/prs/batch', { paths: [repo] });
    assert.deepEqual(
      gh
        .calls()
        .find((c) => c.args.includes('all'))
        ?.args.slice(0, 4),
      ['pr', 'list', '--state', 'all'],
    );
  });

  it('merge-pr passes expectedHeadSha to gh; a moved head is 409 and nothing is reported merged', async () => {
    const moved = await post('/repo/merge-pr', {
      repoPath: repo,
      prNumber: 7,
      mergeMethod: 'squash',
      expectedHeadSha: 'fedcba9876543210fedcba9876543210fedcba98',
    });
    assert.equal(moved.status, 409, moved.text);
    assert.equal(moved.json().code, 'conflict');
    assert.match(moved.json().error, /PR head changed: .*Head branch was modified/);
    const merged = await post('/repo/merge-pr', { repoPath: repo, prNumber: 7, mergeMethod: 'squash', expectedHeadSha: HEAD });
    assert.equal(merged.status, 200, merged.text);
    assert.equal(merged.json().sha, '5b1d0c0ffee5b1d0c0ffee5b1d0c0ffee5b1d0c0');
    const merges = gh.calls().filter((c) => c.args[1] === 'merge');
    assert.deepEqual(merges.at(-1)!.args, ['pr', 'merge', '7', '--squash', '--match-head-commit', HEAD]);
  });

  it('post-pr-review sends one review with its inline comments to the pull request', async () => {
    const r = await post('/repo/post-pr-review', {
      repoPath: repo,
      prNumber: 7,
      event: 'REQUEST_CHANGES',
      body: 'Two things before this lands.',
      commitId: HEAD,
      comments: [
        { path: 'src/main.ts', line: 12, body: 'This throws on an empty list.' },
        { path: 'src/util.ts', line: 40, startLine: 31, side: 'LEFT', body: 'The removed guard was needed.' },
      ],
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), { id: 1001, url: 'https://github.com/acme/app/pull/7#pullrequestreview-1001', state: 'CHANGES_REQUESTED', comments: 2 });
    const call = gh.calls().at(-1)!;
    assert.deepEqual(call.args, ['api', '--method', 'POST', 'repos/{owner}/{repo}/pulls/7/reviews', '--input', '-']);
    assert.equal(call.cwd, repo);
    assert.deepEqual(JSON.parse(call.stdin), {
      event: 'REQUEST_CHANGES',
      body: 'Two things before this lands.',
      commit_id: HEAD,
      comments: [
        { path: 'src/main.ts', line: 12, body: 'This throws on an empty list.', side: 'RIGHT' },
        { path: 'src/util.ts', line: 40, body: 'The removed guard was needed.', side: 'LEFT', start_line: 31, start_side: 'LEFT' },
      ],
    });
  });

  it('post-pr-review refuses a malformed review before calling gh, and passes on what GitHub refuses (502)', async () => {
    // [body, error, the field a schema failure names (null: refused after the schema check)]
    const bad: Array<[unknown, RegExp, string | null]> = [
      [{ repoPath: repo, body: 'x' }, /^prNumber is required$/, 'prNumber'],
      [{ repoPath: repo, prNumber: '7', body: 'x' }, /'prNumber' must be a positive integer/, 'prNumber'],
      [{ repoPath: repo, prNumber: 0, body: 'x' }, /'prNumber' must be a positive integer/, 'prNumber'],
      [{ repoPath: repo, prNumber: 7, event: 'MERGE', body: 'x' }, /'event' must be one of COMMENT, APPROVE, REQUEST_CHANGES/, 'event'],
      [{ repoPath: repo, prNumber: 7 }, /a COMMENT review needs a 'body' or at least one comment/, null],
      [{ repoPath: repo, prNumber: 7, comments: {} }, /'comments' must be an array/, 'comments'],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', body: 'x' }] }, /^comments\[0\]\.line is required$/, 'comments[0].line'],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', line: 1.5, body: 'x' }] }, /^comments\[0\]\.line must be an integer$/, 'comments[0].line'],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: '', line: 1, body: 'x' }] }, /^comments\[0\]\.path must not be empty$/, 'comments[0].path'],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', line: 3, startLine: 3, body: 'x' }] }, /'comments\[0\]\.startLine' must be below/, null],
      [
        { repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', line: 3, side: 'UP', body: 'x' }] },
        /^comments\[0\]\.side must be one of: LEFT, RIGHT$/,
        'comments[0].side',
      ],
      [{ repoPath: repo, prNumber: 7, body: 'x', commitId: 'HEAD~1' }, /'commitId' must be a commit SHA/, 'commitId'],
      [{ repoPath: repo, prNumber: 7, comments: Array.from({ length: 501 }, () => ({ path: 'a.ts', line: 1, body: 'x' })) }, /at most 500/, 'comments'],
      [{ repoPath: 'relative/dir', prNumber: 7, body: 'x' }, /'repoPath' must be an absolute path, got "relative\/dir"/, 'repoPath'],
    ];
    const callsBefore = gh.calls().length;
    for (const [body, message, field] of bad) {
      const r = await post('/repo/post-pr-review', body);
      const what = `${JSON.stringify(body).slice(0, 120)}: ${r.text}`;
      assert.equal(r.status, 400, what);
      assert.match(r.json().error, message, what);
      assert.equal(r.json().code, 'invalid_input', what);
      if (field !== null) assert.deepEqual({ field: r.json().field, in: r.json().in }, { field, in: 'body' }, what);
    }
    assert.equal(gh.calls().length, callsBefore, 'gh was never called for a refused review');

    const approve = await post('/repo/post-pr-review', { repoPath: repo, prNumber: 7, event: 'APPROVE' });
    assert.equal(approve.status, 200, approve.text);
    assert.equal(approve.json().state, 'APPROVED');

    const offDiff = await post('/repo/post-pr-review', { repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', line: 5000, body: 'x' }] });
    assert.equal(offDiff.status, 502, offDiff.text);
    assert.equal(offDiff.json().code, 'bad_gateway');
    assert.match(offDiff.json().error, /HTTP 422/);
  });

  const lastCall = (group: string, verb: string) =>
    gh
      .calls()
      .filter((c) => c.args[0] === group && c.args[1] === verb)
      .at(-1);

  it("github-status (and /repo/github) is gh repo view's JSON", async () => {
    for (const route of ['/repo/github-status', '/repo/github']) {
      const r = await t.socket('GET', `${route}?path=${encodeURIComponent(repo)}`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        { name: r.json().name, owner: r.json().owner.login, branch: r.json().defaultBranchRef.name },
        { name: 'app', owner: 'acme', branch: 'main' },
      );
      assert.deepEqual(lastCall('repo', 'view')!.args, ['repo', 'view', '--json', 'name,owner,url,defaultBranchRef,isPrivate,viewerPermission']);
      assert.equal(lastCall('repo', 'view')!.cwd, repo);
    }
  });

  it("ci-checks lists a pull request's checks; without one, gh's own refusal is a 502", async () => {
    const r = await t.socket('GET', `/repo/ci-checks?path=${encodeURIComponent(repo)}&pr=7`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.json().map((c: { name: string; bucket: string }) => [c.name, c.bucket]),
      [
        ['build', 'pass'],
        ['lint', 'fail'],
      ],
    );
    assert.deepEqual(lastCall('pr', 'checks')!.args, ['pr', 'checks', '7', '--json', 'name,state,bucket,link,workflow']);
    const none = await t.socket('GET', `/repo/ci?path=${encodeURIComponent(repo)}`);
    assert.equal(none.status, 502, none.text);
    assert.equal(none.json().code, 'bad_gateway');
    assert.match(none.json().error, /no pull requests found for branch "main"/);
    const bad = await t.socket('GET', `/repo/ci-checks?path=${encodeURIComponent(repo)}&pr=0`);
    assert.equal(bad.status, 400, bad.text);
  });

  it('issues passes the filter and limit to gh issue list', async () => {
    const r = await t.socket('GET', `/repo/issues?path=${encodeURIComponent(repo)}&filter=created&limit=5`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json()[0].number, 12);
    assert.deepEqual(lastCall('issue', 'list')!.args, [
      'issue',
      'list',
      '--author',
      '@me',
      '--limit',
      '5',
      '--json',
      'number,title,state,url,labels,assignees,author,updatedAt',
    ]);
    await t.socket('GET', `/repo/issues?path=${encodeURIComponent(repo)}`);
    assert.deepEqual(lastCall('issue', 'list')!.args.slice(2, 4), ['--assignee', '@me']);
    const bad = await t.socket('GET', `/repo/issues?path=${encodeURIComponent(repo)}&filter=everything`);
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.json().error, /'filter' must be one of assigned, created, mentioned, all/);
  });

  it('issues/close and issues/reopen run gh issue close|reopen; an unknown issue is GitHub refusing (502)', async () => {
    for (const verb of ['close', 'reopen']) {
      const r = await post(`/repo/issues/${verb}`, { repo_path: repo, issue_number: 12 });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json(), { ok: true });
      assert.deepEqual(lastCall('issue', verb)!.args, ['issue', verb, '12']);
      const unknown = await post(`/repo/issues/${verb}`, { repo_path: repo, issue_number: 999 });
      assert.equal(unknown.status, 502, unknown.text);
      assert.match(unknown.json().error, /Could not resolve to an issue or pull request with the number of 999/);
      const bad = await post(`/repo/issues/${verb}`, { repo_path: repo, issue_number: -1 });
      assert.equal(bad.status, 400, bad.text);
    }
  });

  it('create-pr passes title, body, base, head and draft to gh pr create and answers its URL', async () => {
    const r = await post('/repo/create-pr', { repoPath: repo, title: 'Agent work', body: 'Does the thing.', base: 'main', head: 'agent/feature', draft: true });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), { url: 'https://github.com/acme/app/pull/8' });
    assert.deepEqual(lastCall('pr', 'create')!.args, [
      'pr',
      'create',
      '--title',
      'Agent work',
      '--body',
      'Does the thing.',
      '--base',
      'main',
      '--head',
      'agent/feature',
      '--draft',
    ]);
    const before = gh.calls().length;
    const untitled = await post('/repo/create-pr', { repoPath: repo, title: '' });
    assert.equal(untitled.status, 400, untitled.text);
    assert.equal(gh.calls().length, before, 'gh is not called for a refused request');
  });

  it('create-issue passes title and body to gh issue create and answers its URL', async () => {
    const r = await post('/repo/create-issue', { repoPath: repo, title: 'Crash', body: 'On start.' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), { url: 'https://github.com/acme/app/issues/13' });
    assert.deepEqual(lastCall('issue', 'create')!.args, ['issue', 'create', '--title', 'Crash', '--body', 'On start.']);
    const untitled = await post('/repo/create-issue', { repoPath: repo });
    assert.equal(untitled.status, 400, untitled.text);
  });

  it('merged-prs without a tag is gh pr list --state merged', async () => {
    const r = await t.socket('GET', `/repo/merged-prs?path=${encodeURIComponent(repo)}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.json().map((p: { number: number }) => p.number),
      [21, 20, 15, 11],
    );
    assert.deepEqual(lastCall('pr', 'list')!.args, ['pr', 'list', '--state', 'merged', '--limit', '200', '--json', 'number,title,mergedAt,author,url,labels']);
  });

  it("merged-prs with sinceTag pages gh's GraphQL and keeps what was merged after the tag", async () => {
    const callsBefore = gh.calls().length;
    const r = await t.socket('GET', `/repo/merged-prs?path=${encodeURIComponent(repo)}&sinceTag=v1.0`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), [
      {
        number: 21,
        title: 'Fix the parser',
        url: 'https://github.com/acme/app/pull/21',
        mergedAt: '2026-03-05T10:00:00Z',
        author: { login: 'ann' },
        labels: [{ name: 'bug' }],
      },
      { number: 20, title: 'Add search', url: 'https://github.com/acme/app/pull/20', mergedAt: '2026-03-02T10:00:00Z', author: { login: 'bob' }, labels: [] },
    ]);
    const graphql = gh
      .calls()
      .slice(callsBefore)
      .filter((c) => c.args[0] === 'api' && c.args[1] === 'graphql');
    // Page 1 ends with a pull request updated after the tag, so page 2 is read; it ends before the tag: the last.
    assert.equal(graphql.length, 2);
    assert.deepEqual(graphql[0]!.args.slice(0, 6), ['api', 'graphql', '-F', 'owner={owner}', '-F', 'name={repo}']);
    assert.match(graphql[0]!.args[7]!, /^query=query\(\$owner: String!, \$name: String!, \$after: String\)[\s\S]*states: MERGED/);
    assert.deepEqual(graphql[1]!.args.slice(-2), ['-f', 'after=2']);
    assert.equal(graphql[0]!.cwd, repo);

    const older = await t.socket('GET', `/repo/merged-prs?path=${encodeURIComponent(repo)}&sinceTag=v0.9`);
    assert.deepEqual(
      older.json().map((p: { number: number }) => p.number),
      [21, 20, 15],
    );
    const unknown = await t.socket('GET', `/repo/merged-prs?path=${encodeURIComponent(repo)}&sinceTag=v9.9`);
    assert.equal(unknown.status, 404, unknown.text);
    assert.match(unknown.json().error, /no tag 'v9\.9' in the repository/);
    for (const bad of ['-v1', 'v*', 'a b']) {
      const r2 = await t.socket('GET', `/repo/merged-prs?path=${encodeURIComponent(repo)}&sinceTag=${encodeURIComponent(bad)}`);
      assert.equal(r2.status, 400, r2.text);
      assert.match(r2.json().error, /'sinceTag' must be a tag name/);
    }
  });

  it('repo action=prs lists open pull requests through gh pr list, run in the repository', async () => {
    const mcp: McpSocketClient = await mcpSocketClient(t);
    const prsAnswer = await mcp.callTool('repo', { action: 'prs', path: repo });
    assert.equal(prsAnswer.isError, false, JSON.stringify(prsAnswer.value));
    assert.equal(prsAnswer.value.prs[0].number, 7);
    assert.deepEqual(lastCall('pr', 'list')!.args, [
      'pr',
      'list',
      '--state',
      'open',
      '--limit',
      '100',
      '--json',
      'number,title,state,headRefName,url,isDraft,reviewDecision',
    ]);
    assert.equal(lastCall('pr', 'list')!.cwd, repo);
    const noPath = await mcp.callTool('repo', { action: 'prs' });
    assert.match(noPath.value.error, /requires 'path'/);
  });

  it('repo action=issues passes its filter to gh issue list', async () => {
    const mcp = await mcpSocketClient(t);
    const issues = await mcp.callTool('repo', { action: 'issues', path: repo, filter: 'mentioned' });
    assert.equal(issues.value.issues[0].number, 12);
    assert.deepEqual(lastCall('issue', 'list')!.args, ['issue', 'list', '--mention', '@me', '--json', 'number,title,state,url,labels']);
    await mcp.callTool('repo', { action: 'issues', path: repo });
    assert.deepEqual(lastCall('issue', 'list')!.args.slice(2, 4), ['--assignee', '@me']);
    const bad = await mcp.callTool('repo', { action: 'issues', path: repo, filter: 'everything' });
    assert.equal(bad.isError, true);
  });

  for (const verb of ['close', 'reopen']) {
    it(`repo action=${verb}_issue runs gh issue ${verb}; an unknown issue is a bad_gateway error with gh's words`, async () => {
      const mcp = await mcpSocketClient(t);
      const ok = await mcp.callTool('repo', { action: `${verb}_issue`, path: repo, issue_number: 12 });
      assert.deepEqual(ok, { isError: false, value: { ok: true } });
      assert.deepEqual(lastCall('issue', verb)!.args, ['issue', verb, '12']);
      assert.equal(lastCall('issue', verb)!.cwd, repo);
      const unknown = await mcp.callTool('repo', { action: `${verb}_issue`, path: repo, issue_number: 999 });
      assert.equal(unknown.isError, true);
      assert.equal(unknown.value.code, 'bad_gateway');
      assert.match(unknown.value.error, /number of 999/);
      const missing = await mcp.callTool('repo', { action: `${verb}_issue`, path: repo });
      assert.match(missing.value.error, /requires 'issue_number'/);
    });
  }

  it("gh failing (logged in, GitHub unreachable): every route is a 502 and every action a bad_gateway error with gh's words", async () => {
    gh.setMode('failing');
    try {
      await expectEveryGhRefused(t, repo, 502, 'bad_gateway', /error connecting to api\.github\.com/);
    } finally {
      gh.setMode('ok');
    }
  });
});

describe('GitHub through gh, logged out', () => {
  let sb: GitSandbox;
  let gh: FakeGh;
  let t: Tuicd;
  let repo: string;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': '# app\n' });
    tagAt(sb, repo, 'v1.0', '2026-03-01T00:00:00Z');
    gh = fakeGh(HEAD);
    gh.setMode('logged_out');
    t = await Tuicd.start({ env: { ...sb.env, ...gh.env } });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
    if (gh) rmSync(gh.dir, { recursive: true, force: true });
  });

  it('every route is a 503 and every action an unavailable error saying to run gh auth login; nothing but auth status runs', async () => {
    await expectEveryGhRefused(t, repo, 503, 'unavailable', /GitHub CLI logged in: run `gh auth login`.*not logged into any GitHub hosts/);
    assert.deepEqual([...new Set(gh.calls().map((c) => c.args.slice(0, 2).join(' ')))], ['auth status']);
  });
});

describe('GitHub through gh, gh missing', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  let bin: string;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': '# app\n' });
    tagAt(sb, repo, 'v1.0', '2026-03-01T00:00:00Z');
    // A PATH with git and nothing else: no gh, wherever the machine has one.
    bin = mkdtempSync(join(tmpdir(), 'tuicd-no-gh-'));
    symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
    t = await Tuicd.start({ env: { ...sb.env, PATH: bin } });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  it('every route is a 503 and every action an unavailable error saying gh is not installed', async () => {
    await expectEveryGhRefused(t, repo, 503, 'unavailable', /need the GitHub CLI \(gh\), which is not installed/);
  });
});
