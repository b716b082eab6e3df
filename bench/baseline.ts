/**
 * `--baseline-ref <git ref>` (or TUICD_BENCH_BASELINE_REF): a build of an older commit measured
 * beside the current one in the same run, so "must not drop by more than 3 % against the commit
 * before this change" is a ratio of one run, like every other figure here.
 *
 * The commit's tree is exported with `git archive` (no worktree: nothing is added to the shared
 * .git) into .cache/bench-baseline/<full sha>/ (gitignored), the main checkout's node_modules is
 * symlinked into it, and `tsc -p tsconfig.json` builds it there. A finished build is kept and reused
 * by later runs (a `.bench-built` stamp marks it); delete the directory to rebuild. Modules that
 * support it (http/health, mcp/proxyCall) add a `tuicd (baseline <ref>)` variant whose main.js is
 * that build's dist/supervisor/main.js; without the option nothing changes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';

import { errorText, median, spread } from './harness.js';

/** The goal of issue 14: the current build keeps ≥ 97 % of the baseline's throughput, ≤ 103 % of its cost. */
export const BASELINE_MIN_THROUGHPUT_RATIO = 0.97;
export const BASELINE_MAX_COST_RATIO = 1.03;

/** tsc over the whole project on a loaded 2-core machine. */
const BUILD_TIMEOUT_MS = 10 * 60_000;
const BUILT_STAMP = '.bench-built';
const CACHE_SUBDIR = join('.cache', 'bench-baseline');

export interface BaselineBuild {
  /** The ref as given (e.g. "d6877b6"), used in row names. */
  ref: string;
  commit: string;
  /** `tuicd (baseline <ref>)` */
  label: string;
  /** That build's dist/supervisor/main.js. */
  mainPath: string;
  /** Whether that build's CLI lists `--http-engine` (older builds exit on an unknown flag). */
  acceptsEngineFlag: boolean;
  /** Something the rows should say about the build (tsc errors it still emitted through). */
  buildNote?: string;
}

/** A baseline that could not be prepared: its rows say why, the rest of the run goes on. */
export interface BaselineFailure {
  ref: string;
  label: string;
  error: string;
}

export type Baseline = BaselineBuild | BaselineFailure;

export const baselineLabel = (ref: string): string => `tuicd (baseline ${ref})`;

export function baselineError(b: Baseline): string | undefined {
  return 'error' in b ? b.error : undefined;
}

function git(repoRoot: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
  if (r.error) throw new Error(`git ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.trim().split('\n')[0] || `exit ${r.status} (no such commit?)`}`);
  return r.stdout.trim();
}

/** `git archive <commit> | tar -x -C <dir>`, bounded. */
function exportTree(repoRoot: string, commit: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const archive = spawn('git', ['archive', '--format=tar', commit], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    archive.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    tar.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    archive.stdout.pipe(tar.stdin);
    const timer = setTimeout(() => {
      archive.kill('SIGKILL');
      tar.kill('SIGKILL');
    }, 120_000);
    archive.once('error', reject);
    tar.once('error', reject);
    // Either may close first: judge once both have.
    const closed = (p: ReturnType<typeof spawn>) => new Promise<number | null>((done) => p.once('close', (code) => done(code)));
    void Promise.all([closed(archive), closed(tar)]).then(([archiveCode, tarCode]) => {
      clearTimeout(timer);
      if (tarCode === 0 && archiveCode === 0) resolve();
      else reject(new Error(`git archive ${commit} | tar -x failed (git ${archiveCode}, tar ${tarCode}): ${stderr.trim().split('\n')[0] ?? ''}`));
    });
  });
}

