/**
 * One root gate for every path a request names (issue 26, item 1): the repository-relative fs
 * routes, the /repo, /worktrees and /config/repo-settings routes and the MCP `repo` tool take a
 * repository only when it is a root (a registered repository, one of its worktrees, a live
 * session's working directory); anything else, `/etc` and `/` included, is 403 `forbidden`, the same
 * whether it exists or not, naming no file outside, and nothing is read or written.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { until } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const SECRET = 'outside secret\n';

describe('the root gate on repository arguments', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  let stranger: string;
  let plain: string;
  const q = encodeURIComponent;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  const refused = (r: { status: number; text: string; json(): any }, what: string) => {
    assert.equal(r.status, 403, `${what}: ${r.text}`);
    assert.equal(r.json().code, 'forbidden', what);
    assert.doesNotMatch(r.text, /outside secret|root:|stranger|etc/, `${what} names nothing outside`);
  };

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('registered', { 'README.md': 'readme\n' });
    // A real repository nobody registered, and a plain directory: neither is a root.
    stranger = sb.initRepo('stranger', { 'secret.txt': SECRET });
    plain = join(sb.root, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'secret.txt'), SECRET);
    // A symlink inside the registered repository to the stranger: its real path is outside.
    symlinkSync(stranger, join(repo, 'to-stranger'));
    // A worktree made with git itself, before tuicd knew the repository.
    sb.git(repo, 'worktree', 'add', '-q', '-b', 'by-hand', join(sb.root, 'by-hand'));
    t = await Tuicd.start({ env: sb.env });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
  });

  it('the repro: /fs/read of /etc/passwd, /fs/list of /etc, /fs/write and /repo/file outside are 403', async () => {
    refused(await t.socket('GET', '/fs/read?repoPath=/etc&file=passwd'), '/fs/read /etc');
    refused(await t.socket('GET', '/fs/list?repoPath=/&subdir=etc'), '/fs/list /');
    refused(await t.socket('GET', `/fs/read?repoPath=${q(stranger)}&file=secret.txt`), '/fs/read stranger');
    refused(await t.socket('GET', `/fs/read-editor?repoPath=${q(plain)}&file=secret.txt`), '/fs/read-editor plain');
    refused(await post('/fs/write', { repoPath: plain, file: 'new.txt', content: 'x' }), '/fs/write plain');
    assert.equal(existsSync(join(plain, 'new.txt')), false);
    refused(await post('/fs/mkdir', { repoPath: stranger, dir: 'made' }), '/fs/mkdir stranger');
    assert.equal(existsSync(join(stranger, 'made')), false);
    refused(await post('/fs/delete', { repoPath: stranger, path: 'secret.txt' }), '/fs/delete stranger');
    assert.equal(existsSync(join(stranger, 'secret.txt')), true);
    refused(await post('/fs/gitignore', { repoPath: plain, pattern: 'x' }), '/fs/gitignore plain');
    assert.equal(existsSync(join(plain, '.gitignore')), false);
    refused(await t.socket('GET', `/repo/file?path=${q(stranger)}&file=secret.txt`), '/repo/file stranger');
    refused(await t.socket('GET', `/repo/file?path=${q(plain)}&file=secret.txt`), '/repo/file plain');
    refused(await t.socket('GET', `/fs/search-content?repoPath=${q(stranger)}&query=secret`), '/fs/search-content stranger');
  });

  it('the same refusal whether the directory exists or not (no existence oracle)', async () => {
    const missing = await t.socket('GET', `/repo/info?path=${q(join(sb.root, 'no-such-dir'))}`);
    const present = await t.socket('GET', `/repo/info?path=${q(stranger)}`);
    refused(missing, 'missing');
    refused(present, 'present');
    assert.deepEqual(missing.json(), present.json());
  });

  it('a symlink inside a root whose real path is outside is refused as a repository', async () => {
    refused(await t.socket('GET', `/fs/read?repoPath=${q(join(repo, 'to-stranger'))}&file=secret.txt`), 'symlinked repoPath');
    refused(await t.socket('GET', `/fs/read?repoPath=${q(repo)}&file=to-stranger/secret.txt`), 'symlinked file');
  });

  it('every repository route, worktrees, run-git and has-custom go through the gate', async () => {
    refused(await t.socket('GET', `/repo/diff-stats?path=${q(stranger)}`), '/repo/diff-stats');
    refused(await t.socket('GET', `/repo/stash?path=${q(stranger)}`), '/repo/stash');
    refused(await t.socket('GET', `/repo/orphan-worktrees?path=${q(stranger)}`), '/repo/orphan-worktrees');
    refused(await post('/repo/run-git', { path: stranger, args: ['log', '--oneline'] }), '/repo/run-git');
    refused(await post('/repo/diff-stats/batch', { paths: [stranger] }), '/repo/diff-stats/batch');
    refused(await t.socket('GET', `/worktrees/paths?path=${q(stranger)}`), '/worktrees/paths');
    refused(await post('/worktrees', { base_repo: stranger }), 'POST /worktrees');
    refused(await post('/worktrees/run-script', { script: 'touch ran', cwd: plain }), '/worktrees/run-script');
    assert.equal(existsSync(join(plain, 'ran')), false);
    refused(await t.socket('GET', `/config/repo-settings/has-custom?path=${q(stranger)}`), 'has-custom');
  });

  it('/fs/transfer checks its sources: outside, symlinked out and `..` sources are 403 and nothing moves', async () => {
    for (const mode of ['copy', 'move']) {
      for (const source of ['/etc/hostname', join(stranger, 'secret.txt'), join(repo, 'to-stranger', 'secret.txt'), `${repo}/../stranger/secret.txt`]) {
        const r = await post('/fs/transfer', { destDir: repo, paths: [source], mode });
        refused(r, `${mode} ${source}`);
      }
    }
    assert.equal(existsSync(join(stranger, 'secret.txt')), true, 'nothing moved away');
    assert.equal(existsSync(join(repo, 'secret.txt')), false, 'nothing copied in');
    assert.equal(existsSync(join(repo, 'hostname')), false);
    // A source inside a root still transfers.
    writeFileSync(join(repo, 'inside.txt'), 'inside\n');
    mkdirSync(join(repo, 'dest'));
    const ok = await post('/fs/transfer', { destDir: join(repo, 'dest'), paths: [join(repo, 'inside.txt')], mode: 'copy' });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json(), { transferred: [join(repo, 'dest', 'inside.txt')], errors: [] });
  });

  it('/fs/stat and /fs/resolve-terminal-path(s) answer only inside a root: outside is 403 whether it exists or not', async () => {
    const shadow = await t.socket('GET', '/fs/stat?path=/etc/shadow');
    const nothing = await t.socket('GET', '/fs/stat?path=/etc/no-such-file-here');
    refused(shadow, 'stat /etc/shadow');
    refused(nothing, 'stat missing');
    assert.deepEqual(shadow.json(), nothing.json(), 'no existence oracle');
    refused(await t.socket('GET', `/fs/stat?path=${q(join(stranger, 'secret.txt'))}`), 'stat stranger');
    refused(await t.socket('GET', `/fs/stat?path=${q(join(repo, 'to-stranger', 'secret.txt'))}`), 'stat through a symlink out');
    const inside = await t.socket('GET', `/fs/stat?path=${q(join(repo, 'README.md'))}`);
    assert.equal(inside.status, 200, inside.text);
    assert.equal(inside.json().exists, true);

    const resolveOne = (cwd: string, candidate: string) => t.socket('GET', `/fs/resolve-terminal-path?cwd=${q(cwd)}&candidate=${q(candidate)}`);
    refused(await resolveOne('/etc', 'passwd'), 'cwd /etc');
    refused(await resolveOne(repo, '/etc/passwd'), 'absolute candidate outside');
    refused(await resolveOne(repo, '../stranger/secret.txt:3'), 'relative candidate outside');
    refused(await resolveOne(repo, 'to-stranger/secret.txt'), 'candidate through a symlink out');
    const readme = await resolveOne(repo, 'README.md:2');
    assert.equal(readme.status, 200, readme.text);
    assert.deepEqual(readme.json(), { absolute_path: join(repo, 'README.md'), is_directory: false, line: 2 });

    refused(await post('/fs/resolve-terminal-paths', { cwd: '/etc', candidates: ['passwd'] }), 'batch cwd /etc');
    const many = await post('/fs/resolve-terminal-paths', { cwd: repo, candidates: ['/etc/passwd', 'README.md', '../stranger/secret.txt', '/etc/nope'] });
    assert.equal(many.status, 200, many.text);
    assert.deepEqual(many.json(), [null, { absolute_path: join(repo, 'README.md'), is_directory: false }, null, null]);
  });

  it('roots still work: the registered repository, its new worktree, and a live session directory', async () => {
    const ok = await t.socket('GET', `/fs/read?repoPath=${q(repo)}&file=README.md`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().content, 'readme\n');
    // A worktree git made before the repository was registered is a root once tuicd lists it.
    await until(
      async () => (await t.socket('GET', `/repo/info?path=${q(join(sb.root, 'by-hand'))}`)).status,
      (status) => status === 200,
      'the hand-made worktree is a root',
    );
    const created = await post('/worktrees', { base_repo: repo, branch_name: 'gate-wt' });
    assert.equal(created.status, 201, created.text);
    const wt = created.json().worktree_path as string;
    const inWt = await t.socket('GET', `/repo/info?path=${q(wt)}`);
    assert.equal(inWt.status, 200, inWt.text);
    // A session in the plain directory makes it a root while the session lives.
    const s = await post('/sessions', { cwd: plain, shell: '/bin/sh', args: ['-c', 'sleep 30'] });
    assert.equal(s.status, 201, s.text);
    try {
      const read = await t.socket('GET', `/fs/read?repoPath=${q(plain)}&file=secret.txt`);
      assert.equal(read.status, 200, read.text);
    } finally {
      await t.socket('DELETE', `/sessions/${s.json().session_id}`);
    }
    refused(await t.socket('GET', `/fs/read?repoPath=${q(plain)}&file=secret.txt`), 'after the session closed');
  });
});
