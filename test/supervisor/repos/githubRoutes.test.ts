/**
 * The GitHub routes with gh present and logged in. GitHub cannot be reached from here, so gh is a
 * scripted stand-in (test/fixtures/fakeGh) that answers as gh 2.x does and records each call: the
 * tests check what tuicd asks gh for, and how it turns gh's answers and refusals into HTTP.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

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

  it('merge-pr passes expectedHeadSha to gh; a moved head is 409 and nothing is reported merged', async () => {
    const moved = await post('/repo/merge-pr', {
      repoPath: repo,
      prNumber: 7,
      mergeMethod: 'squash',
      expectedHeadSha: 'fedcba9876543210fedcba9876543210fedcba98',
    });
    assert.equal(moved.status, 409, moved.text);
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
    const bad: Array<[unknown, RegExp]> = [
      [{ repoPath: repo, body: 'x' }, /'prNumber' must be a positive integer/],
      [{ repoPath: repo, prNumber: 7, event: 'MERGE', body: 'x' }, /'event' must be one of COMMENT, APPROVE, REQUEST_CHANGES/],
      [{ repoPath: repo, prNumber: 7 }, /a COMMENT review needs a 'body' or at least one comment/],
      [{ repoPath: repo, prNumber: 7, comments: {} }, /'comments' must be an array/],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', body: 'x' }] }, /'comments\[0\]\.line' must be a positive integer/],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: '', line: 1, body: 'x' }] }, /'comments\[0\]\.path' is required/],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', line: 3, startLine: 3, body: 'x' }] }, /'comments\[0\]\.startLine' must be below/],
      [{ repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', line: 3, side: 'UP', body: 'x' }] }, /'comments\[0\]\.side' must be LEFT or RIGHT/],
      [{ repoPath: repo, prNumber: 7, body: 'x', commitId: 'HEAD~1' }, /'commitId' must be a commit SHA/],
      [{ repoPath: repo, prNumber: 7, comments: Array.from({ length: 501 }, () => ({ path: 'a.ts', line: 1, body: 'x' })) }, /at most 500/],
      [{ repoPath: 'relative/dir', prNumber: 7, body: 'x' }, /absolute/],
    ];
    const callsBefore = gh.calls().length;
    for (const [body, message] of bad) {
      const r = await post('/repo/post-pr-review', body);
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 120)}: ${r.text}`);
      assert.match(r.json().error, message);
    }
    assert.equal(gh.calls().length, callsBefore, 'gh was never called for a refused review');

    const approve = await post('/repo/post-pr-review', { repoPath: repo, prNumber: 7, event: 'APPROVE' });
    assert.equal(approve.status, 200, approve.text);
    assert.equal(approve.json().state, 'APPROVED');

    const offDiff = await post('/repo/post-pr-review', { repoPath: repo, prNumber: 7, comments: [{ path: 'a.ts', line: 5000, body: 'x' }] });
    assert.equal(offDiff.status, 502, offDiff.text);
    assert.match(offDiff.json().error, /HTTP 422/);
  });
});
