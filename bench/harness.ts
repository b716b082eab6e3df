/** Shared shapes for every benchmark module: each one measures ours and a baseline in the same run. */
import type { Baseline } from './baseline.js';

/** The two machine regimes every module runs in: idle, and with one core kept busy by a spinner. */
export type Regime = 'idle' | 'busy';

/** One line of the printed table. */
export interface BenchRow {
  /** The hot path, e.g. "GET /health (tcp)". */
  group: string;
  /** What was measured, e.g. "tuicd" or "bare uWS". */
  variant: string;
  regime: Regime;
  unit: string;
  /** Median over the repetitions. */
  median: number;
  /** (max - min) / median over the repetitions, as a fraction. */
  spread: number;
  repetitions: number;
  /** median / baseline median, measured in the same run; absent for baseline rows. */
  ratio?: number;
  /** Which variant the ratio is against. */
  baseline?: string;
}

export interface BenchContext {
  regime: Regime;
  /** ≥ 3; more when the caller asks. */
  repetitions: number;
  /** Shorter runs for a quick smoke (`--quick`). */
  quick: boolean;
  /**
   * `--baseline-ref`: a build of an older commit to measure beside the current tuicd (baseline.ts).
   * Modules that support it add a `tuicd (baseline <ref>)` variant; absent, nothing changes.
   * A module that exports `baselineRef: string` (the commit its goal is about) always gets a build of
   * that ref here, whatever --baseline-ref says (run.ts builds it before any module runs).
   */
  baseline?: Baseline;
}

/** Every bench module exports `run` with this signature; bench/run.ts calls them in both regimes. */
export type BenchModule = (ctx: BenchContext) => Promise<BenchRow[]>;

/**
 * The exports run.ts reads from a `*.bench.js`: `run`, and optionally `baselineRef`, the git ref of
 * the older commit the module's goal compares against (e.g. "96fcc07^", the commit before a change).
 */
export interface BenchModuleExports {
  run: BenchModule;
  baselineRef?: string;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function spread(values: number[]): number {
  const m = median(values);
  if (m === 0) return 0;
  return (Math.max(...values) - Math.min(...values)) / m;
}

/** Builds a row from raw repetition values, with a ratio when a baseline median is given. */
export function row(group: string, variant: string, ctx: BenchContext, unit: string, values: number[], baseline?: { name: string; median: number }): BenchRow {
  const m = median(values);
  const r: BenchRow = { group, variant, regime: ctx.regime, unit, median: m, spread: spread(values), repetitions: values.length };
  if (baseline) {
    r.ratio = baseline.median === 0 ? 0 : m / baseline.median;
    r.baseline = baseline.name;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Additions for rows that carry a message (run.ts prints them). BenchRow itself is unchanged:
// a NotedRow is still a BenchRow, so every module keeps returning BenchRow[].

/** Optional annotations a row may carry; run.ts prints them in the table's note column. */
export interface RowNotes {
  /** The variant could not be measured (tool missing, server did not start...). */
  error?: string;
  /** Something the reader should know about a figure that was measured. */
  note?: string;
}

export type NotedRow = BenchRow & RowNotes;

/** A row for a variant that could not be measured: median and spread are NaN (null in JSON). */
export function failedRow(group: string, variant: string, ctx: BenchContext, unit: string, error: string): NotedRow {
  return { group, variant, regime: ctx.regime, unit, median: NaN, spread: NaN, repetitions: 0, error };
}

/** Attaches a note to a measured row (returns the same object). */
export function withNote<T extends BenchRow>(r: T, note: string | undefined): T & RowNotes {
  const noted = r as T & RowNotes;
  if (note) noted.note = noted.note ? `${noted.note}; ${note}` : note;
  return noted;
}

export function rowError(r: BenchRow): string | undefined {
  return (r as NotedRow).error;
}

export function rowNote(r: BenchRow): string | undefined {
  return (r as NotedRow).note;
}

/** Short, one-line text for an unknown thrown value. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n')[0] ?? String(err);
  return String(err);
}
