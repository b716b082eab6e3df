/**
 * Which checkout a session's cwd is in, read from disk (no git process): a linked worktree is one
 * whose own git dir is not the repository's common dir — a submodule also has a `gitdir:` file, and
 * is no worktree even when its repository lives under a directory named `worktrees`.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { worktreeBranch, worktreeOf } from '../../../supervisor/sessions/sessionWorktree.js';
import { gitSandbox } from '../../helpers/gitRepo.js';

describe('worktreeOf', () => {
  const sb = gitSandbox();
  after(() => sb.cleanup());

  it('finds a linked worktree and its branch; a main checkout, a submodule and a plain directory are none', () => {
    // Everything under a directory named `worktrees`, as a workspace of worktrees often is.
    mkdirSync(join(sb.root, 'worktrees'));
    const inner = sb.initRepo('worktrees/inner', { 'i.txt': 'i\n' });
    const repo = sb.initRepo('worktrees/proj', { 'a.txt': 'a\n' });
    sb.git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', inner, 'inner');
    const linked = join(sb.root, 'worktrees', 'proj-feature');
    sb.git(repo, 'worktree', 'add', '-q', '-b', 'feature', linked);
    mkdirSync(join(linked, 'deep', 'er'), { recursive: true });

    const found = worktreeOf(join(linked, 'deep', 'er'));
    assert.equal(found?.path, linked);
    assert.equal(worktreeBranch(found!), 'feature');
    assert.equal(worktreeOf(repo), null, 'the main checkout');
    assert.equal(worktreeOf(join(repo, 'inner')), null, 'a submodule (its git dir is .git/modules/inner)');
    const plain = join(sb.root, 'plain');
    mkdirSync(plain);
    assert.equal(worktreeOf(plain), null);
  });
});
