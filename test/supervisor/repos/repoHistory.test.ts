/**
 * The git panel routes against real repositories: file history across a rename, blame against
 * `git blame`, the stash round trip (a conflicting pop is a 409 that keeps the stash), the panel
 * header's counts, orphan worktrees, and bad input (400 JSON).
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

describe('git panel routes against real git', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  const q = encodeURIComponent;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  const get = async (path: string) => {
    const r = await t.socket('GET', path);
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    return r.json();
  };
  const ok = async (path: string, body: unknown) => {
    const r = await post(path, body);
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    return r.json();
  };
  const commitAs = (repo: string, name: string, message: string) =>
    sb.git(repo, '-c', `user.name=${name}`, '-c', `user.email=${name.toLowerCase().replace(/ /g, '.')}@example.invalid`, 'commit', '-q', '-am', message);

  before(async () => {
    sb = gitSandbox();
    t = await Tuicd.start({ env: sb.env });
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
  });

  it('registers the repositories it uses', async () => {
    const repos = Object.fromEntries(['history', 'stash', 'panel', 'orphans'].map((n) => [sb.initRepo(n, { 'a.txt': 'one\n' }), {}]));
    // The sandbox itself (not a repository) is registered too: the bad-input cases ask git about it.
    repos[sb.root] = {};
    const r = await t.socket('PUT', '/config/repositories', JSON.stringify({ repos, groups: [] }), { 'content-type': 'application/json' });
    assert.equal(r.status, 200, r.text);
  });

  it('file-history follows a file across a rename, newest first, count clamped', async () => {
    const repo = join(sb.root, 'history');
    sb.write(repo, { 'a.txt': 'one\ntwo\n' });
    commitAs(repo, 'Test User', 'second');
    sb.git(repo, 'mv', 'a.txt', 'b.txt');
    commitAs(repo, 'Test User', 'rename to b');
    sb.write(repo, { 'b.txt': 'one\ntwo\nthree\n' });
    commitAs(repo, 'Test User', 'fourth');
    const history = await get(`/repo/file-history?path=${q(repo)}&file=b.txt`);
    assert.deepEqual(
      history.map((c: { subject: string }) => c.subject),
      ['fourth', 'rename to b', 'second', 'initial'],
    );
    const head = sb.git(repo, 'log', '-1', '--format=%H%x00%h%x00%ct').trim().split('\0');
    assert.deepEqual(history[0], {
      sha: head[0],
      short_sha: head[1],
      author: 'Test User',
      email: 'test.user@example.invalid',
      timestamp: Number(head[2]),
      subject: 'fourth',
    });
    assert.equal((await get(`/repo/file-history?path=${q(repo)}&file=b.txt&count=2`)).length, 2);
    assert.equal((await get(`/repo/file-history?path=${q(repo)}&file=b.txt&count=0`)).length, 1);
    assert.equal((await get(`/repo/file-history?path=${q(repo)}&file=b.txt&count=5000`)).length, 4);
  });

  it('file-blame matches git blame line by line, including commits seen twice', async () => {
    const repo = join(sb.root, 'history');
    // Lines of one commit split by another's: the first commit's header lines appear once, its later group reuses them.
    sb.write(repo, { 'b.txt': 'ONE\ntwo\nTHREE\n' });
    commitAs(repo, 'Other Person', 'caps');
    const blame = await get(`/repo/file-blame?path=${q(repo)}&file=b.txt`);
    // --line-porcelain repeats every header per line: an independent reading of the same answer.
    const expected: Array<{ sha: string; author: string; summary: string; timestamp: number }> = [];
    for (const l of sb.git(repo, 'blame', '--line-porcelain', '--', 'b.txt').split('\n')) {
      if (/^[0-9a-f]{40} /.test(l)) expected.push({ sha: l.slice(0, 40), author: '', summary: '', timestamp: 0 });
      else if (l.startsWith('author ')) expected.at(-1)!.author = l.slice(7);
      else if (l.startsWith('author-time ')) expected.at(-1)!.timestamp = Number(l.slice(12));
      else if (l.startsWith('summary ')) expected.at(-1)!.summary = l.slice(8);
    }
    assert.deepEqual(
      blame,
      expected.map((e, i) => ({ line: i + 1, ...e, content: ['ONE', 'two', 'THREE'][i] })),
    );
    assert.deepEqual(
      blame.map((b: { author: string }) => b.author),
      ['Other Person', 'Test User', 'Other Person'],
    );
    const old = await get(`/repo/file-blame?path=${q(repo)}&file=b.txt&ref=HEAD~1`);
    assert.deepEqual(
      old.map((b: { content: string }) => b.content),
      ['one', 'two', 'three'],
    );
  });

  it('stash: push, list, apply, pop, drop; a conflicting pop is a 409 and keeps the stash', async () => {
    const repo = join(sb.root, 'stash');
    assert.deepEqual(await get(`/repo/stash?path=${q(repo)}`), []);
    assert.deepEqual(await ok('/repo/stash', { repoPath: repo }), { ok: true, created: false });
    sb.write(repo, { 'a.txt': 'first change\n' });
    assert.deepEqual(await ok('/repo/stash', { repoPath: repo, message: 'first' }), { ok: true, created: true });
    sb.write(repo, { 'new.txt': 'untracked\n' });
    assert.deepEqual(await ok('/repo/stash', { repoPath: repo, include_untracked: true }), { ok: true, created: true });
    assert.equal(existsSync(join(repo, 'new.txt')), false);
    const list = await get(`/repo/stash?path=${q(repo)}`);
    assert.equal(list.length, 2);
    assert.deepEqual({ ...list[1], timestamp: 0 }, { index: 1, ref: 'stash@{1}', message: 'first', timestamp: 0, branch: 'main' });
    assert.equal(list[0].ref, 'stash@{0}');
    assert.equal(list[0].branch, 'main');
    assert.match(list[0].message, /^WIP on main: /);
    assert.equal(typeof list[0].timestamp, 'number');

    await ok('/repo/stash/apply', { repoPath: repo, index: 0 });
    assert.equal(existsSync(join(repo, 'new.txt')), true);
    assert.equal((await get(`/repo/stash?path=${q(repo)}`)).length, 2);
    rmSync(join(repo, 'new.txt'));
    await ok('/repo/stash/drop', { repoPath: repo, index: 0 });
    assert.deepEqual(
      (await get(`/repo/stash?path=${q(repo)}`)).map((s: { message: string }) => s.message),
      ['first'],
    );

    // The stash changed a.txt; a commit changes the same line: popping it conflicts.
    sb.write(repo, { 'a.txt': 'committed change\n' });
    commitAs(repo, 'Test User', 'conflicting');
    const conflict = await post('/repo/stash/pop', { repoPath: repo, index: 0 });
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.json().code, 'conflict');
    assert.match(conflict.json().error, /CONFLICT/);
    assert.equal((await get(`/repo/stash?path=${q(repo)}`)).length, 1);
    sb.git(repo, 'reset', '-q', '--hard');
    sb.write(repo, { 'b.txt': 'new\n' });
    sb.git(repo, 'add', 'b.txt');
    await ok('/repo/stash', { repoPath: repo, message: 'second' });
    await ok('/repo/stash/pop', { repoPath: repo, index: 0 });
    assert.equal(existsSync(join(repo, 'b.txt')), true);
    assert.deepEqual(
      (await get(`/repo/stash?path=${q(repo)}`)).map((s: { message: string }) => s.message),
      ['first'],
    );

    for (const index of [-1, 1.5, '0']) {
      const r = await post('/repo/stash/pop', { repoPath: repo, index });
      assert.deepEqual(r.json(), { error: "'index' must be a non-negative integer", code: 'invalid_input', field: 'index', in: 'body' }, String(index));
    }
    assert.deepEqual((await post('/repo/stash/pop', { repoPath: repo })).json(), {
      error: 'index is required',
      code: 'invalid_input',
      field: 'index',
      in: 'body',
    });
    const missing = await post('/repo/stash/drop', { repoPath: repo, index: 7 });
    assert.equal(missing.status, 400, missing.text);
    assert.equal(missing.json().code, 'invalid_input');
  });

  it('panel-context counts staged, unstaged, untracked and stashes, with the upstream', async () => {
    const repo = join(sb.root, 'panel');
    // A local branch as upstream: one commit ahead of it, none behind.
    sb.git(repo, 'branch', 'base');
    sb.git(repo, 'branch', '-q', '--set-upstream-to=base');
    sb.write(repo, { 'a.txt': 'two\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    sb.git(repo, 'add', '-A');
    commitAs(repo, 'Test User', 'ahead one');
    sb.write(repo, { 'a.txt': 'stashed\n' });
    sb.git(repo, 'stash', '-q');
    sb.write(repo, {
      'a.txt': 'staged\n',
      'b.txt': 'unstaged\n',
      'c.txt': 'unstaged\n',
      'd.txt': 'untracked\n',
      'e.txt': 'untracked\n',
      'f.txt': 'untracked\n',
    });
    sb.git(repo, 'add', 'a.txt');
    const head = sb.git(repo, 'log', '-1', '--format=%H%x00%ct').trim().split('\0');
    assert.deepEqual(await get(`/repo/panel-context?path=${q(repo)}`), {
      branch: 'main',
      upstream: 'base',
      ahead: 1,
      behind: 0,
      staged_count: 1,
      unstaged_count: 2,
      untracked_count: 3,
      stash_count: 1,
      last_commit: { sha: head[0], subject: 'ahead one', timestamp: Number(head[1]) },
      is_main_branch: true,
    });
    sb.git(repo, 'checkout', '-q', '-b', 'feature');
    const feature = await get(`/repo/panel-context?path=${q(repo)}`);
    assert.equal(feature.is_main_branch, false);
    assert.equal(feature.upstream, null);
  });

  it('lists an orphan worktree and removes only it; a live worktree is untouched', async () => {
    const repo = join(sb.root, 'orphans');
    const gone = join(sb.root, 'orphans-gone');
    const live = join(sb.root, 'orphans-live');
    sb.git(repo, 'worktree', 'add', '-q', '-b', 'gone', gone);
    sb.git(repo, 'worktree', 'add', '-q', '-b', 'live', live);
    assert.deepEqual(await get(`/repo/orphan-worktrees?repoPath=${q(repo)}`), []);
    rmSync(gone, { recursive: true, force: true });
    const headSha = sb.git(repo, 'rev-parse', 'HEAD').trim();
    assert.deepEqual(await get(`/repo/orphan-worktrees?repoPath=${q(repo)}`), [{ path: gone, branch: 'gone', head: headSha }]);
    for (const path of [live, repo, join(sb.root, 'nowhere')]) {
      const r = await post('/repo/remove-orphan', { repoPath: repo, path });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json().code, 'invalid_input');
      assert.match(r.json().error, /not an orphan/);
    }
    assert.deepEqual(await ok('/repo/remove-orphan', { repoPath: repo, path: gone }), { ok: true });
    assert.deepEqual(await get(`/repo/orphan-worktrees?repoPath=${q(repo)}`), []);
    const listed = sb.git(repo, 'worktree', 'list', '--porcelain');
    assert.match(listed, new RegExp(`worktree ${live}\n`));
    assert.doesNotMatch(listed, new RegExp(`worktree ${gone}\n`));
    assert.equal(existsSync(join(live, 'a.txt')), true);
    // The branch of the removed entry stays: only git's bookkeeping went.
    assert.equal(sb.git(repo, 'branch', '--list', 'gone').trim(), 'gone');
  });

  it('refuses bad input with 400 JSON: invalid_input, naming the field a schema refused', async () => {
    const repo = join(sb.root, 'history');
    const notRepo = { error: `not a git repository: ${sb.root}`, code: 'invalid_input' };
    const schema = (error: string, field: string, where: 'query' | 'body') => ({ error, code: 'invalid_input', field, in: where });
    const cases: Array<[string, string, unknown, unknown]> = [
      ['GET', `/repo/file-history?path=${q(repo)}`, undefined, schema('file is required', 'file', 'query')],
      ['GET', `/repo/file-blame?path=${q(repo)}`, undefined, schema('file is required', 'file', 'query')],
      ['GET', `/repo/file-blame?path=${q(repo)}&file=b.txt&ref=${q('-p')}`, undefined, schema("'ref' must not start with '-'", 'ref', 'query')],
      ['GET', `/repo/file-history?path=${q(repo)}&file=b.txt&count=abc`, undefined, schema(`'count' must be an integer, got "abc"`, 'count', 'query')],
      ['GET', `/repo/file-blame?path=${q(repo)}&file=no-such.txt`, undefined, null],
      ['GET', `/repo/stash?path=${q(sb.root)}`, undefined, notRepo],
      ['GET', `/repo/panel-context?path=${q(sb.root)}`, undefined, notRepo],
      ['GET', `/repo/file-history?path=${q(sb.root)}&file=a.txt`, undefined, notRepo],
      ['GET', `/repo/orphan-worktrees?repoPath=${q(sb.root)}`, undefined, { error: `not a git repository: ${sb.root}`, code: 'invalid_input' }],
      ['GET', '/repo/panel-context?path=relative', undefined, schema(`'path' must be an absolute path, got "relative"`, 'path', 'query')],
      ['POST', '/repo/stash/drop', { repoPath: repo, index: -1 }, schema("'index' must be a non-negative integer", 'index', 'body')],
      ['POST', '/repo/stash', { repoPath: sb.root }, { error: 'not a git repository: the given path', code: 'invalid_input' }],
      ['POST', '/repo/stash', { repoPath: repo, message: 5 }, schema("'message' must be a string", 'message', 'body')],
      [
        'POST',
        '/repo/stash',
        { repoPath: repo, include_untracked: 'yes' },
        schema(`'include_untracked' must be true or false, got "yes"`, 'include_untracked', 'body'),
      ],
      ['POST', '/repo/remove-orphan', { repoPath: repo }, schema('path is required', 'path', 'body')],
      ['POST', '/repo/remove-orphan', { path: '/x' }, schema("'repoPath' is required (an absolute repository path)", 'repoPath', 'body')],
    ];
    for (const [method, path, body, expected] of cases) {
      const r = method === 'GET' ? await t.socket('GET', path) : await post(path, body);
      const what = `${method} ${path} ${JSON.stringify(body)}: ${r.text}`;
      assert.equal(r.status, 400, what);
      if (expected === null) {
        // git's own words, whatever its version says
        assert.equal(r.json().code, 'invalid_input', what);
        assert.equal(typeof r.json().error, 'string', what);
      } else assert.deepEqual(r.json(), expected, what);
    }
  });
});
