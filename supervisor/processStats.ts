/** CPU % and RSS of tuicd, the pty host and each session's process tree, read from /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs';

/** Kernel clock ticks per second (USER_HZ); 100 on every mainstream Linux. */
const CLOCK_TICKS_PER_S = 100;
const PAGE_KB = 4;

interface ProcSample {
  pid: number;
  ppid: number;
  name: string;
  ticks: number;
  rssKb: number;
}

export interface ProcessRow {
  kind: 'tuicd' | 'pty-host' | 'session';
  session_id?: string;
  name: string;
  pid: number;
  /** Processes in the tree (the root and its descendants). */
  processes: number;
  rss_kb: number;
  /** Share of one core since the previous sample of this tree (0 on the first). */
  cpu_pct: number;
}

function readStat(pid: number): ProcSample | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The name is in parentheses and may itself contain spaces or parentheses.
    const close = text.lastIndexOf(')');
    const name = text.slice(text.indexOf('(') + 1, close);
    const f = text.slice(close + 2).split(' ');
    return { pid, ppid: Number(f[1]), name, ticks: Number(f[11]) + Number(f[12]), rssKb: Number(f[21]) * PAGE_KB };
  } catch {
    return null; // exited between listing and reading
  }
}

export class ProcessStats {
  private readonly previous = new Map<number, { ticks: number; atMs: number }>();

  /** One pass over /proc; trees are summed over the root and every descendant. */
  sample(roots: Array<{ kind: ProcessRow['kind']; pid: number; session_id?: string }>): ProcessRow[] {
    const all = new Map<number, ProcSample>();
    const children = new Map<number, number[]>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const s = readStat(Number(entry));
      if (!s) continue;
      all.set(s.pid, s);
      let list = children.get(s.ppid);
      if (!list) children.set(s.ppid, (list = []));
      list.push(s.pid);
    }
    const now = Date.now();
    const rootPids = new Set(roots.map((r) => r.pid));
    const rows: ProcessRow[] = [];
    for (const root of roots) {
      const top = all.get(root.pid);
      if (!top) continue;
      let ticks = 0;
      let rss = 0;
      let count = 0;
      const stack = [root.pid];
      // The pty host is tuicd's child and each session's shell the pty host's: a tree stops where
      // another root's begins, so every process is counted in exactly one row.
      while (stack.length > 0) {
        const pid = stack.pop()!;
        const s = all.get(pid);
        if (!s) continue;
        ticks += s.ticks;
        rss += s.rssKb;
        count++;
        for (const c of children.get(pid) ?? []) if (!rootPids.has(c)) stack.push(c);
      }
      const prev = this.previous.get(root.pid);
      const cpu = prev && now > prev.atMs ? ((ticks - prev.ticks) / CLOCK_TICKS_PER_S / ((now - prev.atMs) / 1000)) * 100 : 0;
      this.previous.set(root.pid, { ticks, atMs: now });
      const row: ProcessRow = {
        kind: root.kind,
        name: top.name,
        pid: root.pid,
        processes: count,
        rss_kb: rss,
        cpu_pct: Math.max(0, Math.round(cpu * 10) / 10),
      };
      if (root.session_id) row.session_id = root.session_id;
      rows.push(row);
    }
    for (const pid of this.previous.keys()) if (!all.has(pid)) this.previous.delete(pid);
    return rows;
  }
}
