/**
 * The GitHub routes with gh present and logged in. GitHub cannot be reached from here, so gh is a
 * scripted stand-in (test/fixtures/fakeGh) that answers as gh 2.x does and records each call: the
 * tests check what tuicd asks gh for, and how it turns gh's answers and refusals into HTTP.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { validatorOf } from '../../../shared/schemaCheck.js';
import type { GhCli } from '../../../supervisor/repos/ghCli.js';
import type { RootGate } from '../../../supervisor/fs/rootGate.js';
import { githubRoutes } from '../../../supervisor/routes/github.js';
import { fakeGh, type FakeGh } from '../../fixtures/fakeGh/fakeGhLauncher.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const HEAD = '0123456789abcdef0123456789abcdef01234567';

describe('GitHub routes through gh', () => {
  let sb: GitSandbox;
  let gh: FakeGh;
  let t: Tuicd;
  let repo: string;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': '# app\n' });
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
});
