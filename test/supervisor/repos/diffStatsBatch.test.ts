// The diff-stats batch on the real piscina pool and real worktrees: answers equal git's own numstat;
// a checkout unchanged since the last batch is answered without running git (shown by hiding the
// object store, which git needs and the fingerprint does not read); a changed one is read again,
// whether the change is fresh (racy window) or settled.
import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { WorkPool } from '../../../supervisor/pool/workPool.js';
import { RACY_WINDOW_MS } from '../../../supervisor/repos/checkoutFingerprint.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';

describe('diff-stats batch', () => {
  let sb: GitSandbox;
  let pool: WorkPool;
  let repo: string;
  const worktrees: string[] = [];
  const savedEnv = { ...process.env };

  /** git's own answer for a checkout: sums of `git diff --numstat HEAD`. */
  const numstat = (path: string) => {
    let additions = 0;
    let deletions = 0;
    for (const line of sb.git(path, 'diff', '--numstat', 'HEAD').split('\n').filter(Boolean)) {
      const [a, d] = line.split('\t');
      additions += Number(a);
      deletions += Number(d);
    }
    return { additions, deletions };
  };

  before(async () => {
    sb = gitSandbox();
    Object.assign(process.env, sb.env); // the pool's git reads no user config either
    pool = new WorkPool();
    repo = sb.initRepo('app', { 'a.ts': 'one\ntwo\nthree\n', 'b.ts': 'b\n', 'lib/c.ts': 'c\n' });
    for (let i = 0; i < 4; i++) {
      const wt = join(sb.root, `wt${i}`);
      sb.git(repo, 'worktree', 'add', '-q', '-b', `agent-${i}`, wt);
      sb.write(wt, { 'a.ts': `one\n${'changed\n'.repeat(i + 1)}` });
      worktrees.push(wt);
    }
    await sleep(RACY_WINDOW_MS + 300); // every file settles: the first batch can remember its answers
  });
  after(async () => {
    await pool.destroy();
    sb.cleanup();
    process.env = savedEnv;
  });

  it('answers as git does, and reuses answers for checkouts that did not change', async () => {
    const paths = [repo, ...worktrees];
    const first = await pool.diffStatsBatch(paths);
    for (const p of paths) assert.deepEqual(first.diff_stats[p], numstat(p), p);
    assert.equal(first.workspace_statuses[repo], 'clean');
    assert.equal(first.workspace_statuses[worktrees[0]!], 'dirty');
    assert.deepEqual(first.errors, {});

    const objects = join(repo, '.git', 'objects');
    renameSync(objects, `${objects}.hidden`);
    try {
      const again = await pool.diffStatsBatch(paths);
      assert.deepEqual(again.diff_stats, first.diff_stats, 'answered without git, which cannot read HEAD now');
      assert.deepEqual(again.errors, {});
    } finally {
      renameSync(`${objects}.hidden`, objects);
    }
  });

  it('reads a checkout again as soon as it changes, racy or settled', async () => {
    const paths = [repo, ...worktrees];
    const before = await pool.diffStatsBatch(paths);
    const [w0, w1] = worktrees as [string, string];
    sb.write(w0, { 'b.ts': 'b\nmore\n' });
    const fresh = await pool.diffStatsBatch(paths);
    assert.deepEqual(fresh.diff_stats[w0], numstat(w0), 'a change made just now');

    sb.write(w1, { 'lib/c.ts': 'C\n' }); // same size as before
    await sleep(RACY_WINDOW_MS + 300);
    const settled = await pool.diffStatsBatch(paths);
    for (const p of paths) assert.deepEqual(settled.diff_stats[p], numstat(p), p);
    assert.equal(settled.diff_stats[w1]!.deletions, before.diff_stats[w1]!.deletions + 1, 'the same-size edit of lib/c.ts counted');
  });

  it('a checkout that is not a repository is an error for that path only; duplicates are answered once', async () => {
    const nowhere = join(sb.root, 'not-a-repo');
    sb.write(nowhere, { 'x.txt': 'x\n' });
    const r = await pool.diffStatsBatch([worktrees[2]!, nowhere, worktrees[2]!]);
    assert.deepEqual(Object.keys(r.diff_stats).sort(), [nowhere, worktrees[2]!].sort());
    assert.equal(r.diff_stats[nowhere], null);
    assert.equal(r.workspace_statuses[nowhere], 'error');
    assert.match(r.errors[nowhere] ?? '', /not a git repository/i);
    assert.equal(r.last_commit_ts[nowhere], null);
    assert.deepEqual(r.diff_stats[worktrees[2]!], numstat(worktrees[2]!));
  });
});
