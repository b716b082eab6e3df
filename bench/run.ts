/**
 * `npm run bench`: finds every compiled `*.bench.js` under dist/bench/, runs each idle and then with one
 * core busy (the two regimes), prints one table to stdout and writes .bench-out/last.json.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { baselineReport, prepareBaseline, type Baseline } from './baseline.js';
import { errorText, failedRow, rowError, rowNote, type BenchContext, type BenchModule, type BenchRow, type Regime } from './harness.js';
import { backgroundCpuShare, BusyCore, FOREIGN_LOAD_WARN } from './regime.js';

/** At least 3 repetitions, reported as median and spread. */
const DEFAULT_REPS = 3;
/** A module still running after this long is abandoned (its row says so) so one hang cannot stall the run. */
const MODULE_TIMEOUT_S = 900;
const BENCH_SUFFIX = '.bench.js';
/** How long to watch the machine before each module to tell whether someone else is loading it. */
const LOAD_PROBE_MS = 1000;
/** Environment twin of --baseline-ref (the flag wins). */
const BASELINE_REF_ENV = 'TUICD_BENCH_BASELINE_REF';

const USAGE = `usage: npm run bench -- [--quick] [--reps N] [--only SUBSTRING]... [--regime idle|busy|both]
  --quick         short runs: a smoke test, not figures to quote
  --reps N        repetitions per variant (default ${DEFAULT_REPS}, minimum 3 for figures you quote)
  --only S        run only modules whose path (e.g. "http/health") contains S; repeatable
  --regime R      idle, busy or both (default both: idle first, then one core kept busy)
  --timeout-s N   abandon a module after N seconds per regime (default ${MODULE_TIMEOUT_S})
  --baseline-ref R  also build git ref R (cached in .cache/bench-baseline/) and measure it beside the
                  current tuicd where a module supports it (http/health, mcp/proxyCall); env ${BASELINE_REF_ENV}.
                  A module that names its own baseline (export const baselineRef) always gets that one`;

interface Options {
  quick: boolean;
  reps: number;
  only: string[];
  regimes: Regime[];
  timeoutS: number;
  /** --baseline-ref or TUICD_BENCH_BASELINE_REF; absent: no baseline build. */
  baselineRef?: string;
}

