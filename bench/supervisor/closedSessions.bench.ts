/**
 * Closed-session churn (issue 26 "Benchmarks"): 300 sessions created, each printing 2 MB and exiting,
 * meant to fit in a minute; the pty host's RSS growth (RSS after the churn and a settle, minus RSS
 * before it) must stay under the closed-session budget (PtyConstants.TOMBSTONE_BUDGET_BYTES, 64 MiB)
 * plus 50 MB. /stats `closed_sessions` and `closed_bytes` after the churn say what the host keeps.
 *
 * The baseline is the same churn on the commit before tombstones (3de6fef^, `baselineRef`, built by
 * run.ts), where an exited session kept its whole 2 MiB ring and 10,000-line log for five minutes.
 * Every churn runs on a fresh tuicd (the baseline's closed sessions would otherwise still be held),
 * the two builds back to back in every repetition, the order rotating. (The pty host runs with
 * glibc's mmap threshold pinned, supervisor/hosts/ptyHostEnv.ts: without it the allocator kept
 * about 75 MB more of the churn's freed rings, and the goal was missed.)
 */
import { PtyConstants } from '../../shared/protocol/pty.js';
import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { fmt } from './sessions/stats.js';
import { createSession, listSessions, ptyHostPid, request, rssKiB, rssSampler, sleep, startTuicd, type TuicdUnderTest } from './sessions/tuicd.js';

/** The commit before the tombstones landed (3de6fef): an exited session kept everything it had. */
export const baselineRef = '3de6fef^';

const C = {
  SESSIONS: 300,
  SESSIONS_QUICK: 40,
  BYTES_PER_SESSION: 2 * 1024 * 1024,
  /** Sessions alive at once: 300 in a minute needs about 5 created per second. */
  CONCURRENT: 16,
  /** The issue's pace: the churn is meant to fit in this; the note says when it did not. */
  CHURN_TARGET_MS: 60_000,
  /** A churn that has not ended by then is abandoned (its row is an error). */
  CHURN_LIMIT_MS: 300_000,
  /** How often the live sessions are listed to see which exited. */
  POLL_MS: 100,
  /**
   * After the churn, before RSS is read: the host's last batches handled and its heap settled. V8's
   * memory reducer gives the churn's garbage back 10–30 s after the allocations stop (measured: the
   * same RSS at +0 and +10 s, about 100 MB less at +30 s and no change at +60 s), so 40 s.
   */
  SETTLE_MS: 40_000,
  SETTLE_MS_QUICK: 5_000,
  /** After the warm-up session, before RSS is read the first time. */
  WARM_SETTLE_MS: 2_000,
  RSS_SAMPLE_MS: 100,
  /** The goal's slack above the budget, in bytes (10^6). */
  GOAL_SLACK_BYTES: 50_000_000,
} as const;

/** 80-column lines (79 characters and a newline: no wrap on an 80-column terminal), 2 MiB of them. */
const LINE = 'closed-session churn: one line of output as a build or a test run prints it 0123';
const PRINTER = (bytes: number): string[] => ['-c', `yes '${LINE}' | head -c ${bytes}`];

const MB = 1e6;
const GOAL_BYTES = PtyConstants.TOMBSTONE_BUDGET_BYTES + C.GOAL_SLACK_BYTES;

interface Churn {
  /** pty host RSS after the churn and the settle, minus before it, in bytes. */
  growth: number;
  /** The largest pty host RSS during the churn and the settle, minus before it, in bytes. */
  peak: number;
  /** From the first create to the last exit. */
  seconds: number;
  /** /stats after the settle (absent from builds whose /stats does not say). */
  closedSessions?: number;
  closedBytes?: number;
  budgetBytes?: number;
}

/** Resolves each session's exit (it leaves GET /sessions, which lists live sessions) by polling the list. */
class ExitWatch {
  /** Each waiter with the number of the last poll started before it: only a later poll may see it gone. */
  private readonly waiting = new Map<string, { resolve: () => void; reject: (err: Error) => void; after: number }>();
  private polls = 0;
  private timer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;

  constructor(private readonly socketPath: string) {}

  exited(id: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const done = new Promise<void>((resolve, reject) => this.waiting.set(id, { resolve, reject, after: this.polls }));
    this.timer ??= setTimeout(() => void this.poll(), C.POLL_MS);
    return done;
  }

