/**
 * Writes into a repository's `.git` are refused on every writing fs route: git's config, hooks and
 * attributes there name commands git runs, so writing `core.fsmonitor` into `.git/config` would turn
 * the next `/repo/diff-stats` into a command of the writer's choosing. Reads stay as they were, and
 * a file merely named like git's (`.gitignore`, `.github/`) is written as any other.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

describe("writes into a repository's .git", () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  let worktree: string;
  let canary: string;
  let configBefore: string;
  const q = encodeURIComponent;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  const refused = (r: { status: number; text: string; json(): any }, what: string) => {
    assert.equal(r.status, 403, `${what}: ${r.text}`);
    assert.equal(r.json().code, 'forbidden', what);
    assert.match(r.json().error, /\.git directory/, what);
  };

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('repo', { 'README.md': 'readme\n' });
    worktree = join(sb.root, 'wt');
    sb.git(repo, 'worktree', 'add', '-q', '-b', 'side', worktree);
    // A symlink in the work tree that leads into .git: its real path decides.
    symlinkSync(join(repo, '.git'), join(repo, 'innocent'));
    canary = join(sb.root, 'fsmonitor-ran');
    configBefore = readFileSync(join(repo, '.git', 'config'), 'utf8');
    t = await Tuicd.start({ env: sb.env });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
  });

  it('the attack: .git/config with core.fsmonitor cannot be written, so git runs nothing', async () => {
    const evil = `${configBefore}[core]\n\tfsmonitor = "touch ${canary}; false"\n`;
    refused(await post('/fs/write', { repoPath: repo, file: '.git/config', content: evil }), '/fs/write .git/config');
    refused(await post('/fs/write', { repoPath: repo, file: 'innocent/config', content: evil }), '/fs/write through a symlink into .git');
    refused(await post('/fs/write-external', { path: join(repo, '.git', 'config'), content: evil }), '/fs/write-external');
    refused(await post('/fs/write', { repoPath: repo, file: '.git/hooks/post-checkout', content: '#!/bin/sh\n' }), 'a hook');
    assert.equal(readFileSync(join(repo, '.git', 'config'), 'utf8'), configBefore, '.git/config unchanged');
    assert.equal(existsSync(join(repo, '.git', 'hooks', 'post-checkout')), false);
    const stats = await t.socket('GET', `/repo/diff-stats?path=${q(repo)}`);
    assert.equal(stats.status, 200, stats.text);
    assert.equal(existsSync(canary), false, 'git ran no fsmonitor command');
  });

  it('mkdir, delete, rename, copy, move and transfer into or out of .git are refused; nothing changes', async () => {
    refused(await post('/fs/mkdir', { repoPath: repo, dir: '.git/info/evil' }), 'mkdir');
    assert.equal(existsSync(join(repo, '.git', 'info', 'evil')), false);
    refused(await post('/fs/delete', { repoPath: repo, path: '.git' }), 'delete .git');
    refused(await post('/fs/delete', { repoPath: repo, path: '.git/HEAD' }), 'delete .git/HEAD');
    assert.equal(existsSync(join(repo, '.git', 'HEAD')), true);
    refused(await post('/fs/rename', { repoPath: repo, from: 'README.md', to: '.git/description' }), 'rename into .git');
    refused(await post('/fs/rename', { repoPath: repo, from: '.git/config', to: 'config-copy' }), 'rename out of .git');
    assert.equal(existsSync(join(repo, 'config-copy')), false);
    refused(await post('/fs/copy', { repoPath: repo, from: 'README.md', to: '.git/info/attributes' }), 'copy into .git');
    refused(await post('/fs/copy-abs', { from: join(repo, 'README.md'), to: join(repo, '.git', 'info', 'attributes') }), 'copy-abs into .git');
    refused(await post('/fs/move-abs', { from: join(repo, '.git', 'config'), to: join(repo, 'moved-config') }), 'move-abs out of .git');
    refused(await post('/fs/transfer', { destDir: join(repo, '.git', 'hooks'), paths: [join(repo, 'README.md')], mode: 'copy' }), 'transfer into .git');
    refused(await post('/fs/transfer', { destDir: worktree, paths: [join(repo, '.git', 'config')], mode: 'move' }), 'transfer a move out of .git');
    assert.equal(existsSync(join(repo, '.git', 'info', 'attributes')), false);
    assert.equal(readFileSync(join(repo, '.git', 'config'), 'utf8'), configBefore);
  });

  it("a worktree's .git file is git's too", async () => {
    const before = readFileSync(join(worktree, '.git'), 'utf8');
    refused(await post('/fs/write', { repoPath: worktree, file: '.git', content: 'gitdir: /tmp/elsewhere\n' }), 'the .git file');
    assert.equal(readFileSync(join(worktree, '.git'), 'utf8'), before);
  });

  it('reads of .git still work, and names that only start with .git are ordinary files', async () => {
    const read = await t.socket('GET', `/fs/read?repoPath=${q(repo)}&file=.git/HEAD`);
    assert.equal(read.status, 200, read.text);
    assert.match(read.json().content, /^ref: refs\/heads\//);
    assert.equal((await post('/fs/gitignore', { repoPath: repo, pattern: 'dist/' })).status, 200);
    assert.equal((await post('/fs/write', { repoPath: repo, file: '.github/workflows/ci.yml', content: 'on: push\n' })).status, 200);
    assert.equal((await post('/fs/copy', { repoPath: repo, from: 'README.md', to: '.gitkeep' })).status, 200);
    assert.equal(readFileSync(join(repo, '.github', 'workflows', 'ci.yml'), 'utf8'), 'on: push\n');
    assert.equal(existsSync(join(repo, '.gitkeep')), true);
  });
});