/** One module's outcome in one regime, for the JSON file and the exit code. */
interface ModuleOutcome {
  module: string;
  regime: Regime;
  ok: boolean;
  error?: string;
  seconds: number;
  /** Share of all cores busy with other work just before the module started (0..1), when known. */
  backgroundCpu?: number;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      reps: { type: 'string' },
      only: { type: 'string', multiple: true, default: [] },
      regime: { type: 'string', default: 'both' },
      'timeout-s': { type: 'string', default: String(MODULE_TIMEOUT_S) },
      'baseline-ref': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const reps = values.reps === undefined ? DEFAULT_REPS : Number(values.reps);
  if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps must be a positive integer, got ${values.reps}`);
  const regimes: Regime[] = values.regime === 'both' ? ['idle', 'busy'] : values.regime === 'idle' || values.regime === 'busy' ? [values.regime] : [];
  if (regimes.length === 0) throw new Error(`--regime must be idle, busy or both, got ${values.regime}`);
  const timeoutS = Number(values['timeout-s']);
  if (!(timeoutS > 0)) throw new Error(`--timeout-s must be a positive number, got ${values['timeout-s']}`);
  const baselineRef = (values['baseline-ref'] ?? process.env[BASELINE_REF_ENV])?.trim();
  if (baselineRef !== undefined && (baselineRef === '' || baselineRef.startsWith('-')))
    throw new Error(`--baseline-ref must name a git ref, got "${baselineRef}"`);
  return { quick: values.quick, reps, only: values.only, regimes, timeoutS, ...(baselineRef ? { baselineRef } : {}) };
}

/** Relative module names ("http/health") of every *.bench.js below `dir`, sorted. */
async function discover(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.name.endsWith(BENCH_SUFFIX)) found.push(relative(dir, full).split(sep).join('/').slice(0, -BENCH_SUFFIX.length));
    }
  };
  await walk(dir);
  return found.sort();
}

/** The `baselineRef` a module exports (the commit its goal is about), if any; a module that fails to load has none here (its run says why). */
async function declaredBaselineRef(dir: string, name: string): Promise<string | undefined> {
  try {
    const mod = (await import(pathToFileURL(join(dir, name + BENCH_SUFFIX)).href)) as { baselineRef?: unknown };
    return typeof mod.baselineRef === 'string' && mod.baselineRef.trim() !== '' ? mod.baselineRef.trim() : undefined;
  } catch {
    return undefined;
  }
}

function withTimeout<T>(work: Promise<T>, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${seconds} s: abandoned`)), seconds * 1000);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function runModule(
  dir: string,
  name: string,
  ctx: BenchContext,
  busy: BusyCore,
  timeoutS: number,
): Promise<{ rows: BenchRow[]; outcome: ModuleOutcome }> {
  const t0 = performance.now();
  const done = (rows: BenchRow[], error?: string): { rows: BenchRow[]; outcome: ModuleOutcome } => {
    const seconds = (performance.now() - t0) / 1000;
    // A module that returned only error rows measured nothing: count it as failed too.
    const ok = !error && rows.some((r) => !rowError(r));
    const outcome: ModuleOutcome = { module: name, regime: ctx.regime, ok, seconds, ...(error ? { error } : {}) };
    return { rows: error ? [failedRow(name, '(module)', ctx, '', error)] : rows, outcome };
  };
  try {
    const mod = (await import(pathToFileURL(join(dir, name + BENCH_SUFFIX)).href)) as { run?: unknown };
    if (typeof mod.run !== 'function') return done([], 'does not export `run: BenchModule`');
    if (ctx.regime === 'busy') await busy.start();
    const rows = await withTimeout((mod.run as BenchModule)(ctx), timeoutS);
    if (!Array.isArray(rows)) return done([], 'run() did not return an array of rows');
    return done(rows);
  } catch (err) {
    return done([], `threw: ${errorText(err)}`);
  } finally {
    busy.stop();
  }
}

function fmtNumber(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toPrecision(3);
}

/** Rows grouped by group, then regime (idle first), keeping each module's row order within. */
function orderRows(rows: BenchRow[]): BenchRow[] {
  const groupOrder = new Map<string, number>();
  for (const r of rows) if (!groupOrder.has(r.group)) groupOrder.set(r.group, groupOrder.size);
  const regimeOrder: Record<Regime, number> = { idle: 0, busy: 1 };
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => groupOrder.get(a.r.group)! - groupOrder.get(b.r.group)! || regimeOrder[a.r.regime] - regimeOrder[b.r.regime] || a.i - b.i)
    .map(({ r }) => r);
}

