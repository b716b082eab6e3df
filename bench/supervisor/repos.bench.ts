/**
 * Repositories (issue 19 "Benchmarks"):
 * - content search: GET /fs/search-content over a 20,000-file checkout (plus an ignored vendor/ of
 *   2,000 files that must not be searched) against `git grep -i --untracked` on the same query,
 *   in MB/s of searched text (goal ≥ 0.5× git grep), and GET /health p99 while searches run with
 *   50 sessions streaming (goal < 10 ms: the search runs on the piscina pool, not the loop);
 * - diff-stats: POST /repo/diff-stats/batch for 100 worktrees against 100 sequential
 *   `git diff --numstat HEAD` runs (goal ≥ 3× faster): once with the checkouts unchanged since
 *   the previous batch (a panel refreshing: answers reused by fingerprint), once with one worktree
 *   edited just before each batch (an agent at work: that one is diffed again), and the first,
 *   cold batch in the note.
 * Git reads no user config here (GIT_CONFIG_GLOBAL is an empty temp file).
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { fmt, goal, percentile } from './sessions/stats.js';
import { STEADY_PRINTER } from './sessions/scripts.js';
import { createSession, deleteSession, inBatches, request, sleep, startTuicd, type TuicdUnderTest } from './sessions/tuicd.js';

const C = {
  FILES: 20_000,
  FILES_QUICK: 4_000,
  IGNORED_FILES: 2_000,
  /** Every file is ~1.5 KB of source-like text; one in 50 holds the needle. */
  NEEDLE_EVERY: 50,
  QUERY: 'needleToken',
  STREAMING_SESSIONS: 50,
  LAG_WINDOW_MS: 5_000,
  HEALTH_INTERVAL_MS: 20,
  GOAL_SEARCH_RATIO: 0.5,
  GOAL_LAG_P99_MS: 10,
  WORKTREES: 100,
  WORKTREES_QUICK: 20,
  GOAL_BATCH_SPEEDUP: 3,
} as const;