  private async poll(): Promise<void> {
    const n = ++this.polls;
    try {
      const live = new Set((await listSessions(this.socketPath)).map((s) => s.session_id));
      for (const [id, w] of this.waiting) {
        // A session created while this list was on its way is not in it, but has not exited either.
        if (live.has(id) || w.after >= n) continue;
        this.waiting.delete(id);
        w.resolve();
      }
    } catch (err) {
      this.failure = err instanceof Error ? err : new Error(String(err));
      for (const w of this.waiting.values()) w.reject(this.failure);
      this.waiting.clear();
    }
    this.timer = this.waiting.size > 0 && !this.failure ? setTimeout(() => void this.poll(), C.POLL_MS) : undefined;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** `started`: called once tuicd runs (its environment is taken). */
async function churnOn(mainPath: string | undefined, sessions: number, settleMs: number, started: () => void): Promise<Churn> {
  const tuicd: TuicdUnderTest = await startTuicd(undefined, mainPath);
  started();
  const watch = new ExitWatch(tuicd.socketPath);
  try {
    // One short session first: the pty host now runs, and its start-up is not charged to the churn.
    await watch.exited(await createSession(tuicd.socketPath, '/bin/sh', PRINTER(4096)));
    await sleep(C.WARM_SETTLE_MS);
    const host = ptyHostPid(tuicd.pid);
    if (host === undefined) throw new Error('no pty host process found under tuicd after the first session');
    const before = rssKiB(host);
    if (before === undefined) throw new Error('could not read the pty host RSS');
    const sampler = rssSampler(host, C.RSS_SAMPLE_MS);
    const t0 = performance.now();
    let created = 0;
    const lane = async (): Promise<void> => {
      while (created < sessions) {
        created++;
        await watch.exited(await createSession(tuicd.socketPath, '/bin/sh', PRINTER(C.BYTES_PER_SESSION)));
      }
    };
    let limit: NodeJS.Timeout | undefined;
    const overrun = new Promise<never>((_, reject) => {
      limit = setTimeout(() => reject(new Error(`the churn had not ended after ${C.CHURN_LIMIT_MS / 1000} s (${created} sessions created)`)), C.CHURN_LIMIT_MS);
    });
    try {
      await Promise.race([Promise.all(Array.from({ length: C.CONCURRENT }, lane)), overrun]);
    } finally {
      clearTimeout(limit);
    }
    const seconds = (performance.now() - t0) / 1000;
    await sleep(settleMs);
    const peakKiB = sampler.stop();
    const after = rssKiB(host);
    if (after === undefined) throw new Error('the pty host is gone after the churn');
    const stats = await request(tuicd.socketPath, 'GET', '/stats');
    const s = stats.status === 200 ? (JSON.parse(stats.body) as { closed_sessions?: number; closed_bytes?: number; closed_budget_bytes?: number }) : {};
    return {
      growth: (after - before) * 1024,
      peak: ((peakKiB ?? after) - before) * 1024,
      seconds,
      ...(s.closed_sessions === undefined ? {} : { closedSessions: s.closed_sessions }),
      ...(s.closed_bytes === undefined ? {} : { closedBytes: s.closed_bytes }),
      ...(s.closed_budget_bytes === undefined ? {} : { budgetBytes: s.closed_budget_bytes }),
    };
  } finally {
    watch.stop();
    await tuicd.stop();
  }
}

interface Variant {
  name: string;
  mainPath: string | undefined;
  /** Set in tuicd's environment (its pty host inherits it). */
  env?: Record<string, string>;
  /** Runs the current build: its rows are judged against the goal. */
  current: boolean;
  note?: string;
  runs: Churn[];
  error?: string;
}

/** A churn with `env` set for the tuicd it starts (and so for its pty host), restored afterwards. */
async function churnWithEnv(v: Variant, sessions: number, settleMs: number): Promise<Churn> {
  const saved = new Map(Object.keys(v.env ?? {}).map((k) => [k, process.env[k]]));
  Object.assign(process.env, v.env);
  const restore = (): void => {
    for (const [k, old] of saved) {
      if (old === undefined) delete process.env[k];
      else process.env[k] = old;
    }
  };
  try {
    return await churnOn(v.mainPath, sessions, settleMs, restore);
  } finally {
    restore();
  }
}

export const run: BenchModule = async (ctx) => {
  const sessions = ctx.quick ? C.SESSIONS_QUICK : C.SESSIONS;
  const settleMs = ctx.quick ? C.SETTLE_MS_QUICK : C.SETTLE_MS;
  const variants: Variant[] = [{ name: 'tuicd', mainPath: undefined, current: true, runs: [] }];
  const b = ctx.baseline;
  if (b)
    variants.push({ name: b.label, mainPath: 'error' in b ? undefined : b.mainPath, current: false, runs: [], ...('error' in b ? { error: b.error } : {}) });
  for (let rep = 0; rep < ctx.repetitions; rep++) {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(rep + i) % variants.length]!;
      if (v.error) continue;
      try {
        v.runs.push(await churnWithEnv(v, sessions, settleMs));
      } catch (err) {
        v.error = `${v.name}: ${errorText(err)}`;
      }
    }
  }
  return rowsFor(ctx, sessions, settleMs, variants);
};