/** `node_modules/.bin/tsc -p tsconfig.json` in `dir`; resolves with its exit code and first error line. */
function compile(repoRoot: string, dir: string): Promise<{ code: number | null; firstError?: string }> {
  return new Promise((resolve, reject) => {
    const tsc = spawn(join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: BUILD_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let out = '';
    tsc.stdout.setEncoding('utf8').on('data', (t: string) => (out += t));
    tsc.stderr.setEncoding('utf8').on('data', (t: string) => (out += t));
    tsc.once('error', reject);
    tsc.once('close', (code, signal) => {
      if (signal === 'SIGKILL') return reject(new Error(`tsc killed after ${BUILD_TIMEOUT_MS / 1000} s`));
      const firstError = out
        .split('\n')
        .find((l) => /error TS\d+/.test(l))
        ?.trim();
      resolve({ code, ...(firstError ? { firstError } : {}) });
    });
  });
}

/** Whether `node <main> --help` lists --http-engine (an older CLI refuses unknown flags). */
function acceptsEngineFlag(mainPath: string): boolean {
  const r = spawnSync(process.execPath, [mainPath, '--help'], { encoding: 'utf8', timeout: 15_000 });
  return `${r.stdout}${r.stderr}`.includes('--http-engine');
}

/**
 * Resolves `ref`, and builds that commit under .cache/bench-baseline/<sha>/ unless a finished build
 * is there already. Never throws: a failure comes back as a BaselineFailure for the rows to show.
 */
export async function prepareBaseline(repoRoot: string, ref: string, log: (line: string) => void): Promise<Baseline> {
  const label = baselineLabel(ref);
  try {
    const commit = git(repoRoot, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    const cacheRoot = join(repoRoot, CACHE_SUBDIR);
    const dir = join(cacheRoot, commit);
    const mainPath = join(dir, 'dist', 'supervisor', 'main.js');
    const stamp = join(dir, BUILT_STAMP);
    let buildNote: string | undefined;
    if (existsSync(stamp) && existsSync(mainPath)) {
      log(`baseline ${ref} (${commit.slice(0, 12)}): reusing the build in ${dir}`);
    } else {
      await mkdir(cacheRoot, { recursive: true });
      // Built aside and renamed into place, so a killed build never looks finished.
      const tmp = await mkdtemp(join(cacheRoot, `${commit}.tmp-`));
      const removeTmp = (): void => rmSync(tmp, { recursive: true, force: true });
      process.once('exit', removeTmp);
      try {
        log(`baseline ${ref} (${commit.slice(0, 12)}): git archive + tsc into ${dir} ...`);
        const t0 = performance.now();
        await exportTree(repoRoot, commit, tmp);
        await symlink(join(repoRoot, 'node_modules'), join(tmp, 'node_modules'), 'dir');
        const built = await compile(repoRoot, tmp);
        if (!existsSync(join(tmp, 'dist', 'supervisor', 'main.js'))) {
          throw new Error(`tsc (exit ${built.code}) emitted no dist/supervisor/main.js${built.firstError ? `: ${built.firstError}` : ''}`);
        }
        // tsc emits through type errors (an older tree against today's node_modules): say so, go on.
        if (built.code !== 0) buildNote = `baseline built with tsc errors (exit ${built.code}): ${built.firstError ?? '?'}`;
        await writeFile(join(tmp, BUILT_STAMP), JSON.stringify({ ref, commit, builtAt: new Date().toISOString(), ...(buildNote ? { buildNote } : {}) }) + '\n');
        if (existsSync(dir)) await rm(dir, { recursive: true, force: true }); // an unfinished build left by a killed run
        await rename(tmp, dir);
        log(`  built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      } finally {
        process.removeListener('exit', removeTmp);
        await rm(tmp, { recursive: true, force: true });
      }
    }
    return { ref, commit, label, mainPath, acceptsEngineFlag: acceptsEngineFlag(mainPath), ...(buildNote ? { buildNote } : {}) };
  } catch (err) {
    return { ref, label, error: `baseline ${ref} could not be built: ${errorText(err)}` };
  }
}

/** The `http_engine.name` a tuicd's GET /health reports over its unix socket; undefined for builds that do not say. */
export function engineFromHealth(socketPath: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: '/health', agent: false, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET /health answered ${res.statusCode}`));
        try {
          const name = (JSON.parse(text) as { http_engine?: { name?: unknown } }).http_engine?.name;
          resolve(typeof name === 'string' ? name : undefined);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('GET /health timed out')));
    req.on('error', reject);
  });
}

/**
 * Both sides of a baseline ratio must run on uWS: throws when /health names another engine; returns
 * a note when the build reports no engine at all (an older build: it picked, as it does by default).
 */
export async function requireUws(who: string, socketPath: string, startLineEngine: string | undefined): Promise<string | undefined> {
  const fromHealth = await engineFromHealth(socketPath);
  const engine = fromHealth ?? startLineEngine;
  if (engine === undefined) return `${who} reports no HTTP engine (start line or /health): it picked its default`;
  if (engine !== 'uws') throw new Error(`${who} runs on the ${engine} engine, not uws: its ratio would compare engines`);
  return undefined;
}

/** `--http-engine uws` where the baseline's CLI has the flag; nothing otherwise (it picks uWS where a build loads). */
export function baselineEngine(b: BaselineBuild): 'uws' | undefined {
  return b.acceptsEngineFlag ? 'uws' : undefined;
}

/**
 * The note of a current-vs-baseline row. The two variants run back to back in every repetition, so
 * their values pair up by repetition: a pair shares the machine's state, and the ratio within a
 * pair is steadier than the ratio of two medians (the ratio column) on a shared machine. The goal is
 * judged on the median paired ratio, and the note says how many repetitions fell on each side of
 * it: when all of them agree the verdict holds (a sign test: with n pairs and a true ratio on the
 * threshold, all n land on one side with probability 2 × 0.5^n, under 5 % from 6 pairs on), when
 * they disagree it is inconclusive. Without pairs (a repetition failed) the ratio of medians is
 * judged, with both spreads.
 */
export function baselineGoalNote(current: number[], baseline: number[], higherIsBetter: boolean): string {
  const threshold = higherIsBetter ? BASELINE_MIN_THROUGHPUT_RATIO : BASELINE_MAX_COST_RATIO;
  const goal = `goal ${higherIsBetter ? '≥' : '≤'} ${threshold}× baseline (issue 14)`;
  const holds = (ratio: number): boolean => (higherIsBetter ? ratio >= threshold : ratio <= threshold);
  if (current.length === 0 || baseline.length === 0) return '';
  if (current.length !== baseline.length || baseline.some((b) => b === 0)) {
    const ratio = median(current) / median(baseline);
    const worst = Math.max(spread(current), spread(baseline));
    return `${goal}: ${holds(ratio) ? 'met' : 'MISSED'} on the ratio of medians (no pairs; inconclusive unless both spreads, here up to ${(worst * 100).toFixed(1)} %, are well under the 3 % margin)`;
  }
  const pairs = current.map((c, i) => c / baseline[i]!);
  const m = median(pairs);
  const agreeing = pairs.filter((p) => holds(p) === holds(m)).length;
  const range = `${Math.min(...pairs).toFixed(3)}–${Math.max(...pairs).toFixed(3)}×`;
  const strength =
    agreeing === pairs.length
      ? pairs.length >= 6
        ? 'every repetition agrees'
        : `every repetition agrees, but ${pairs.length} are too few to be sure (use --reps 6 or more)`
      : `inconclusive: ${pairs.length - agreeing} of ${pairs.length} repetitions ${pairs.length - agreeing === 1 ? 'says' : 'say'} otherwise`;
  return `${goal}: ${holds(m) ? 'met' : 'MISSED'} (paired per-repetition ratio: median ${m.toFixed(3)}×, range ${range}; ${strength})`;
}

/** What the bench's JSON report says about the baseline. */
export function baselineReport(b: Baseline | undefined): Record<string, unknown> | undefined {
  if (!b) return undefined;
  return 'error' in b
    ? { ref: b.ref, error: b.error }
    : { ref: b.ref, commit: b.commit, mainPath: b.mainPath, acceptsEngineFlag: b.acceptsEngineFlag, ...(b.buildNote ? { buildNote: b.buildNote } : {}) };
}
