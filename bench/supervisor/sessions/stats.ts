/** Small number helpers shared by the session benches. */

/** The p-th percentile (0..100) by nearest rank; NaN for no values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function fmt(n: number, digits = 3): string {
  return Number.isFinite(n) ? n.toPrecision(digits) : String(n);
}

/** "met" / "MISSED" for a goal check in a row note. */
export function goal(ok: boolean): string {
  return ok ? 'met' : 'MISSED';
}
