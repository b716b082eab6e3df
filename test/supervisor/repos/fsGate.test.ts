/**
 * The traversal gate on every gated /fs route (deny_unless_in_roots: read-external,
 * read-editor-external, write-external, copy-abs, move-abs, transfer) and the containment of the
 * repository-relative routes: `..`, `%2e%2e`, NUL, relative paths, a symlink pointing outside and a
 * sibling directory whose name starts with the root's name are all 403, and nothing is read or written.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const SECRET = 'top secret\n';

describe('fs routes: the deny_unless_in_roots gate and repository containment', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  let sibling: string;
  const post = (path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
  const enc = (s: string) => s.split('/').map(encodeURIComponent).join('/');

  /** Absolute paths that must be refused, as raw query values (already encoded where the case needs it). */
  let hostile: Array<{ name: string; query: string; body: string }>;
  /** Where a successful write through a hostile path would have landed. */
  let landing: string[];

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': 'readme\n', 'src/x.ts': 'x\n' });
    sibling = join(sb.root, 'app-evil');
    mkdirSync(sibling);
    writeFileSync(join(sibling, 'secret.txt'), SECRET);
    writeFileSync(join(sb.root, 'secret.txt'), SECRET);
    symlinkSync(sb.root, join(repo, 'link'));
    symlinkSync(join(repo, 'src'), join(repo, 'inner'));
    t = await Tuicd.start({ env: sb.env });
    await t.registerRepos(repo);
    hostile = [
      { name: 'dot-dot', query: enc(`${repo}/../secret.txt`), body: `${repo}/../secret.txt` },
      { name: '%2e%2e', query: `${enc(repo)}/%2e%2e/secret.txt`, body: `${repo}/%2e%2e/secret.txt`.replace('%2e%2e', '..') },
      { name: 'NUL', query: `${enc(repo)}/README.md%00.txt`, body: `${repo}/README.md\0.txt` },
      { name: 'relative', query: 'app/README.md', body: 'app/README.md' },
      { name: 'symlink outside', query: enc(`${repo}/link/secret.txt`), body: `${repo}/link/secret.txt` },
      { name: 'sibling prefix', query: enc(`${sibling}/secret.txt`), body: `${sibling}/secret.txt` },
    ];
    landing = [join(sb.root, 'secret.txt'), join(sibling, 'secret.txt')];
  });
  after(async () => {
    await t?.stop();
    sb?.cleanup();
  });

  const untouched = () => {
    for (const p of landing) assert.equal(readFileSync(p, 'utf8'), SECRET, `${p} unchanged`);
    assert.equal(existsSync(join(sb.root, 'new.txt')), false);
    assert.equal(existsSync(join(sibling, 'new.txt')), false);
    assert.equal(existsSync(join(sibling, 'README.md')), false);
    assert.equal(existsSync(join(repo, 'stolen.txt')), false);
  };

  it('reads inside a registered root, through an inside symlink too', async () => {
    const ok = await t.socket('GET', `/fs/read-external?path=${enc(`${repo}/README.md`)}`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().content, 'readme\n');
    const viaLink = await t.socket('GET', `/fs/read-editor-external?path=${enc(`${repo}/inner/x.ts`)}`);
    assert.equal(viaLink.status, 200, viaLink.text);
  });

  for (const route of ['/fs/read-external', '/fs/read-editor-external']) {
    it(`${route}: every hostile path is 403 and nothing is read`, async () => {
      for (const h of hostile) {
        const r = await t.socket('GET', `${route}?path=${h.query}`);
        assert.equal(r.status, 403, `${h.name}: ${r.text}`);
        assert.equal(r.json().code, 'forbidden', h.name);
        assert.doesNotMatch(r.text, /top secret/);
      }
    });
  }

  it('/fs/write-external: 403 for every hostile path, nothing written', async () => {
    for (const h of hostile) {
      const target = h.body.replace(/secret\.txt$/, 'new.txt');
      const r = await post('/fs/write-external', { path: target, content: 'pwned' });
      assert.equal(r.status, 403, `${h.name}: ${r.text}`);
      assert.equal(r.json().code, 'forbidden', h.name);
    }
    for (const h of hostile) assert.equal((await post('/fs/write-external', { path: h.body, content: 'pwned' })).status, 403, h.name);
    untouched();
  });

  it('/fs/copy-abs and /fs/move-abs: 403 whichever side is hostile, nothing read or written', async () => {
    for (const route of ['/fs/copy-abs', '/fs/move-abs']) {
      for (const h of hostile) {
        const out = await post(route, { from: `${repo}/README.md`, to: h.body.replace(/secret\.txt$/, 'README.md') });
        assert.equal(out.status, 403, `${route} to ${h.name}: ${out.text}`);
        const inn = await post(route, { from: h.body, to: `${repo}/stolen.txt` });
        assert.equal(inn.status, 403, `${route} from ${h.name}: ${inn.text}`);
      }
    }
    assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), 'readme\n', 'the source was not moved');
    untouched();
  });

  it('/fs/transfer: a hostile destDir is 403 and nothing moves', async () => {
    for (const h of hostile) {
      const destDir = h.body.replace(/\/secret\.txt$/, '');
      const r = await post('/fs/transfer', { destDir, paths: [`${repo}/README.md`], mode: 'copy' });
      assert.equal(r.status, 403, `${h.name}: ${r.text}`);
    }
    untouched();
  });

  it('repository-relative routes keep every path inside the repository', async () => {
    const q = encodeURIComponent(repo);
    for (const file of ['../secret.txt', '%2e%2e/secret.txt', 'link/secret.txt', `${sb.root}/secret.txt`, 'README.md%00x', '../app-evil/secret.txt']) {
      for (const route of ['/fs/read', '/fs/read-editor']) {
        const r = await t.socket('GET', `${route}?repoPath=${q}&file=${file.startsWith('/') ? enc(file) : file}`);
        assert.equal(r.status, 403, `${route} ${file}: ${r.text}`);
      }
    }
    const bodies = [
      ['/fs/write', { repoPath: repo, file: '../new.txt', content: 'x' }],
      ['/fs/write', { repoPath: repo, file: 'link/new.txt', content: 'x' }],
      ['/fs/write', { repoPath: repo, file: 'a\0b', content: 'x' }],
      ['/fs/mkdir', { repoPath: repo, dir: 'link/newdir' }],
      ['/fs/delete', { repoPath: repo, path: 'link/secret.txt' }],
      ['/fs/rename', { repoPath: repo, from: 'README.md', to: '../app-evil/README.md' }],
      ['/fs/copy', { repoPath: repo, from: 'link/secret.txt', to: 'stolen.txt' }],
    ] as const;
    for (const [route, body] of bodies) {
      const r = await post(route, body);
      assert.equal(r.status, 403, `${route} ${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.json().code, 'forbidden');
    }
    assert.equal(existsSync(join(sb.root, 'newdir')), false);
    untouched();
  });

  it('the ordinary file routes work inside the repository', async () => {
    assert.equal((await post('/fs/write', { repoPath: repo, file: 'docs/new.md', content: 'hello' })).status, 200);
    assert.equal(readFileSync(join(repo, 'docs/new.md'), 'utf8'), 'hello');
    assert.equal((await post('/fs/rename', { repoPath: repo, from: 'docs/new.md', to: 'docs/moved.md' })).status, 200);
    assert.equal((await post('/fs/copy', { repoPath: repo, from: 'docs/moved.md', to: 'docs/copy.md' })).status, 200);
    assert.equal((await post('/fs/mkdir', { repoPath: repo, dir: 'empty/dir' })).status, 200);
    assert.equal((await post('/fs/gitignore', { repoPath: repo, pattern: 'empty/' })).json().added, true);
    assert.equal((await post('/fs/gitignore', { repoPath: repo, pattern: 'empty/' })).json().added, false);
    const list = (await t.socket('GET', `/fs/list?repoPath=${encodeURIComponent(repo)}`)).json() as Array<{
      name: string;
      is_dir: boolean;
      is_ignored: boolean;
    }>;
    assert.deepEqual(
      list.filter((e) => e.is_dir).map((e) => e.name),
      ['docs', 'empty', 'inner', 'link', 'src'].filter((n) => list.some((e) => e.name === n && e.is_dir)),
    );
    assert.equal(list.find((e) => e.name === 'empty')?.is_ignored, true);
    assert.equal(
      list.some((e) => e.name === '.git'),
      false,
    );
    assert.equal((await post('/fs/delete', { repoPath: repo, path: 'docs' })).status, 200);
    assert.equal(existsSync(join(repo, 'docs')), false);
    const stat = (await t.socket('GET', `/fs/stat?path=${enc(`${repo}/README.md`)}`)).json();
    assert.deepEqual({ exists: stat.exists, is_dir: stat.is_dir, size: stat.size }, { exists: true, is_dir: false, size: 7 });
    const resolved = (
      await t.socket('GET', `/fs/resolve-terminal-path?cwd=${encodeURIComponent(repo)}&candidate=${encodeURIComponent('src/x.ts:12:3')}`)
    ).json();
    assert.deepEqual(resolved, { absolute_path: join(repo, 'src/x.ts'), is_directory: false, line: 12, col: 3 });
    const many = (await post('/fs/resolve-terminal-paths', { cwd: repo, candidates: ['README.md', 'nope.txt'] })).json();
    assert.equal(many[0].absolute_path, join(repo, 'README.md'));
    assert.equal(many[1], null);
  });
});
