// /api/version's git_hash: read from .git without running git (loose ref, packed ref, detached, worktree pointer).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

import { readGitHash } from '../../supervisor/gitHash.js';
import { Tuicd } from '../helpers/tuicdProcess.js';

const A = 'a'.repeat(40);
const B = '0123456789abcdef0123456789abcdef01234567';

describe('readGitHash', () => {
  const root = mkdtempSync(join(tmpdir(), 'tuicd-githash-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const repo = (files: Record<string, string>): string => {
    const dir = join(root, String(n++));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  it('follows HEAD to a loose ref, else to packed-refs; a detached HEAD is the hash itself', () => {
    assert.equal(readGitHash(repo({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': `${A}\n` })), A);
    assert.equal(
      readGitHash(
        repo({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/packed-refs': `# pack-refs with: peeled\n${A} refs/heads/other\n${B} refs/heads/main\n` }),
      ),
      B,
    );
    assert.equal(readGitHash(repo({ '.git/HEAD': `${B}\n` })), B);
  });

  it('follows a .git file pointing at the real git dir (worktrees, submodules)', () => {
    const real = repo({ 'store/HEAD': 'ref: refs/heads/w\n', 'store/refs/heads/w': A });
    assert.equal(readGitHash(repo({ '.git': `gitdir: ${join(real, 'store')}\n` })), A);
  });

  it('reads a linked worktree as git lays it out: HEAD in its own git dir, branch refs in the common dir', () => {
    const main = repo({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': A, '.git/packed-refs': `${B} refs/heads/feature\n` });
    const wt = join(main, '.git/worktrees/wt');
    mkdirSync(wt, { recursive: true });
    writeFileSync(join(wt, 'HEAD'), 'ref: refs/heads/feature\n');
    writeFileSync(join(wt, 'commondir'), '../..\n');
    assert.equal(readGitHash(repo({ '.git': `gitdir: ${wt}\n` })), B);
  });

  it('agrees with git itself in a real repository and a real linked worktree', (t) => {
    const git = (cwd: string, ...args: string[]): string =>
      execFileSync('git', args, {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' },
      }).trim();
    const main = join(root, 'real');
    mkdirSync(main);
    try {
      git(main, 'init', '-q', '-b', 'main');
    } catch {
      t.skip('no git binary on this machine');
      return;
    }
    git(main, 'commit', '-q', '--allow-empty', '-m', 'one');
    git(main, 'worktree', 'add', '-q', '-b', 'feature', join(root, 'real-wt'));
    git(join(root, 'real-wt'), 'commit', '-q', '--allow-empty', '-m', 'two');
    git(main, 'pack-refs', '--all');
    for (const dir of [main, join(root, 'real-wt')]) assert.equal(readGitHash(dir), git(dir, 'rev-parse', 'HEAD'), dir);
  });

  it('answers null without a checkout, for an unborn branch, a malformed HEAD or a ref that leaves the git dir', () => {
    assert.equal(readGitHash(repo({ 'package.json': '{}' })), null);
    assert.equal(readGitHash(repo({ '.git/HEAD': 'ref: refs/heads/unborn\n' })), null);
    assert.equal(readGitHash(repo({ '.git/HEAD': 'garbage\n' })), null);
    assert.equal(readGitHash(repo({ '.git/HEAD': 'ref: refs/../../secret\n', secret: A })), null);
  });
});

describe('GET /api/version', () => {
  it('names the version and the commit this checkout is at', async () => {
    const checkout = fileURLToPath(new URL('../../../', import.meta.url));
    const t = await Tuicd.start();
    try {
      const r = await t.socket('GET', '/api/version');
      assert.equal(r.status, 200);
      const body = r.json() as { version: string; git_hash: string | null };
      assert.match(body.version, /^\d+\.\d+\.\d+/);
      assert.equal(body.git_hash, readGitHash(checkout));
      let fromGit: string | undefined;
      try {
        fromGit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: checkout, encoding: 'utf8' }).trim();
      } catch {
        // No git binary here: the reader's own answer above is all there is to compare.
      }
      if (fromGit !== undefined) assert.equal(body.git_hash, fromGit);
    } finally {
      await t.stop();
    }
  });
});