const GIT_ENV = (dir: string) => ({ ...process.env, GIT_CONFIG_GLOBAL: join(dir, '.gitconfig'), GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' });
const IDENTITY = ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', '-c', 'commit.gpgsign=false'];

function gitSync(dir: string, cwd: string, args: string[]): string {
  return execFileSync('git', [...IDENTITY, ...args], { cwd, env: GIT_ENV(dir), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

function gitAsync(dir: string, cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('git', args, { cwd, env: GIT_ENV(dir), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }, (err, out) =>
      err && (err as { code?: number }).code !== 1 ? reject(err) : resolve(out),
    ),
  );
}

function sourceText(i: number): string {
  const lines: string[] = [];
  for (let l = 0; l < 40; l++) lines.push(`export const value_${i}_${l} = computeSomething(${l}, "text ${i}");`);
  if (i % C.NEEDLE_EVERY === 0) lines[7] = `// ${C.QUERY} found in file ${i}`;
  return lines.join('\n') + '\n';
}

function makeSearchRepo(dir: string, files: number): { repo: string; bytes: number } {
  const repo = join(dir, 'big');
  mkdirSync(repo);
  gitSync(dir, repo, ['init', '-q', '-b', 'main']);
  let bytes = 0;
  for (let i = 0; i < files; i++) {
    const sub = join(repo, `pkg${i % 200}`);
    if (i < 200) mkdirSync(sub);
    const text = sourceText(i);
    bytes += Buffer.byteLength(text);
    writeFileSync(join(sub, `file${i}.ts`), text);
  }
  writeFileSync(join(repo, '.gitignore'), 'vendor/\n');
  mkdirSync(join(repo, 'vendor'));
  for (let i = 0; i < C.IGNORED_FILES; i++) writeFileSync(join(repo, 'vendor', `v${i}.js`), `// ${C.QUERY} in ignored vendor file\n`);
  gitSync(dir, repo, ['add', '-A']);
  gitSync(dir, repo, ['commit', '-q', '-m', 'initial']);
  return { repo, bytes };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function searchOnce(tuicd: TuicdUnderTest, repo: string): Promise<number> {
  const r = await request(tuicd.socketPath, 'GET', `/fs/search-content?repoPath=${encodeURIComponent(repo)}&query=${C.QUERY}&limit=10000`);
  if (r.status !== 200) throw new Error(`search-content answered ${r.status}: ${r.body.slice(0, 200)}`);
  return (JSON.parse(r.body) as { matches: unknown[] }).matches.length;
}

async function searchRows(ctx: BenchContext, dir: string, tuicd: TuicdUnderTest): Promise<BenchRow[]> {
  const group = 'search-content (MB/s of text searched)';
  const files = ctx.quick ? C.FILES_QUICK : C.FILES;
  const { repo, bytes } = makeSearchRepo(dir, files);
  const expected = Math.ceil(files / C.NEEDLE_EVERY);
  const mb = bytes / 1e6;
  // One untimed run each: page cache and pool threads warm, as on a machine that has been serving.
  const first = await searchOnce(tuicd, repo);
  if (first !== expected) throw new Error(`search-content found ${first} matches, expected ${expected} (.gitignore'd vendor/ must not count)`);
  const grepCount = (await gitAsync(dir, repo, ['grep', '-I', '-i', '-n', '--untracked', '-e', C.QUERY])).split('\n').filter(Boolean).length;
  if (grepCount !== expected) throw new Error(`git grep found ${grepCount} matches, expected ${expected}`);
  const ours: number[] = [];
  const grep: number[] = [];
  for (let i = 0; i < ctx.repetitions; i++) {
    ours.push(mb / ((await timed(() => searchOnce(tuicd, repo))).ms / 1000));
    grep.push(mb / ((await timed(() => gitAsync(dir, repo, ['grep', '-I', '-i', '-n', '--untracked', '-e', C.QUERY]))).ms / 1000));
  }
  const grepRow = withNote(row(group, 'git grep -i --untracked', ctx, 'MB/s', grep), `${files} files, ${fmt(mb)} MB`);
  const ratio = median(ours) / median(grep);
  const ourRow = withNote(
    row(group, 'tuicd GET /fs/search-content', ctx, 'MB/s', ours, { name: 'git grep', median: median(grep) }),
    `goal ≥ ${C.GOAL_SEARCH_RATIO}× git grep: ${goal(ratio >= C.GOAL_SEARCH_RATIO)}`,
  );

  // Loop lag: /health latency while searches run back to back and 50 sessions stream.
  const sessions: string[] = [];
  try {
    await inBatches(
      Array.from({ length: C.STREAMING_SESSIONS }, (_, i) => i),
      4,
      async () => {
        // perl's steady printer: output at a fixed rate without forking a process per line.
        sessions.push(await createSession(tuicd.socketPath, STEADY_PRINTER.command, STEADY_PRINTER.args));
      },
    );
    // The same window without searches is the control: on a loaded machine the sessions alone lag.
    const window = async (searchingToo: boolean): Promise<number> => {
      const latencies: number[] = [];
      let searching = searchingToo;
      const searches = (async () => {
        while (searching) await searchOnce(tuicd, repo);
      })();
      const end = performance.now() + (ctx.quick ? 2000 : C.LAG_WINDOW_MS);
      while (performance.now() < end) {
        const t = await timed(() => request(tuicd.socketPath, 'GET', '/health'));
        latencies.push(t.ms);
        await sleep(C.HEALTH_INTERVAL_MS);
      }
      searching = false;
      await searches;
      return percentile(latencies, 99);
    };
    const controlP99: number[] = [];
    const lagP99: number[] = [];
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      controlP99.push(await window(false));
      lagP99.push(await window(true));
    }
    const lagGroup = 'search-content with 50 sessions streaming';
    const controlRow = row(lagGroup, 'GET /health p99, sessions only', ctx, 'ms', controlP99);
    const lagRow = withNote(
      row(lagGroup, 'GET /health p99 during searches', ctx, 'ms', lagP99, { name: 'sessions only', median: median(controlP99) }),
      `goal < ${C.GOAL_LAG_P99_MS} ms: ${goal(median(lagP99) < C.GOAL_LAG_P99_MS)}`,
    );
    return [grepRow, ourRow, controlRow, lagRow];
  } finally {
    await inBatches(sessions, 8, (id) => deleteSession(tuicd.socketPath, id));
  }
}

async function diffStatsRows(ctx: BenchContext, dir: string, tuicd: TuicdUnderTest): Promise<BenchRow[]> {
  const group = 'diff-stats of many worktrees (ms per round)';
  const n = ctx.quick ? C.WORKTREES_QUICK : C.WORKTREES;
  const repo = join(dir, 'wt-base');
  mkdirSync(repo);
  gitSync(dir, repo, ['init', '-q', '-b', 'main']);
  for (let i = 0; i < 300; i++) writeFileSync(join(repo, `f${i}.ts`), sourceText(i + 1));
  gitSync(dir, repo, ['add', '-A']);
  gitSync(dir, repo, ['commit', '-q', '-m', 'initial']);
  const paths: string[] = [];
  for (let i = 0; i < n; i++) {
    const path = join(dir, 'wts', `w${i}`);
    gitSync(dir, repo, ['worktree', 'add', '-q', '-b', `b${i}`, path]);
    writeFileSync(join(path, `f${i % 300}.ts`), sourceText(i) + `// change ${i}\n`);
    paths.push(path);
  }
  const batch = async () => {
    const r = await request(tuicd.socketPath, 'POST', '/repo/diff-stats/batch', { paths });
    if (r.status !== 200) throw new Error(`diff-stats/batch answered ${r.status}: ${r.body.slice(0, 200)}`);
    const stats = (JSON.parse(r.body) as { diff_stats: Record<string, { additions: number } | null> }).diff_stats;
    if (paths.some((p) => !stats[p] || stats[p]!.additions < 1)) throw new Error('diff-stats/batch missed a worktree');
  };
  const sequential = async () => {
    for (const p of paths) await gitAsync(dir, p, ['diff', '--numstat', 'HEAD']);
  };
  const cold = (await timed(batch)).ms; // first round: git's index refresh has not run in these checkouts yet
  await sequential();
  await sleep(2_500); // the checkouts settle past the racy window, as a panel's worktrees do between edits
  await batch(); // remembers every settled checkout
  const b: number[] = [];
  const edited: number[] = [];
  const s: number[] = [];
  for (let i = 0; i < ctx.repetitions; i++) {
    b.push((await timed(batch)).ms);
    const path = paths[i % n]!;
    writeFileSync(join(path, 'edited.ts'), `// edit ${i}\n`);
    gitSync(dir, path, ['add', 'edited.ts']); // tracked, so the diff counts it
    edited.push((await timed(batch)).ms);
    s.push((await timed(sequential)).ms);
  }
  const speedup = median(s) / median(b);
  const editedSpeedup = median(s) / median(edited);
  return [
    withNote(row(group, `${n} sequential git diff --numstat`, ctx, 'ms', s), `${n} worktrees`),
    withNote(
      row(group, 'tuicd POST /repo/diff-stats/batch, none changed', ctx, 'ms', b, { name: 'sequential', median: median(s) }),
      `speedup ${fmt(speedup)}× (goal ≥ ${C.GOAL_BATCH_SPEEDUP}×: ${goal(speedup >= C.GOAL_BATCH_SPEEDUP)}); first (cold) batch ${fmt(cold)} ms`,
    ),
    withNote(
      row(group, 'tuicd POST /repo/diff-stats/batch, one just edited', ctx, 'ms', edited, { name: 'sequential', median: median(s) }),
      `speedup ${fmt(editedSpeedup)}× (goal ≥ ${C.GOAL_BATCH_SPEEDUP}×: ${goal(editedSpeedup >= C.GOAL_BATCH_SPEEDUP)})`,
    ),
  ];
}

export const run: BenchModule = async (ctx) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-bench-repos-'));
  writeFileSync(join(dir, '.gitconfig'), '');
  let tuicd: TuicdUnderTest | undefined;
  const rows: BenchRow[] = [];
  try {
    process.env['GIT_CONFIG_GLOBAL'] = join(dir, '.gitconfig'); // tuicd inherits it: its git reads no user config either
    tuicd = await startTuicd();
    // Repository routes reach registered repositories only (the root gate): the bench's directory is one.
    const reg = await request(tuicd.socketPath, 'PUT', '/config/repositories', { repos: [dir] });
    if (reg.status !== 200) throw new Error(`PUT /config/repositories answered ${reg.status}: ${reg.body.slice(0, 200)}`);
    try {
      rows.push(...(await searchRows(ctx, dir, tuicd)));
    } catch (err) {
      rows.push(failedRow('search-content (MB/s of text searched)', 'tuicd GET /fs/search-content', ctx, 'MB/s', errorText(err)));
    }
    try {
      rows.push(...(await diffStatsRows(ctx, dir, tuicd)));
    } catch (err) {
      rows.push(failedRow('diff-stats of many worktrees (ms per round)', 'tuicd POST /repo/diff-stats/batch', ctx, 'ms', errorText(err)));
    }
  } finally {
    await tuicd?.stop();
    delete process.env['GIT_CONFIG_GLOBAL'];
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
};
