/**
 * Registered repositories, the /repo git routes, run-git's allow-list, GitHub without gh (503), AI
 * routes (501), the watcher's repo-changed/head-changed, and content search over a repository of
 * 2,000 files while sessions stream (the timed 20,000-file version is `npm run bench -- --only repos`).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

/** The sizes: the loop lag under this load is measured in bench/supervisor/repos; here the answers are checked. */
const SEARCH_FILES = 20_000;
const STREAMING_SESSIONS = 50;

describe('repositories and the /repo routes against real git', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  let events: SseClient;
  const q = encodeURIComponent;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  const put = (path: string, body: unknown) =>
    t.socket('PUT', path, typeof body === 'string' ? body : JSON.stringify(body), { 'content-type': 'application/json' });
  const get = async (path: string) => {
    const r = await t.socket('GET', path);
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    return r.json();
  };

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('web-app', { 'README.md': '# app\n', 'docs/guide.md': 'guide\n', 'src/main.ts': 'console.log(1);\n' });
    // An empty gh config dir: gh, where installed, is logged out for this tuicd.
    const ghConfig = mkdtempSync(join(tmpdir(), 'tuicd-gh-'));
    t = await Tuicd.start({ env: { ...sb.env, GH_CONFIG_DIR: ghConfig, GH_TOKEN: '', GITHUB_TOKEN: '' } });
    events = await SseClient.open({ socketPath: t.socketPath, path: '/events?types=repositories-changed,repo-changed,head-changed' });
  });
  after(async () => {
    events?.close();
    await t?.stop();
    sb?.cleanup();
  });

  it('registers repositories: validated PUT, GET back, event, and the MCP instructions list them', async () => {
    const bad = await put('/config/repositories', { repos: { 'relative/path': {} } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json().code, 'invalid_input');
    assert.match(bad.json().error, /absolute/);
    const notObject = await put('/config/repositories', '[1,2]');
    assert.equal(notObject.status, 400);
    assert.deepEqual(notObject.json(), { error: 'repositories.json must be a JSON object', code: 'invalid_input', field: '', in: 'body' });
    const badRepos = await put('/config/repositories', { repos: 'x' });
    assert.deepEqual(badRepos.json(), {
      error: "'repos' must be an object keyed by repository path, or an array of paths",
      code: 'invalid_input',
      field: 'repos',
      in: 'body',
    });
    assert.deepEqual((await put('/config/repo-defaults', '"x"')).json(), {
      error: 'repo-defaults.json must be a JSON object',
      code: 'invalid_input',
      field: '',
      in: 'body',
    });
    assert.doesNotMatch((await get('/mcp/instructions')).instructions, /web-app/);
    const ok = await put('/config/repositories', { repos: { [repo]: { displayName: 'Web' } }, groups: [] });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(await get('/config/repositories'), { repos: { [repo]: { displayName: 'Web' } }, groups: [] });
    await events.waitFor((e) => e.event === 'repositories-changed');
    assert.match((await get('/mcp/instructions')).instructions, new RegExp(`## Repos \\(1\\)\\n- ${repo}`));
    assert.equal((await put('/config/repo-settings', { [repo]: { setup_script: 'true' } })).status, 200);
    assert.deepEqual(await get('/config/repo-settings'), { [repo]: { setup_script: 'true' } });
    assert.deepEqual(await get(`/config/repo-settings/has-custom?path=${q(repo)}`), { has_custom: true });
    assert.equal((await put('/config/repo-defaults', { warm_artifacts: false })).status, 200);
    assert.deepEqual(await get('/config/repo-defaults'), { warm_artifacts: false });
  });

  it('serves info, branches, commits, summary and structure', async () => {
    assert.deepEqual(await get(`/repo/info?path=${q(repo)}`), {
      path: repo,
      name: 'web-app',
      initials: 'WA',
      branch: 'main',
      status: 'clean',
      is_git_repo: true,
    });
    sb.git(repo, 'branch', 'feature-x');
    const branches = await get(`/repo/local-branches?path=${q(repo)}`);
    assert.deepEqual(branches.map((b: { name: string }) => b.name).sort(), ['feature-x', 'main']);
    assert.equal(branches.find((b: { name: string }) => b.name === 'main').is_current, true);
    const commits = await get(`/repo/recent-commits?path=${q(repo)}&count=1`);
    assert.equal(commits.length, 1);
    assert.equal(commits[0].subject, 'initial');
    assert.deepEqual(await get(`/repo/markdown-files?path=${q(repo)}`), ['README.md', 'docs/guide.md']);
    assert.deepEqual(await get(`/repo/is-main-branch?branch=master`), { is_main: true });
    assert.deepEqual(await get(`/repo/is-main-branch?branch=feature-x`), { is_main: false });
    assert.deepEqual(await get(`/repo/remote-url?path=${q(repo)}`), { url: null });
    const summary = await get(`/repo/summary?path=${q(repo)}`);
    assert.equal(summary.branch, 'main');
    assert.equal(summary.changed_files, 0);
    assert.deepEqual((await get(`/repo/structure?path=${q(repo)}`)).worktree_paths, { main: repo });
    assert.deepEqual((await t.socket('GET', `/repo/info?path=relative`)).json(), {
      error: `'path' must be an absolute path, got "relative"`,
      code: 'invalid_input',
      field: 'path',
      in: 'query',
    });
    assert.deepEqual((await t.socket('GET', `/repo/info?path=${q(repo + '/../x')}`)).json(), {
      error: 'Path traversal is not allowed',
      code: 'invalid_input',
      field: 'path',
      in: 'query',
    });
    assert.deepEqual((await t.socket('GET', `/repo/info?repoPath=${q(join(repo, 'README.md'))}`)).json(), {
      error: `'repoPath' is not an existing directory: ${JSON.stringify(join(repo, 'README.md'))}`,
      code: 'invalid_input',
      field: 'repoPath',
      in: 'query',
    });
    assert.deepEqual((await t.socket('GET', '/repo/info')).json(), {
      error: "'path' is required (an absolute repository path)",
      code: 'invalid_input',
      field: 'path',
      in: 'query',
    });
    assert.deepEqual((await t.socket('GET', `/repo/recent-commits?path=${q(repo)}&count=101`)).json(), {
      error: `'count' must be an integer between 1 and 100, got "101"`,
      code: 'invalid_input',
      field: 'count',
      in: 'query',
    });
    assert.deepEqual((await t.socket('GET', `/repo/diff?path=${q(repo)}&scope=both`)).json(), {
      error: `'scope' must be staged, unstaged or all, got "both"`,
      code: 'invalid_input',
      field: 'scope',
      in: 'query',
    });
    assert.deepEqual((await t.socket('GET', `/repo/commit-log?path=${q(repo)}&ref=--output=x`)).json(), {
      error: "'ref' must not start with '-'",
      code: 'invalid_input',
      field: 'ref',
      in: 'query',
    });
    // A registered directory that is not a repository (the root gate lets only registered paths in).
    assert.equal((await put('/config/repositories', { repos: { [repo]: { displayName: 'Web' }, [sb.root]: {} }, groups: [] })).status, 200);
    const notRepo = await t.socket('GET', `/repo/diff-stats?path=${q(sb.root)}`);
    assert.equal(notRepo.status, 400);
    assert.equal((await put('/config/repositories', { repos: { [repo]: { displayName: 'Web' } }, groups: [] })).status, 200);
    assert.deepEqual(notRepo.json(), { error: `not a git repository: ${sb.root}`, code: 'invalid_input' });
  });

  it('stages, unstages, discards and commits; renames a branch; checks out a remote branch', async () => {
    sb.write(repo, { 'src/main.ts': 'console.log(2);\n', 'new.txt': 'n\n', 'tmp.txt': 't\n' });
    assert.equal((await post('/repo/stage', { repoPath: repo, files: ['src/main.ts', 'new.txt'] })).status, 200);
    let st = await get(`/repo/working-tree-status?path=${q(repo)}`);
    assert.deepEqual(st.staged.map((s: { path: string }) => s.path).sort(), ['new.txt', 'src/main.ts']);
    assert.deepEqual(st.untracked, ['tmp.txt']);
    assert.equal((await post('/repo/unstage', { repoPath: repo, files: ['new.txt'] })).status, 200);
    assert.equal((await post('/repo/discard', { repoPath: repo, files: ['tmp.txt', 'new.txt'] })).status, 200);
    st = await get(`/repo/working-tree-status?path=${q(repo)}`);
    assert.deepEqual(st.untracked, []);
    assert.deepEqual(
      st.staged.map((s: { path: string }) => s.path),
      ['src/main.ts'],
    );
    const commit = await post('/repo/commit', { repoPath: repo, message: 'change main' });
    assert.equal(commit.status, 200, commit.text);
    assert.equal(sb.git(repo, 'log', '-1', '--format=%s').trim(), 'change main');
    assert.deepEqual((await post('/repo/commit', { repoPath: repo })).json(), {
      error: 'message is required',
      code: 'invalid_input',
      field: 'message',
      in: 'body',
    });
    assert.deepEqual((await post('/repo/commit', { repoPath: repo, message: 7 })).json(), {
      error: "'message' is required (a non-empty string)",
      code: 'invalid_input',
      field: 'message',
      in: 'body',
    });
    const outside = await post('/repo/stage', { repoPath: repo, files: ['../outside'] });
    assert.equal(outside.status, 403);
    assert.deepEqual(outside.json(), { error: "'files[0]' escapes the repository (path traversal is not allowed)", code: 'forbidden' });
    assert.deepEqual((await post('/repo/stage', { repoPath: repo, files: 'a.txt' })).json(), {
      error: "'files' must be an array of non-empty strings",
      code: 'invalid_input',
      field: 'files',
      in: 'body',
    });

    assert.equal((await post('/repo/branch/rename', { path: repo, old_name: 'feature-x', new_name: 'feature-y' })).status, 200);
    assert.equal(sb.git(repo, 'branch', '--list', 'feature-y').trim(), 'feature-y');
    assert.deepEqual((await post('/repo/branch/rename', { path: repo, old_name: 'feature-y', new_name: 'bad..name' })).json(), {
      error: 'not a valid branch name: "bad..name"',
      code: 'invalid_input',
    });

    const upstream = sb.initRepo('upstream', { 'u.txt': 'u\n' });
    sb.git(upstream, 'branch', 'remote-work');
    sb.git(repo, 'remote', 'add', 'origin', upstream);
    sb.git(repo, 'fetch', '-q', 'origin');
    assert.deepEqual(await get(`/repo/remote-url?path=${q(repo)}`), { url: upstream });
    assert.deepEqual((await post('/repo/checkout-remote', { repoPath: repo, branchName: '-b' })).json(), {
      error: "'branchName' must not start with '-'",
      code: 'invalid_input',
      field: 'branchName',
      in: 'body',
    });
    assert.deepEqual((await post('/repo/checkout-remote', { repoPath: repo })).json(), {
      error: "'branchName' is required (a non-empty string)",
      code: 'invalid_input',
      field: 'branchName',
      in: 'body',
    });
    const co = await post('/repo/checkout-remote', { repoPath: repo, branch_name: 'origin/remote-work' });
    assert.equal(co.status, 200, co.text);
    assert.equal(sb.git(repo, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'remote-work');
    sb.git(repo, 'checkout', '-q', 'main');
  });

  it('run-git runs allow-listed read-only subcommands and refuses the rest with 400', async () => {
    const log = await post('/repo/run-git', { repoPath: repo, args: ['log', '--format=%s', '-1'] });
    assert.equal(log.status, 200, log.text);
    assert.deepEqual(log.json(), { exit_code: 0, stdout: 'change main\n', stderr: '' });
    const failing = (await post('/repo/run-git', { repoPath: repo, args: ['rev-parse', 'no-such-ref'] })).json();
    assert.notEqual(failing.exit_code, 0);
    for (const args of [['push'], ['config', 'core.editor', 'x'], ['-c', 'core.pager=sh', 'log'], ['diff', '--output=/tmp/x'], ['grep', '-O', 'x']]) {
      const r = await post('/repo/run-git', { repoPath: repo, args });
      assert.equal(r.status, 400, `${args.join(' ')}: ${r.text}`);
      assert.equal(r.json().code, 'invalid_input');
    }
    assert.deepEqual((await post('/repo/run-git', { repoPath: repo, args: [] })).json(), {
      error: "'args' must be a non-empty array of strings",
      code: 'invalid_input',
      field: 'args',
      in: 'body',
    });
  });

  it('GitHub routes say clearly that gh is missing or logged out (503); AI routes are 501', async () => {
    for (const path of [`/repo/prs?path=${q(repo)}`, `/repo/issues?path=${q(repo)}`, `/repo/ci?path=${q(repo)}`]) {
      const r = await t.socket('GET', path);
      assert.equal(r.status, 503, `${path}: ${r.text}`);
      assert.equal(r.json().code, 'unavailable');
      assert.match(r.json().error, /GitHub CLI \(gh\)|gh auth login/);
    }
    const merge = await post('/repo/merge-pr', { repoPath: repo, prNumber: 1, mergeMethod: 'squash', expectedHeadSha: 'abc' });
    assert.equal(merge.status, 503);
    assert.deepEqual((await post('/repo/merge-pr', { repoPath: repo, prNumber: 1, mergeMethod: 'yolo', expectedHeadSha: 'abc' })).json(), {
      error: "'mergeMethod' must be one of merge, squash, rebase",
      code: 'invalid_input',
      field: 'mergeMethod',
      in: 'body',
    });
    assert.deepEqual((await t.socket('GET', `/repo/issues?path=${q(repo)}&filter=mine`)).json(), {
      error: "'filter' must be one of assigned, created, mentioned, all",
      code: 'invalid_input',
      field: 'filter',
      in: 'query',
    });
    for (const [method, path] of [
      ['POST', '/repo/pr-review'],
      ['POST', '/ai/review/pr'],
      ['GET', '/repo/changelog'],
    ] as const) {
      const ai = method === 'GET' ? await t.socket('GET', path) : await post(path, { repoPath: repo, prNumber: 1 });
      assert.equal(ai.status, 501, path);
      assert.deepEqual(ai.json(), {
        error: 'not available in headless tuicd: this route needs an AI provider, and none is configured',
        code: 'not_implemented',
      });
    }
    // conflict-assist rebases without a model (it needs gh for the pull request's branches); only its model step is 501.
    assert.equal((await post('/repo/conflict-assist', { repoPath: repo, prNumber: 1 })).status, 503);
    const model = await post('/repo/conflict-assist', { repoPath: repo, prNumber: 1, resolve: true });
    assert.equal(model.status, 501, model.text);
    assert.equal(model.json().code, 'not_implemented');
  });

  it('the watcher reports working-tree changes and HEAD moves of a registered repository', async () => {
    await new Promise((r) => setTimeout(r, 400)); // watchers attach after the registration event
    const before = events.events.length;
    writeFileSync(join(repo, 'watched.txt'), 'w\n');
    await events.waitFor((e) => e.event === 'repo-changed' && JSON.parse(e.data).kind === 'working-tree' && events.events.indexOf(e) >= before);
    // Earlier tests' checkouts may still be reported (debounced): wait for this one's.
    const moved = events.events.length;
    sb.git(repo, 'checkout', '-q', '-b', 'moved-head');
    const head = await events.waitFor((e) => e.event === 'head-changed' && events.events.indexOf(e) >= moved && JSON.parse(e.data).branch === 'moved-head');
    assert.deepEqual(JSON.parse(head.data), { repo_path: repo, branch: 'moved-head' });
  });

  it(`search-content over ${SEARCH_FILES} files while ${STREAMING_SESSIONS} sessions stream: correct, ignoring .gitignore'd files`, async () => {
    const big = join(sb.root, 'big');
    const files: Record<string, string> = { '.gitignore': 'vendor/\n' };
    for (let i = 0; i < SEARCH_FILES; i++)
      files[`pkg${i % 40}/file${i}.ts`] = i % 100 === 0 ? `// 🎉 needle here ${i}\nconst Needle = ${i};\n` : `const value${i} = ${i};\n`;
    const bigRepo = sb.initRepo('big', files);
    mkdirSync(join(bigRepo, 'vendor'));
    writeFileSync(join(bigRepo, 'vendor/lib.ts'), 'needle in vendor\n');
    writeFileSync(join(bigRepo, 'untracked.ts'), 'needle untracked\n');
    void big;
    const sessions: string[] = [];
    for (let i = 0; i < STREAMING_SESSIONS; i++) {
      const r = await post('/sessions', {
        cwd: bigRepo,
        shell: '/bin/sh',
        args: ['-c', 'i=0; while [ $i -lt 3000 ]; do echo "stream line $i"; i=$((i+1)); done; sleep 30'],
      });
      assert.equal(r.status, 201, r.text);
      sessions.push(r.json().session_id);
    }
    try {
      const base = `/fs/search-content?repoPath=${q(bigRepo)}&limit=1000&query=`;
      const insensitive = await get(`${base}needle`);
      // 200 files × 2 lines (`needle`, `Needle`) + the untracked file; vendor/ is ignored.
      assert.equal(insensitive.matches.length, 401);
      assert.equal(insensitive.truncated, false);
      assert.ok(!insensitive.matches.some((m: { path: string }) => m.path.startsWith('vendor/')));
      assert.ok(insensitive.matches.some((m: { path: string }) => m.path === 'untracked.ts'));
      const first = insensitive.matches.find((m: { path: string; line_number: number }) => m.path === 'pkg0/file0.ts' && m.line_number === 1);
      // "// 🎉 " is 6 UTF-16 units: the emoji is a surrogate pair.
      assert.deepEqual({ s: first.match_start, e: first.match_end }, { s: 6, e: 12 });
      assert.equal(first.line_text.slice(first.match_start, first.match_end), 'needle');
      const sensitive = await get(`${base}Needle&caseSensitive=true`);
      assert.equal(sensitive.matches.length, 200);
      const regex = await get(`${base}${q('Needle = 1?5\\d\\d;')}&useRegex=true&caseSensitive=true`);
      assert.deepEqual(regex.matches.map((m: { line_text: string }) => m.line_text).sort(), ['const Needle = 1500;', 'const Needle = 500;']);
      const word = await get(`${base}value1&wholeWord=true`);
      assert.deepEqual(
        word.matches.map((m: { path: string }) => m.path),
        ['pkg1/file1.ts'],
      );
      const limited = await get(`/fs/search-content?repoPath=${q(bigRepo)}&query=const&limit=5`);
      assert.equal(limited.matches.length, 5);
      assert.equal(limited.truncated, true);
      const badRegex = await t.socket('GET', `${base}${q('(unclosed')}&useRegex=true`);
      assert.equal(badRegex.status, 400);
      assert.match(badRegex.json().error, /invalid regular expression/);
      assert.deepEqual({ code: badRegex.json().code, field: badRegex.json().field }, { code: 'invalid_input', field: 'query' });
      assert.deepEqual(await get(`/fs/search?repoPath=${q(bigRepo)}&query=file19999`), ['pkg39/file19999.ts']);
    } finally {
      for (const id of sessions) await t.socket('DELETE', `/sessions/${id}`);
    }
  });
});
