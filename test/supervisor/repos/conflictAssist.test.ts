/**
 * POST /repo/conflict-assist against real git repositories: a bare `origin` holding the pull
 * requests' heads (refs/pull/<n>/head, as GitHub serves them) and a base that moved on since the
 * local clone last looked, and the scripted gh for the pull request's branches. A clean rebase
 * (verified against the base fetched now, unverified against a remote-tracking or local base when
 * origin is unreachable), a real conflict left in its worktree with the files and an agent prompt,
 * the refusals; only `resolve: true` (the model step) answers 501.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { fakeGh, type FakeGh } from '../../fixtures/fakeGh/fakeGhLauncher.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

describe('conflict-assist: worktree, rebase, verdict', () => {
  let sb: GitSandbox;
  let gh: FakeGh;
  let t: Tuicd;
  let repo: string;
  let origin: string;
  let baseOnOrigin: string;
  let localBase: string;
  const post = (body: unknown) => t.socket('POST', '/repo/conflict-assist', JSON.stringify(body), { 'content-type': 'application/json' });

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'file.txt': 'one\ntwo\n' });
    localBase = sb.git(repo, 'rev-parse', 'HEAD').trim();
    origin = join(repo, '..', 'origin.git');
    sb.git(repo, 'init', '-q', '--bare', origin);
    sb.git(repo, 'remote', 'add', 'origin', origin);
    // PR 7 (agent/feature) changes the line main changes next: a real conflict, but only with origin's main.
    sb.git(repo, 'checkout', '-q', '-b', 'agent/feature');
    sb.write(repo, { 'file.txt': 'feature one\ntwo\n' });
    sb.git(repo, 'commit', '-qam', 'feature');
    // PR 8 (agent/pr-8) touches another file: rebases cleanly.
    sb.git(repo, 'checkout', '-q', '-b', 'agent/pr-8', 'main');
    sb.write(repo, { 'other.txt': 'other\n' });
    sb.git(repo, 'add', 'other.txt');
    sb.git(repo, 'commit', '-qm', 'other');
    sb.git(repo, 'checkout', '-q', 'main');
    sb.write(repo, { 'file.txt': 'main one\ntwo\n' });
    sb.git(repo, 'commit', '-qam', 'main moves on');
    baseOnOrigin = sb.git(repo, 'rev-parse', 'HEAD').trim();
    sb.git(repo, 'push', '-q', origin, 'main', 'agent/feature:refs/pull/7/head', 'agent/pr-8:refs/pull/8/head');
    // The clone never saw main move: its main and origin/main are still the first commit.
    sb.git(repo, 'reset', '-q', '--hard', localBase);
    sb.git(repo, 'update-ref', 'refs/remotes/origin/main', localBase);
    gh = fakeGh(baseOnOrigin);
    t = await Tuicd.start({ env: { ...sb.env, ...gh.env } });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
    if (gh) rmSync(gh.dir, { recursive: true, force: true });
  });

  it('a pull request that rebases cleanly onto the base fetched now is clean; its worktree is gone again and nothing was pushed', async () => {
    const r = await post({ repoPath: repo, prNumber: 8 });
    assert.equal(r.status, 200, r.text);
    const v = r.json();
    assert.deepEqual(
      { status: v.status, base_source: v.base_source, base_sha: v.base_sha, worktree: v.worktree_path, files: v.conflicted_files, prompt: v.agent_prompt },
      { status: 'clean', base_source: 'origin', base_sha: baseOnOrigin, worktree: null, files: [], prompt: null },
    );
    assert.equal(v.base_warning, undefined);
    assert.equal(sb.git(repo, 'rev-parse', `${v.rebased_sha}^`).trim(), baseOnOrigin, 'rebased onto origin main');
    assert.equal(existsSync(join(`${repo}__wt`, 'conflict-pr-8')), false);
    assert.equal(sb.git(origin, 'rev-parse', 'refs/pull/8/head').trim(), v.head_sha, 'origin is untouched');
    assert.equal(sb.git(repo, 'rev-parse', 'main').trim(), localBase, 'the local main is untouched');
    assert.deepEqual(gh.calls().at(-1)!.args, ['pr', 'view', '8', '--json', 'number,headRefName,headRefOid,baseRefName']);
  });

  it('a real conflict leaves the worktree mid-rebase with the conflicted files and a prompt; a second run is refused until it is gone', async () => {
    const r = await post({ repoPath: repo, prNumber: 7 });
    assert.equal(r.status, 200, r.text);
    const v = r.json();
    const worktree = join(`${repo}__wt`, 'conflict-pr-7');
    assert.deepEqual(
      { status: v.status, files: v.conflicted_files, worktree: v.worktree_path, rebased: v.rebased_sha, head: v.head_ref, base: v.base_ref },
      { status: 'conflicts', files: ['file.txt'], worktree, rebased: null, head: 'agent/feature', base: 'main' },
    );
    assert.match(readFileSync(join(worktree, 'file.txt'), 'utf8'), /^<<<<<<< /m);
    assert.match(sb.git(worktree, 'status'), /rebase in progress/);
    assert.match(v.agent_prompt, new RegExp(`worktree at \`${worktree.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\``));
    assert.match(v.agent_prompt, /- file\.txt\n/);
    assert.match(v.agent_prompt, /Do not push/);

    const again = await post({ repoPath: repo, prNumber: 7 });
    assert.equal(again.status, 409, again.text);
    assert.match(again.json().error, /already at .*conflict-pr-7/);
    sb.git(worktree, 'rebase', '--abort');
    sb.git(repo, 'worktree', 'remove', '--force', worktree);
  });

  it('asked from a linked worktree of the repository, its worktree goes beside the main repository, not beside the path given', async () => {
    const linked = join(`${repo}__wt`, 'linked');
    sb.git(repo, 'worktree', 'add', '-q', '--detach', linked);
    await t.registerRepos(repo, linked);
    const r = await post({ repoPath: linked, prNumber: 7 });
    assert.equal(r.status, 200, r.text);
    const worktree = join(`${repo}__wt`, 'conflict-pr-7');
    assert.deepEqual({ status: r.json().status, worktree: r.json().worktree_path }, { status: 'conflicts', worktree });
    assert.equal(existsSync(`${linked}__wt`), false);
    sb.git(worktree, 'rebase', '--abort');
    sb.git(repo, 'worktree', 'remove', '--force', worktree);
    sb.git(repo, 'worktree', 'remove', '--force', linked);
    await t.registerRepos(repo);
  });

  it('resolve: true (the model step) is 501 and does nothing; bad input and an unknown pull request are refused', async () => {
    const model = await post({ repoPath: repo, prNumber: 8, resolve: true });
    assert.equal(model.status, 501, model.text);
    assert.equal(model.json().code, 'not_implemented');
    assert.match(model.json().error, /no AI provider.*call without resolve/);
    assert.equal(existsSync(join(`${repo}__wt`, 'conflict-pr-8')), false);
    const unknown = await post({ repoPath: repo, prNumber: 999 });
    assert.equal(unknown.status, 502, unknown.text);
    assert.match(unknown.json().error, /Could not resolve to a PullRequest with the number of 999/);
    for (const body of [
      { repoPath: repo },
      { repoPath: repo, prNumber: 0 },
      { repoPath: repo, prNumber: 8, resolve: 'yes' },
      { repoPath: '/etc', prNumber: 8 },
    ]) {
      const r = await post(body);
      assert.ok(r.status === 400 || r.status === 403, `${JSON.stringify(body)}: ${r.text}`);
    }
  });

  it('origin unreachable: the base as last fetched (remote-tracking), then the local branch, each clean_unverified with a warning', async () => {
    sb.git(repo, 'remote', 'set-url', 'origin', join(repo, '..', 'gone.git'));
    const tracking = await post({ repoPath: repo, prNumber: 8 });
    assert.equal(tracking.status, 200, tracking.text);
    assert.deepEqual(
      { status: tracking.json().status, source: tracking.json().base_source, base: tracking.json().base_sha },
      // origin/main as the earlier runs' fetches left it (a fetch from a configured remote updates its tracking refs).
      { status: 'clean_unverified', source: 'remote-tracking', base: baseOnOrigin },
    );
    assert.match(tracking.json().base_warning, /origin\/main as last fetched: fetching from origin failed .*may be behind GitHub/);

    sb.git(repo, 'update-ref', '-d', 'refs/remotes/origin/main');
    const local = await post({ repoPath: repo, prNumber: 8 });
    assert.equal(local.status, 200, local.text);
    assert.deepEqual(
      { status: local.json().status, source: local.json().base_source, base: local.json().base_sha },
      { status: 'clean_unverified', source: 'local', base: localBase },
    );
    assert.match(local.json().base_warning, /the local branch main/);
  });
});
