/**
 * Load on several targets measured so their figures pair up: one unrecorded warm-up each, then
 * `repetitions` rounds with every target back to back, the order rotating from round to round.
 * A target that fails (or answers a wrong status) stops being measured and says why.
 */
import { baselineGoalNote } from '../baseline.js';
import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchRow } from '../harness.js';
import type { Measurement } from './drivers.js';

export interface Series {
  rps: number[];
  /** Requests per second of server CPU. */
  perCpu: number[];
  notes: Set<string>;
  error?: string;
}

export async function measureRotating<T>(
  targets: readonly T[],
  nameOf: (target: T) => string,
  opts: { repetitions: number; warmupMs: number; measureMs: number },
  load: (target: T, warmupMs: number, ms: number) => Promise<Measurement>,
): Promise<Map<string, Series>> {
  const series = new Map<string, Series>(targets.map((t) => [nameOf(t), { rps: [], perCpu: [], notes: new Set() }]));
  const measure = async (target: T, record: boolean, ms: number): Promise<void> => {
    const name = nameOf(target);
    const s = series.get(name)!;
    if (s.error) return;
    try {
      const m = await load(target, record ? opts.warmupMs : 0, ms);
      if (m.badStatus) s.error = `${name}: ${m.badStatus}`;
      if (!record) return;
      s.rps.push(m.rps);
      if (m.serverCpuS) s.perCpu.push(m.requestsInCpuWindow / m.serverCpuS);
      if (m.socketErrors) s.notes.add(m.socketErrors);
    } catch (err) {
      s.error = `${name}: ${errorText(err)}`;
    }
  };
  for (const t of targets) await measure(t, false, opts.warmupMs);
  for (let rep = 0; rep < opts.repetitions; rep++) {
    for (let i = 0; i < targets.length; i++) await measure(targets[(rep + i) % targets.length]!, true, opts.measureMs);
  }
  return series;
}

/**
 * Rows for tuicd against the run's baseline build: calls/s and calls per supervisor CPU second, the
 * baseline's row first, tuicd's with its ratio and the ≥ 0.97× goal note (`goal` may reword it).
 */
export function rowsVsBaseline(
  ctx: BenchContext,
  group: string,
  series: Map<string, Series>,
  failures: Map<string, string>,
  opts: { notes?: string[]; goal?: (note: string) => string; withoutBaseline?: string } = {},
): BenchRow[] {
  const rows: BenchRow[] = [];
  const label = ctx.baseline?.label;
  for (const [g, unit, pick] of [
    [group, 'calls/s', (s: Series) => s.rps],
    [`${group} per supervisor CPU`, 'calls/cpu-s', (s: Series) => s.perCpu],
  ] as const) {
    const values = (name: string): number[] | string => failures.get(name) ?? series.get(name)?.error ?? pick(series.get(name)!);
    const current = values('tuicd');
    const base = label ? values(label) : undefined;
    if (label && base !== undefined) rows.push(typeof base === 'string' ? failedRow(g, label, ctx, unit, base) : row(g, label, ctx, unit, base));
    if (typeof current === 'string') {
      rows.push(failedRow(g, 'tuicd', ctx, unit, current));
      continue;
    }
    const baseMedian = base !== undefined && typeof base !== 'string' && base.length ? { name: label!, median: median(base) } : undefined;
    const notes = [...(opts.notes ?? []), ...(series.get('tuicd')?.notes ?? [])];
    if (baseMedian && base !== undefined && typeof base !== 'string') notes.push((opts.goal ?? ((n: string) => n))(baselineGoalNote(current, base, true)));
    else if (!label && opts.withoutBaseline) notes.push(opts.withoutBaseline);
    rows.push(withNote(row(g, 'tuicd', ctx, unit, current, baseMedian), notes.join('; ')));
  }
  return rows;
}