function formatTable(rows: BenchRow[]): string {
  const header = ['group', 'variant', 'regime', 'median', 'spread %', 'ratio vs baseline', 'note'];
  const cells = orderRows(rows).map((r) => {
    const error = rowError(r);
    if (error) return [r.group, r.variant, r.regime, 'ERROR', '', '', error];
    return [
      r.group,
      r.variant,
      r.regime,
      `${fmtNumber(r.median)} ${r.unit}`,
      Number.isFinite(r.spread) ? (r.spread * 100).toFixed(1) : '—',
      r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}× ${r.baseline ?? ''}`.trim(),
      rowNote(r) ?? '',
    ];
  });
  const widths = header.map((h, c) => (c === header.length - 1 ? 0 : Math.max(h.length, ...cells.map((row) => row[c]!.length))));
  const line = (row: string[]): string =>
    row
      .map((cell, c) => (c === 3 || c === 4 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(Math.max(w, 4))).join('-|-');
  return [line(header), rule, ...cells.map(line)].join('\n');
}

async function main(): Promise<number> {
  const opts = parseOptions();
  const benchDir = dirname(fileURLToPath(import.meta.url));
  const repoRoot = join(benchDir, '..', '..');
  const all = await discover(benchDir);
  const modules = opts.only.length ? all.filter((m) => opts.only.some((o) => m.includes(o))) : all;
  if (modules.length === 0) {
    console.error(`no bench modules${opts.only.length ? ` matching ${opts.only.join(', ')}` : ''} under ${benchDir} (found: ${all.join(', ') || 'none'})`);
    return 1;
  }
  const busy = new BusyCore();
  const stopOnSignal = (signal: NodeJS.Signals): void => {
    console.error(`\n${signal}: stopping the spinner and every child`);
    busy.stop();
    process.exit(130); // 'exit' hooks kill the modules' children by pid
  };
  process.once('SIGINT', stopOnSignal).once('SIGTERM', stopOnSignal);
  process.on('unhandledRejection', (reason) => console.error(`unhandled rejection (continuing): ${errorText(reason)}`));

  // Built before any module runs (and before the load probe), so tsc never overlaps a measurement.
  // A module that exports `baselineRef` (the commit its goal is measured against) gets that build
  // whatever --baseline-ref says; the others get --baseline-ref's, if any. Each ref is built once.
  const builds = new Map<string, Baseline>();
  const prepare = async (ref: string): Promise<Baseline> => {
    let b = builds.get(ref);
    if (!b) {
      b = await prepareBaseline(repoRoot, ref, (line) => console.error(line));
      if ('error' in b) console.error(`${b.error}: its rows will say so; the rest of the run goes on`);
      builds.set(ref, b);
    }
    return b;
  };
  const baseline: Baseline | undefined = opts.baselineRef ? await prepare(opts.baselineRef) : undefined;
  const ownBaseline = new Map<string, Baseline>();
  for (const name of modules) {
    const ref = await declaredBaselineRef(benchDir, name);
    if (ref) ownBaseline.set(name, await prepare(ref));
  }

  const startedAt = new Date().toISOString();
  const rows: BenchRow[] = [];
  const outcomes: ModuleOutcome[] = [];
  const warnings: string[] = [];
  for (const name of modules) {
    for (const regime of opts.regimes) {
      console.error(`bench ${name} [${regime}${opts.quick ? ', quick' : ''}, ${opts.reps} reps] ...`);
      const background = await backgroundCpuShare(LOAD_PROBE_MS);
      const moduleBaseline = ownBaseline.get(name) ?? baseline;
      const ctx: BenchContext = { regime, repetitions: opts.reps, quick: opts.quick, ...(moduleBaseline ? { baseline: moduleBaseline } : {}) };
      const result = await runModule(benchDir, name, ctx, busy, opts.timeoutS);
      if (result.outcome.ok && background !== undefined && background > FOREIGN_LOAD_WARN) {
        warnings.push(
          `${Math.round(background * 100)} % of the CPU was busy with other work just before ${name} [${regime}]: req/s-style figures are unreliable, per-CPU figures less so; rerun on a quiet machine`,
        );
      }
      rows.push(...result.rows);
      outcomes.push({ ...result.outcome, ...(background === undefined ? {} : { backgroundCpu: background }) });
      console.error(
        `  ${result.outcome.ok ? 'done' : 'FAILED'} in ${result.outcome.seconds.toFixed(1)} s${result.outcome.error ? `: ${result.outcome.error}` : ''}`,
      );
    }
  }
  console.log(formatTable(rows));
  for (const w of warnings) console.log(`warning: ${w}`);

  const outDir = join(repoRoot, '.bench-out');
  await mkdir(outDir, { recursive: true });
  const report = {
    startedAt,
    finishedAt: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    options: opts,
    baseline: baselineReport(baseline),
    moduleBaselines: Object.fromEntries([...ownBaseline].map(([name, b]) => [name, baselineReport(b)])),
    outcomes,
    rows,
  };
  await writeFile(join(outDir, 'last.json'), JSON.stringify(report, null, 2) + '\n');
  console.error(`rows written to ${relative(process.cwd(), join(outDir, 'last.json')) || join(outDir, 'last.json')}`);

  const failed = new Set(modules.filter((m) => outcomes.every((o) => o.module !== m || !o.ok)));
  return failed.size === modules.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(errorText(err));
    process.exit(2);
  },
);
