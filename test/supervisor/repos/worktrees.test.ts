/**
 * Two agents' worktrees of one repository over HTTP, against real git: create both (the second from
 * inside the first, normalized to the main repository), change files in each, read diffs and stats
 * per worktree and in one batch, remove the merged one (rule ancestry), refuse the dirty one without
 * force, force-remove it with a warning; plus patch_equivalence, kept_branch, warming and bad input.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { until } from '../../helpers/poll.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

describe('worktrees: two agents in parallel checkouts of one repository', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  let events: SseClient;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  const get = (path: string) => t.socket('GET', path);
  const q = encodeURIComponent;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': 'hello\n', 'src/a.ts': 'export const a = 1;\n', '.gitignore': 'build/\n' });
    sb.write(repo, { 'build/cache.bin': 'warm artifact\n' }); // ignored: copied into new worktrees in the background
    t = await Tuicd.start({ env: sb.env });
    await t.registerRepos(repo);
    events = await SseClient.open({ socketPath: t.socketPath, path: '/events?types=worktree-created,worktree-removed,worktree-create-failed' });
  });
  after(async () => {
    events?.close();
    await t?.stop();
    sb?.cleanup();
  });

  let one: { path: string; workspace_id: string };
  let two: { path: string; workspace_id: string };

  it('creates two worktrees; a linked worktree as base_repo normalizes to the main repository', async () => {
    const r1 = await post('/worktrees', { base_repo: repo, branch_name: 'agent-one' });
    assert.equal(r1.status, 201, r1.text);
    one = r1.json();
    assert.equal(one.path, `${repo}__wt/agent-one`);
    assert.equal(r1.json().base_repo, repo);
    assert.ok(['pending', 'done'].includes(r1.json().instructions.warm_artifacts.status));
    const r2 = await post('/worktrees', { base_repo: one.path, branch_name: 'agent-two' });
    assert.equal(r2.status, 201, r2.text);
    two = r2.json();
    assert.equal(r2.json().base_repo, repo, 'created from inside agent-one, owned by the main repository');
    assert.equal(sb.git(two.path, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'agent-two');
    await events.waitFor((e) => e.event === 'worktree-created' && JSON.parse(e.data).branch === 'agent-two');

    const paths = await until(
      async () => (await get(`/worktrees/paths?path=${q(repo)}`)).json(),
      (p) => p['agent-one']?.warm_artifacts.status === 'done',
      'warm artifacts copied',
    );
    assert.equal(paths['agent-two'].branch, 'agent-two');
    assert.equal(readFileSync(join(one.path, 'build/cache.bin'), 'utf8'), 'warm artifact\n');
    const list = (await get('/worktrees')).json();
    assert.deepEqual(
      list.map((w: { workspace_id: string }) => w.workspace_id).sort(),
      ['agent-one', 'agent-two'],
      'the worktrees of the registered repository',
    );
  });

  it('shows each worktree its own diff and stats, singly and in one batch', async () => {
    sb.write(one.path, { 'src/a.ts': 'export const a = 2;\nexport const b = 3;\n' });
    sb.write(two.path, { 'notes.txt': 'one\ntwo\nthree\n' });
    sb.git(two.path, 'rm', '-q', 'README.md');

    const s1 = (await get(`/repo/diff-stats?path=${q(one.path)}`)).json();
    assert.deepEqual(s1, { additions: 2, deletions: 1 });
    const s2 = (await get(`/repo/diff-stats?path=${q(two.path)}`)).json();
    assert.deepEqual(s2, { additions: 0, deletions: 1 }, 'untracked notes.txt is not in git diff');
    const files2 = (await get(`/repo/files?path=${q(two.path)}`)).json();
    assert.deepEqual(
      files2.sort((a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1)),
      [
        { path: 'README.md', status: 'deleted', additions: 0, deletions: 1 },
        { path: 'notes.txt', status: 'untracked', additions: 3, deletions: 0 },
      ],
    );
    const diff1 = (await get(`/repo/diff?path=${q(one.path)}`)).json().diff as string;
    assert.match(diff1, /\+export const b = 3;/);
    assert.doesNotMatch(diff1, /notes\.txt/, "agent-two's change is not in agent-one's diff");
    const fileDiff = (await get(`/repo/file-diff?path=${q(two.path)}&file=notes.txt`)).json().diff as string;
    assert.match(fileDiff, /\+three/);

    const batch = await post('/repo/diff-stats/batch', { paths: [one.path, two.path, repo] });
    assert.equal(batch.status, 200, batch.text);
    const b = batch.json();
    assert.deepEqual(b.diff_stats[one.path], s1);
    assert.deepEqual(b.diff_stats[two.path], s2);
    assert.deepEqual(b.diff_stats[repo], { additions: 0, deletions: 0 });
    assert.equal(b.workspace_statuses[one.path], 'dirty');
    assert.equal(b.workspace_statuses[repo], 'clean');
    for (const p of [repo, one.path, two.path])
      assert.equal(b.last_commit_ts[p], Number(sb.git(p, 'log', '-1', '--format=%ct').trim()), `last commit time of ${p}`);
  });

  it('removes the merged worktree by rule ancestry and deletes its branch', async () => {
    sb.git(one.path, 'commit', '-q', '-am', 'agent one work');
    sb.git(repo, 'merge', '-q', '--no-ff', '-m', 'merge agent-one', 'agent-one');
    const life = (await get(`/worktrees/lifecycle?repoPath=${q(repo)}&workspaceId=agent-one`)).json();
    assert.equal(life.commit_status, 'merged');
    assert.equal(life.removal_safety, 'safe');
    const r = await t.socket('DELETE', `/worktrees/agent-one?repoPath=${q(repo)}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().removal_rule, 'ancestry');
    assert.equal(r.json().branch_delete_warning, null);
    assert.equal(existsSync(one.path), false);
    assert.equal(sb.git(repo, 'branch', '--list', 'agent-one').trim(), '');
    await events.waitFor((e) => e.event === 'worktree-removed' && JSON.parse(e.data).branch === 'agent-one');
  });

  it('refuses to remove a dirty worktree without force, then force-removes it with a warning', async () => {
    sb.git(two.path, 'add', '-A');
    sb.git(two.path, 'commit', '-q', '-m', 'agent two work');
    sb.write(two.path, { 'scratch.txt': 'unsaved\n' });
    const life = (await get(`/worktrees/lifecycle?repoPath=${q(repo)}&workspaceId=agent-two`)).json();
    assert.equal(life.removal_safety, 'requires_force');
    assert.deepEqual(life.untracked_files, ['scratch.txt']);
    const refused = await t.socket('DELETE', `/worktrees/agent-two?repoPath=${q(repo)}`);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json().code, 'conflict');
    assert.match(refused.json().error, /uncommitted work .*scratch\.txt.*force=true/);
    assert.ok(existsSync(join(two.path, 'scratch.txt')), 'nothing removed');
    const forced = await t.socket('DELETE', `/worktrees/agent-two?repoPath=${q(repo)}&force=true&deleteBranch=true`);
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.json().removal_rule, 'force');
    assert.match(forced.json().branch_delete_warning, /agent-two.*1 commit\(s\) not in 'main'/);
    assert.deepEqual(forced.json().discarded_files, ['scratch.txt']);
    assert.equal(existsSync(two.path), false);
    assert.equal(sb.git(repo, 'branch', '--list', 'agent-two').trim(), '');
  });

  it('patch_equivalence for a cherry-picked branch; kept_branch for an unmerged clean one', async () => {
    const pe = (await post('/worktrees', { base_repo: repo, branch_name: 'picked' })).json();
    sb.write(pe.path, { 'picked.txt': 'p\n' });
    sb.git(pe.path, 'add', 'picked.txt');
    sb.git(pe.path, 'commit', '-q', '-m', 'picked change');
    // main moves on first, so the cherry-picked commit differs from the branch's (same patch, new id)
    sb.git(repo, 'commit', '-q', '--allow-empty', '-m', 'main moves on');
    sb.git(repo, 'cherry-pick', 'picked');
    const r1 = (await t.socket('DELETE', `/worktrees/picked?repoPath=${q(repo)}`)).json();
    assert.equal(r1.removal_rule, 'patch_equivalence');

    const kept = (await post('/worktrees', { base_repo: repo, branch_name: 'feature/kept', base_ref: 'HEAD~1' })).json();
    assert.equal(kept.workspace_id, 'feature-kept');
    sb.write(kept.path, { 'k.txt': 'k\n' });
    sb.git(kept.path, 'add', 'k.txt');
    sb.git(kept.path, 'commit', '-q', '-m', 'kept work');
    const r2 = (await t.socket('DELETE', `/worktrees/feature-kept?repoPath=${q(repo)}`)).json();
    assert.equal(r2.removal_rule, 'kept_branch');
    assert.match(r2.branch_delete_warning, /branch 'feature\/kept' was kept/);
    assert.equal(sb.git(repo, 'branch', '--list', 'feature/kept').trim(), 'feature/kept');
  });

  it('answers bad input with a clear 400 and reports failed creations', async () => {
    const relative = await post('/worktrees', { base_repo: 'app', branch_name: 'x' });
    assert.equal(relative.status, 400);
    assert.deepEqual(relative.json(), { error: `'base_repo' must be an absolute path, got "app"`, code: 'invalid_input', field: 'base_repo', in: 'body' });
    assert.deepEqual((await post('/worktrees', { branch_name: 'x' })).json(), {
      error: "'base_repo' is required (an absolute repository path)",
      code: 'invalid_input',
      field: 'base_repo',
      in: 'body',
    });
    assert.deepEqual((await post('/worktrees', { base_repo: repo, branch_name: 7 })).json().field, 'branch_name');
    const badName = await post('/worktrees', { base_repo: repo, branch_name: 'bad..name' });
    assert.equal(badName.status, 400);
    assert.deepEqual(badName.json(), { error: 'not a valid branch name: "bad..name"', code: 'invalid_input' });
    const badRef = await post('/worktrees', { base_repo: repo, branch_name: 'ok-name', base_ref: 'no-such-ref' });
    assert.equal(badRef.status, 400);
    assert.deepEqual(badRef.json(), { error: 'base_ref does not name a commit: "no-such-ref"', code: 'invalid_input' });
    await events.waitFor((e) => e.event === 'worktree-create-failed' && JSON.parse(e.data).branch === 'ok-name');
    const missing = await t.socket('DELETE', `/worktrees/nope?repoPath=${q(repo)}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json(), { error: `no worktree "nope" in ${repo}`, code: 'not_found' });
    assert.deepEqual((await t.socket('DELETE', `/worktrees/nope?repoPath=${q(repo)}&force=maybe`)).json(), {
      error: `'force' must be true or false, got "maybe"`,
      code: 'invalid_input',
      field: 'force',
      in: 'query',
    });
    assert.deepEqual((await t.socket('DELETE', `/worktrees?repoPath=${q(repo)}`)).json(), {
      error: "'workspaceId' is required (a non-empty string)",
      code: 'invalid_input',
      field: 'workspaceId',
      in: 'query',
    });
    assert.deepEqual((await post('/worktrees/finalize', { repoPath: repo, workspaceId: 'nope', action: 'keep' })).json(), {
      error: "'action' must be archive or delete",
      code: 'invalid_input',
      field: 'action',
      in: 'body',
    });
    assert.deepEqual((await post('/worktrees/generate-name', { existing_names: ['a', 1] })).json(), {
      error: "'existing_names' must be an array of strings",
      code: 'invalid_input',
      field: 'existing_names[1]',
      in: 'body',
    });
    assert.match((await t.socket('POST', '/worktrees/generate-name')).json().name, /^[a-z]+-[a-z]+/, 'an empty body takes every default');
    const generated = await post('/worktrees', { base_repo: repo });
    assert.equal(generated.status, 201, generated.text);
    assert.match(generated.json().branch, /^[a-z]+-[a-z]+/);
  });

  it('runs a script in a directory, and names a missing one', async () => {
    const ok = (await post('/worktrees/run-script', { script: 'echo hi; echo oops >&2; exit 3', cwd: repo })).json();
    assert.deepEqual(ok, { exit_code: 3, stdout: 'hi\n', stderr: 'oops\n' });
    const missing = await post('/worktrees/run-script', { script: 'true', cwd: join(repo, 'nope') });
    assert.equal(missing.status, 500);
    assert.equal(missing.json().code, 'internal');
    assert.match(missing.json().error, /Working directory does not exist/);
  });
});
