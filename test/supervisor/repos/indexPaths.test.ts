// The index reader against indexes real git wrote: every format version, extended flags, SHA-256,
// and the cases it must refuse (submodules, split index, names that are not UTF-8).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { indexPaths } from '../../../supervisor/repos/indexPaths.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';

/** What git itself lists, one entry per stage like the reader. */
function gitListing(sb: GitSandbox, repo: string): string[] {
  return sb
    .git(repo, 'ls-files', '--stage', '-z')
    .split('\0')
    .filter(Boolean)
    .map((line) => line.slice(line.indexOf('\t') + 1));
}

const FILES = {
  'README.md': 'hello\n',
  'src/a.ts': 'a\n',
  'src/deep/nested/b.ts': 'b\n',
  'src/deep/nested/bb.ts': 'bb\n',
  'src/deep/other.ts': 'o\n',
  'docs/ünïcödé name.md': 'u\n',
  [`long/${'x'.repeat(120)}.txt`]: 'long\n',
};

describe('indexPaths', () => {
  let sb: GitSandbox;
  before(() => {
    sb = gitSandbox();
  });
  after(() => sb.cleanup());

  for (const version of [2, 3, 4]) {
    it(`reads an index in format ${version} exactly as git lists it`, () => {
      const repo = sb.initRepo(`v${version}`, FILES);
      // An intent-to-add entry carries the extended flag word (format 3 and up).
      if (version >= 3) {
        sb.write(repo, { 'src/deep/intent.ts': 'later\n' });
        sb.git(repo, 'add', '-N', 'src/deep/intent.ts');
      }
      sb.git(repo, 'update-index', '--index-version', String(version));
      const buf = readFileSync(join(repo, '.git', 'index'));
      assert.equal(buf.readUInt32BE(4), version);
      const listed = gitListing(sb, repo);
      assert.equal(listed.length, Object.keys(FILES).length + (version >= 3 ? 1 : 0));
      assert.deepEqual(indexPaths(buf, 20), listed);
    });
  }

  it('lists each stage of a conflicted path, as git does', () => {
    const repo = sb.initRepo('conflict', { 'f.txt': 'base\n' });
    sb.git(repo, 'checkout', '-q', '-b', 'other');
    sb.write(repo, { 'f.txt': 'other\n' });
    sb.git(repo, 'commit', '-q', '-am', 'other');
    sb.git(repo, 'checkout', '-q', 'main');
    sb.write(repo, { 'f.txt': 'main\n' });
    sb.git(repo, 'commit', '-q', '-am', 'main');
    assert.throws(() => sb.git(repo, 'merge', '-q', 'other'));
    const paths = indexPaths(readFileSync(join(repo, '.git', 'index')), 20);
    assert.deepEqual(paths, gitListing(sb, repo));
    assert.deepEqual(paths, ['f.txt', 'f.txt', 'f.txt']);
  });

  it('reads a SHA-256 repository with 32-byte object ids', (t) => {
    const repo = join(sb.root, 'sha256');
    try {
      sb.git(sb.root, 'init', '-q', '--object-format=sha256', '-b', 'main', repo);
    } catch {
      t.skip('this git cannot make SHA-256 repositories');
      return;
    }
    sb.write(repo, FILES);
    sb.git(repo, 'add', '-A');
    const buf = readFileSync(join(repo, '.git', 'index'));
    assert.deepEqual(indexPaths(buf, 32), gitListing(sb, repo));
    assert.equal(indexPaths(buf, 20), null, 'read with the wrong id size it does not vouch for a listing');
  });

  it('refuses an index with a submodule entry', () => {
    const inner = sb.initRepo('inner', { 'x.txt': 'x\n' });
    const repo = sb.initRepo('outer', { 'y.txt': 'y\n' });
    sb.git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', inner, 'inner');
    assert.equal(indexPaths(readFileSync(join(repo, '.git', 'index')), 20), null);
  });

  it('refuses a split index (its entries live in another file)', () => {
    const repo = sb.initRepo('split', FILES);
    sb.git(repo, 'update-index', '--split-index');
    assert.equal(indexPaths(readFileSync(join(repo, '.git', 'index')), 20), null);
  });

  it('refuses a name that is not UTF-8', () => {
    const repo = sb.initRepo('latin1', { 'ok.txt': 'ok\n' });
    writeFileSync(Buffer.from(join(repo, 'caf\xe9.txt'), 'latin1'), 'bytes\n');
    sb.git(repo, 'add', '-A');
    assert.equal(indexPaths(readFileSync(join(repo, '.git', 'index')), 20), null);
  });

  it('refuses a truncated or foreign file instead of guessing', () => {
    const repo = sb.initRepo('truncated', FILES);
    const buf = readFileSync(join(repo, '.git', 'index'));
    assert.equal(indexPaths(buf.subarray(0, buf.length - 40), 20), null);
    assert.equal(indexPaths(Buffer.from('not an index at all, just text'), 20), null);
    const future = Buffer.from(buf);
    future.writeUInt32BE(5, 4);
    assert.equal(indexPaths(future, 20), null);
  });
});
