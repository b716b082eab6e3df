// The checkout fingerprint changes with everything `git diff HEAD` reads and with nothing else, and
// refuses to vouch for a checkout changed within the racy window. `nowMs` is passed explicitly: a
// reading "later" than the files' times stands for a checkout that has been quiet that long.
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';

import { checkoutFingerprint, RACY_WINDOW_MS } from '../../../supervisor/repos/checkoutFingerprint.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';

/** A reading taken after the racy window of every change made so far. */
const later = () => Date.now() + RACY_WINDOW_MS + 1_000;

/** Rewrites a file with same-size content and a chosen mtime: only its ctime and bytes tell. */
function rewriteSameSize(path: string, content: string): void {
  const before = statSync(path);
  assert.equal(Buffer.byteLength(content), before.size);
  writeFileSync(path, content);
  utimesSync(path, before.atime, before.mtime);
}

describe('checkoutFingerprint', () => {
  let sb: GitSandbox;
  let repo: string;
  let n = 0;
  before(() => {
    sb = gitSandbox();
  });
  beforeEach(() => {
    repo = sb.initRepo(`r${n++}`, { 'README.md': 'hello\n', 'src/a.ts': 'export const a = 1;\n', 'src/deep/b.ts': 'b\n' });
  });
  after(() => sb.cleanup());

  it('is stable while nothing changes, and ignores untracked files', () => {
    const first = checkoutFingerprint(repo, later());
    assert.match(first ?? '', /^[0-9a-f]{40}$/);
    assert.equal(checkoutFingerprint(repo, later()), first);
    sb.write(repo, { 'scratch.log': 'untracked\n', 'build/out.js': 'x\n' });
    assert.equal(checkoutFingerprint(repo, later()), first, 'git diff HEAD does not read untracked files');
  });

  it('changes when a tracked file changes, even keeping its size and mtime', () => {
    const first = checkoutFingerprint(repo, later());
    rewriteSameSize(join(repo, 'src/a.ts'), 'export const a = 2;\n');
    assert.notEqual(checkoutFingerprint(repo, later()), first);
  });

  it('changes when a tracked file is deleted or replaced by a new file', () => {
    const first = checkoutFingerprint(repo, later());
    sb.git(repo, 'rm', '-q', '--cached', 'README.md'); // index changes
    const afterIndex = checkoutFingerprint(repo, later());
    assert.notEqual(afterIndex, first);
    sb.git(repo, 'add', 'README.md');
    const restored = checkoutFingerprint(repo, later());
    writeFileSync(join(repo, 'src/deep/b.ts.tmp'), 'c\n');
    renameSync(join(repo, 'src/deep/b.ts.tmp'), join(repo, 'src/deep/b.ts')); // an editor's atomic save: a new inode
    assert.notEqual(checkoutFingerprint(repo, later()), restored);
  });

  it('changes when HEAD moves: a commit, a checkout, a detached HEAD', () => {
    const first = checkoutFingerprint(repo, later());
    sb.write(repo, { 'src/a.ts': 'export const a = 3;\n' });
    sb.git(repo, 'commit', '-q', '-am', 'second');
    const committed = checkoutFingerprint(repo, later());
    assert.notEqual(committed, first);
    sb.git(repo, 'checkout', '-q', '-b', 'feature');
    const branched = checkoutFingerprint(repo, later());
    assert.notEqual(branched, committed, 'HEAD names another branch');
    sb.git(repo, 'checkout', '-q', '--detach', 'HEAD~1');
    assert.notEqual(checkoutFingerprint(repo, later()), branched);
  });

  it('changes when a ref moves under a linked worktree (refs live in the common dir)', () => {
    // The worktree's HEAD file stays as it is: only refs/heads/agent in the main repository's git dir moves.
    const wt = join(sb.root, `wt-${n}`);
    sb.git(repo, 'worktree', 'add', '-q', '-b', 'agent', wt);
    const first = checkoutFingerprint(wt, later());
    assert.notEqual(first, null);
    sb.git(repo, 'update-ref', 'refs/heads/agent', sb.git(repo, 'commit-tree', '-p', 'HEAD', '-m', 'moved', 'HEAD^{tree}').trim());
    assert.notEqual(checkoutFingerprint(wt, later()), first);
  });

  it('changes when attributes or config that shape the diff appear', () => {
    const first = checkoutFingerprint(repo, later());
    mkdirSync(join(repo, 'src/deep'), { recursive: true });
    writeFileSync(join(repo, 'src/.gitattributes'), '*.ts binary\n'); // untracked, but git reads it
    const withAttributes = checkoutFingerprint(repo, later());
    assert.notEqual(withAttributes, first);
    sb.git(repo, 'config', 'core.autocrlf', 'input');
    assert.notEqual(checkoutFingerprint(repo, later()), withAttributes);
  });

  it('is null while config names files it does not watch: [include], [includeIf], core.attributesFile', () => {
    assert.notEqual(checkoutFingerprint(repo, later()), null);
    writeFileSync(join(sb.root, 'extra.gitconfig'), '[core]\n\tautocrlf = input\n');
    sb.git(repo, 'config', 'include.path', join(sb.root, 'extra.gitconfig'));
    assert.equal(checkoutFingerprint(repo, later()), null, '[include]');
    sb.git(repo, 'config', '--remove-section', 'include');
    assert.notEqual(checkoutFingerprint(repo, later()), null, 'section removed');
    sb.git(repo, 'config', `includeIf.gitdir:${repo}/.path`, join(sb.root, 'extra.gitconfig'));
    assert.equal(checkoutFingerprint(repo, later()), null, '[includeIf]');
    sb.git(repo, 'config', '--remove-section', `includeIf.gitdir:${repo}/`);
    sb.git(repo, 'config', 'core.attributesFile', join(sb.root, 'attributes'));
    assert.equal(checkoutFingerprint(repo, later()), null, 'core.attributesFile');
  });

  it('is null inside the racy window, and for what it cannot vouch for', () => {
    sb.write(repo, { 'src/a.ts': 'export const a = 4;\n' });
    assert.equal(checkoutFingerprint(repo, Date.now()), null, 'a file changed just now');
    assert.notEqual(checkoutFingerprint(repo, later()), null);
    assert.equal(checkoutFingerprint(join(repo, 'src'), later()), null, 'not the top of a checkout');
    assert.equal(checkoutFingerprint(join(sb.root, 'no-such-dir'), later()), null);
    const inner = sb.initRepo(`inner${n}`, { 'x.txt': 'x\n' });
    sb.git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', inner, 'inner');
    assert.equal(checkoutFingerprint(repo, later()), null, 'a submodule');
  });
});