function rowsFor(ctx: BenchContext, sessions: number, settleMs: number, variants: Variant[]): BenchRow[] {
  const rows: BenchRow[] = [];
  const unit = 'MB (lower is better)';
  const groups = [
    {
      group: `closed-session churn: pty host RSS growth (${sessions} sessions × 2 MiB, after a ${settleMs / 1000} s settle)`,
      unit,
      pick: (r: Churn) => r.growth / MB,
    },
    { group: `closed-session churn: pty host RSS peak (${sessions} sessions, churn and settle)`, unit, pick: (r: Churn) => r.peak / MB },
    { group: `closed-session churn: time for ${sessions} sessions to print 2 MiB and exit`, unit: 's (lower is better)', pick: (r: Churn) => r.seconds },
  ];
  const base = variants.find((v) => !v.current && !v.error && v.runs.length);
  for (const [g, { group, unit: u, pick }] of groups.entries()) {
    for (const v of [...variants.filter((x) => !x.current), ...variants.filter((x) => x.current)]) {
      if (v.error || v.runs.length === 0) {
        rows.push(failedRow(group, v.name, ctx, u, v.error ?? 'no runs'));
        continue;
      }
      const values = v.runs.map(pick);
      const notes: string[] = [];
      if (g === 0)
        notes.push(
          growthGoal(
            v.runs.map((r) => r.growth / MB),
            v.current,
          ),
        );
      if (g === 0 && v.note) notes.push(v.note);
      if (g === 0 && !v.current && v.runs[0]!.closedSessions === undefined) notes.push('its /stats has no closed_sessions');
      if (g === 0 && v.current && !base) notes.push('no baseline build');
      if (g === 2 && v.current) {
        const late = values.filter((s) => s * 1000 > C.CHURN_TARGET_MS).length;
        notes.push(
          `${C.CONCURRENT} alive at once; the issue's pace is ${C.CHURN_TARGET_MS / 1000} s: ${late === 0 ? 'every churn fit' : `${late} of ${values.length} took longer`}`,
        );
      }
      const vs = v.current && base ? { name: base.name, median: median(base.runs.map(pick)) } : undefined;
      rows.push(withNote(row(group, v.name, ctx, u, values, vs), notes.join('; ')));
    }
  }
  const statsGroup = 'closed-session churn: /stats after it';
  for (const v of variants.filter((x) => x.current && !x.error)) {
    const closed = v.runs.filter((r) => r.closedSessions !== undefined);
    if (closed.length === 0) {
      rows.push(failedRow(statsGroup, `${v.name}: closed_sessions`, ctx, 'sessions', '/stats answered no closed_sessions'));
      continue;
    }
    const budget = closed[0]!.budgetBytes;
    rows.push(
      withNote(
        row(
          statsGroup,
          `${v.name}: closed_sessions`,
          ctx,
          'sessions',
          closed.map((r) => r.closedSessions!),
        ),
        `${sessions} churned + 1 warm-up closed; past the budget the oldest are forgotten`,
      ),
      withNote(
        row(
          statsGroup,
          `${v.name}: closed_bytes`,
          ctx,
          'MB',
          closed.map((r) => r.closedBytes! / MB),
        ),
        budget === undefined ? undefined : `closed_budget_bytes ${fmt(budget / MB)} MB`,
      ),
    );
  }
  return rows;
}

/** The goal check of an RSS growth row: on the median, and whether every repetition agrees. */
function growthGoal(growth: number[], current: boolean): string {
  const goal = `goal < ${fmt(GOAL_BYTES / MB)} MB (closed-session budget ${PtyConstants.TOMBSTONE_BUDGET_BYTES / 1024 / 1024} MiB + ${C.GOAL_SLACK_BYTES / MB} MB, issue 26)`;
  const met = median(growth) * MB < GOAL_BYTES;
  if (!current) return `${goal}: ${met ? 'met' : 'missed'} (for reference)`;
  const under = growth.filter((g) => g * MB < GOAL_BYTES).length;
  return `${goal}: ${met ? 'met' : 'MISSED'} on the median; ${under} of ${growth.length} repetitions under it`;
}
