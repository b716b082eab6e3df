/**
 * The root gate's cost (issue 26 "Benchmarks"): supervisor/fs/rootGate.ts sits on every fs and repo
 * request since commit 96fcc07. Calls/s and calls per supervisor CPU second of `GET /fs/read` of a
 * small file in a registered repository and of `GET /repo/diff-stats` of that repository, on the
 * current build and on the commit before the gate (`baselineRef`, built by run.ts before any module
 * runs), measured back to back in every repetition. The goal is ≥ 0.97× the commit before on both.
 *
 * The baseline let any directory through; the repository is registered (PUT /config/repositories)
 * in both, so the two builds answer the very same requests. Over the unix socket with the node
 * client (bench/http/loadgen.ts); git reads no user config (GIT_CONFIG_GLOBAL is an empty temp file).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { errorText, type BenchModule, type BenchRow } from '../harness.js';
import { runLoadgen, type LoadgenRequest } from '../http/drivers.js';
import { measureRotating, rowsVsBaseline } from '../http/rotatingSeries.js';
import { confirmUws, startBaseline, startTuicd, type Target } from '../http/targets.js';
import { request } from './sessions/tuicd.js';

/** The commit before the root gate landed (96fcc07): what the goal compares against. */
export const baselineRef = '96fcc07^';

const DURATIONS = {
  full: { warmupMs: 1000, measureMs: 5000 },
  quick: { warmupMs: 300, measureMs: 1000 },
};
/** A small source file, as an editor or a file panel reads one. */
const SMALL_FILE = 'src/small.ts';
const SMALL_FILE_LINES = 30;

interface Case {
  group: string;
  /** Requests in flight: /fs/read is answered from a pool thread; diff-stats runs two git processes per call. */
  connections: number;
  request: (repo: string) => LoadgenRequest;
  /** Checks one answer before anything is measured (same answer from both builds). */
  check: (body: string) => string | undefined;
}

const CASES: Case[] = [
  {
    group: 'GET /fs/read small file (unix, node client)',
    connections: 16,
    request: (repo) => ({ method: 'GET', path: `/fs/read?repoPath=${encodeURIComponent(repo)}&file=${encodeURIComponent(SMALL_FILE)}` }),
    check: (body) =>
      (JSON.parse(body) as { content?: unknown }).content === smallFileText() ? undefined : `/fs/read answered other content: ${body.slice(0, 120)}`,
  },
  {
    group: 'GET /repo/diff-stats (unix, node client)',
    connections: 4,
    request: (repo) => ({ method: 'GET', path: `/repo/diff-stats?path=${encodeURIComponent(repo)}` }),
    check: (body) => {
      const s = JSON.parse(body) as { additions?: unknown };
      return typeof s.additions === 'number' && s.additions > 0 ? undefined : `/repo/diff-stats answered no additions: ${body.slice(0, 120)}`;
    },
  },
];

function smallFileText(): string {
  return Array.from({ length: SMALL_FILE_LINES }, (_, i) => `export const value${i} = compute(${i}, 'text ${i}');`).join('\n') + '\n';
}

/** A repository with the small file committed and one tracked file edited (so diff-stats has lines to count). */
function makeRepo(dir: string): string {
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  const env = { ...process.env, GIT_CONFIG_GLOBAL: join(dir, '.gitconfig'), GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  const git = (args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: repo, env });
  git(['init', '-q', '-b', 'main']);
  writeFileSync(join(repo, SMALL_FILE), smallFileText());
  for (let i = 0; i < 20; i++) writeFileSync(join(repo, 'src', `f${i}.ts`), smallFileText().replaceAll('value', `v${i}_`));
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'initial']);
  writeFileSync(join(repo, 'src', 'f3.ts'), smallFileText() + '// edited\nexport const extra = 1;\n');
  return repo;
}

export const run: BenchModule = async (ctx) => {
  const d = ctx.quick ? DURATIONS.quick : DURATIONS.full;
  const tmp = await mkdtemp(join(tmpdir(), 'tuicd-bench-gate-'));
  const removeTmp = (): void => rmSync(tmp, { recursive: true, force: true });
  process.once('exit', removeTmp);
  writeFileSync(join(tmp, '.gitconfig'), '');
  const hadGitConfig = process.env['GIT_CONFIG_GLOBAL'];
  process.env['GIT_CONFIG_GLOBAL'] = join(tmp, '.gitconfig'); // both tuicds inherit it
  const targets: Target[] = [];
  const failures = new Map<string, string>();
  try {
    const repo = makeRepo(tmp);
    const starters: Array<[string, () => Promise<Target>]> = [['tuicd', async () => confirmUws(await startTuicd('tuicd', 'uws', tmp))]];
    if (ctx.baseline) {
      const b = ctx.baseline;
      starters.push([b.label, () => startBaseline(b, tmp)]);
    }
    for (const [name, start] of starters) {
      let target: Target | undefined;
      try {
        target = await start();
        const reg = await request(target.at.socketPath, 'PUT', '/config/repositories', { repos: [repo] });
        if (reg.status !== 200) throw new Error(`PUT /config/repositories answered ${reg.status}: ${reg.body.slice(0, 200)}`);
        for (const c of CASES) {
          const q = c.request(repo);
          const r = await request(target.at.socketPath, q.method, q.path);
          const wrong = r.status !== 200 ? `${q.method} ${q.path.split('?')[0]} answered ${r.status}: ${r.body.slice(0, 200)}` : c.check(r.body);
          if (wrong) throw new Error(wrong);
        }
        targets.push(target);
      } catch (err) {
        await target?.proc.stop();
        failures.set(name, `${name}: ${errorText(err)}`);
      }
    }
    const rows: BenchRow[] = [];
    for (const c of CASES) {
      // Back to back in every repetition, the order rotating, so the two values of a repetition pair up.
      const series = await measureRotating(
        targets,
        (t) => t.name,
        { repetitions: ctx.repetitions, ...d },
        (target, warmupMs, ms) => runLoadgen(target, warmupMs, ms, c.request(repo), c.connections),
      );
      rows.push(
        ...rowsVsBaseline(ctx, c.group, series, failures, {
          notes: [`${c.connections} connections`],
          goal: (note) => note.replace('(issue 14)', '(issue 26: the root gate)'),
          withoutBaseline: 'no baseline build: run through bench/run.ts, which builds baselineRef',
        }),
      );
    }
    return rows;
  } finally {
    await Promise.all(targets.map((t) => t.proc.stop()));
    if (hadGitConfig === undefined) delete process.env['GIT_CONFIG_GLOBAL'];
    else process.env['GIT_CONFIG_GLOBAL'] = hadGitConfig;
    process.removeListener('exit', removeTmp);
    await rm(tmp, { recursive: true, force: true });
  }
};
