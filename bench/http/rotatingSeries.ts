/**
 * Load on several targets measured so their figures pair up: one unrecorded warm-up each, then
 * `repetitions` rounds with every target back to back, the order rotating from round to round.
 * A target that fails (or answers a wrong status) stops being measured and says why.
 */
import { errorText } from '../harness.js';
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
