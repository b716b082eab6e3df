/** Counters and gauges behind GET /metrics, rendered as JSON or Prometheus text exposition. */

type Labels = Record<string, string>;

interface Series {
  help: string;
  type: 'counter' | 'gauge';
  values: Map<string, { labels: Labels; value: number }>;
  /** Gauges computed at scrape time. */
  read?: () => number;
}

/** The JSON form's key of a labelled series: `k=v,...` with the names sorted. */
function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

/** The storage key: unambiguous even when values hold ',' or '=' (`{a:'x,b=y'}` vs `{a:'x',b:'y'}`). */
function storageKey(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return '';
  return JSON.stringify(keys.sort().map((k) => [k, labels[k]]));
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

export class Metrics {
  private readonly series = new Map<string, Series>();

  counter(name: string, help: string): void {
    if (!this.series.has(name)) this.series.set(name, { help, type: 'counter', values: new Map() });
  }

  gauge(name: string, help: string, read: () => number): void {
    this.series.set(name, { help, type: 'gauge', values: new Map(), read });
  }

  inc(name: string, labels: Labels = {}, by = 1): void {
    this.cell(name, labels).value += by;
  }

  /** The storage cell of one labelled series: hot paths keep it and bump `value` without lookups. */
  cell(name: string, labels: Labels = {}): { value: number } {
    const s = this.series.get(name);
    if (!s) throw new Error(`unknown metric ${name}`);
    const key = storageKey(labels);
    let cur = s.values.get(key);
    // A copy: a caller reusing its labels object must not relabel the series afterwards.
    if (!cur) s.values.set(key, (cur = { labels: { ...labels }, value: 0 }));
    return cur;
  }

  value(name: string, labels: Labels = {}): number {
    const s = this.series.get(name);
    if (!s) return 0;
    if (s.read) return s.read();
    return s.values.get(storageKey(labels))?.value ?? 0;
  }

  /** Flat JSON: unlabelled series as numbers, labelled ones as `{ "<k=v,...>": n }`. */
  toJson(): Record<string, number | Record<string, number>> {
    const out: Record<string, number | Record<string, number>> = {};
    for (const [name, s] of this.series) {
      if (s.read) {
        out[name] = s.read();
        continue;
      }
      const entries = [...s.values.entries()];
      if (entries.length === 0) out[name] = 0;
      else if (entries.length === 1 && entries[0]![0] === '') out[name] = entries[0]![1].value;
      else out[name] = Object.fromEntries(entries.map(([, v]) => [labelKey(v.labels), v.value]));
    }
    return out;
  }

  toPrometheus(prefix = 'tuicd_'): string {
    const lines: string[] = [];
    for (const [name, s] of this.series) {
      const full = prefix + name;
      lines.push(`# HELP ${full} ${s.help}`, `# TYPE ${full} ${s.type}`);
      if (s.read) {
        lines.push(`${full} ${s.read()}`);
        continue;
      }
      if (s.values.size === 0) lines.push(`${full} 0`);
      for (const { labels, value } of s.values.values()) {
        const keys = Object.keys(labels);
        const rendered = keys.length === 0 ? '' : `{${keys.map((k) => `${k}="${escapeLabel(labels[k]!)}"`).join(',')}}`;
        lines.push(`${full}${rendered} ${value}`);
      }
    }
    return lines.join('\n') + '\n';
  }
}
