/**
 * Closed-session churn (issue 26 "Benchmarks"): 300 sessions created, each printing 2 MB and exiting,
 * meant to fit in a minute; the pty host's RSS growth (RSS after the churn and a settle, minus RSS
 * before it) must stay under the closed-session budget (PtyConstants.TOMBSTONE_BUDGET_BYTES, 64 MiB)
 * plus 50 MB. /stats `closed_sessions` and `closed_bytes` after the churn say what the host keeps.
 *
 * The baseline is the same churn on the commit before tombstones (3de6fef^, `baselineRef`, built by
 * run.ts), where an exited session kept its whole 2 MiB ring and 10,000-line log for five minutes.
 * Every churn runs on a fresh tuicd (the baseline's closed sessions would otherwise still be held),
 * the two builds back to back in every repetition, the order rotating.
 */
import { PtyConstants } from '../../shared/protocol/pty.js';
import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { fmt } from './sessions/stats.js';
import { createSession, listSessions, ptyHostPid, request, rssKiB, sleep, startTuicd, type TuicdUnderTest } from './sessions/tuicd.js';

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
  /** After the churn, before RSS is read: the host's last batches handled, its heap settled. */
  SETTLE_MS: 10_000,
  SETTLE_MS_QUICK: 3_000,
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
  /** The largest pty host RSS during the churn, minus before it, in bytes. */
  peak: number;
  /** From the first create to the last exit. */
  seconds: number;
  /** /stats after the settle (absent from builds whose /stats does not say). */
  closedSessions?: number;
  closedBytes?: number;
  budgetBytes?: number;
}

/** Reads a process's VmRSS every `everyMs` until stopped; the largest reading in KiB. */
function rssSampler(pid: number, everyMs: number): { stop(): number | undefined } {
  let max: number | undefined;
  const read = (): void => {
    const v = rssKiB(pid);
    if (v !== undefined) max = Math.max(max ?? 0, v);
  };
  read();
  const timer = setInterval(read, everyMs);
  return {
    stop() {
      clearInterval(timer);
      read();
      return max;
    },
  };
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

async function churnOn(mainPath: string | undefined, sessions: number, settleMs: number): Promise<Churn> {
  const tuicd: TuicdUnderTest = await startTuicd(undefined, mainPath);
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
  runs: Churn[];
  error?: string;
}

export const run: BenchModule = async (ctx) => {
  const sessions = ctx.quick ? C.SESSIONS_QUICK : C.SESSIONS;
  const settleMs = ctx.quick ? C.SETTLE_MS_QUICK : C.SETTLE_MS;
  const variants: Variant[] = [{ name: 'tuicd', mainPath: undefined, runs: [] }];
  const b = ctx.baseline;
  if (b) variants.push({ name: b.label, mainPath: 'error' in b ? undefined : b.mainPath, runs: [], ...('error' in b ? { error: b.error } : {}) });
  for (let rep = 0; rep < ctx.repetitions; rep++) {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(rep + i) % variants.length]!;
      if (v.error) continue;
      try {
        v.runs.push(await churnOn(v.mainPath, sessions, settleMs));
      } catch (err) {
        v.error = `${v.name}: ${errorText(err)}`;
      }
    }
  }
  return rowsFor(ctx, sessions, variants);
};

function rowsFor(ctx: BenchContext, sessions: number, variants: Variant[]): BenchRow[] {
  const rows: BenchRow[] = [];
  const group = `closed-session churn: pty host RSS growth (${sessions} sessions × 2 MiB, after a ${(ctx.quick ? C.SETTLE_MS_QUICK : C.SETTLE_MS) / 1000} s settle)`;
  const peakGroup = `closed-session churn: pty host RSS peak during the churn (${sessions} sessions)`;
  const timeGroup = `closed-session churn: time for ${sessions} sessions to print 2 MiB and exit`;
  const statsGroup = 'closed-session churn: /stats after it';
  const unit = 'MB (lower is better)';
  const [current, base] = variants;
  const baseOk = base && !base.error && base.runs.length ? base : undefined;
  if (base) {
    if (!baseOk) {
      for (const g of [group, peakGroup, timeGroup]) rows.push(failedRow(g, base.name, ctx, g === timeGroup ? 's' : unit, base.error ?? 'no runs'));
    } else {
      const bg = baseOk.runs.map((r) => r.growth / MB);
      const baseline = baseOk.runs[0]!.closedSessions === undefined ? 'its /stats has no closed_sessions' : undefined;
      rows.push(
        withNote(
          row(group, base.name, ctx, unit, bg),
          [`goal < ${fmt(GOAL_BYTES / MB)} MB: ${median(bg) * MB < GOAL_BYTES ? 'met' : 'missed'} (for reference)`, baseline].filter(Boolean).join('; '),
        ),
      );
      rows.push(
        row(
          peakGroup,
          base.name,
          ctx,
          unit,
          baseOk.runs.map((r) => r.peak / MB),
        ),
      );
      rows.push(
        row(
          timeGroup,
          base.name,
          ctx,
          's (lower is better)',
          baseOk.runs.map((r) => r.seconds),
        ),
      );
    }
  }
  if (!current || current.error || current.runs.length === 0) {
    const why = current?.error ?? 'no runs';
    for (const g of [group, peakGroup, timeGroup]) rows.push(failedRow(g, 'tuicd', ctx, g === timeGroup ? 's' : unit, why));
    return rows;
  }
  const vs = (pick: (r: Churn) => number) => (baseOk ? { name: baseOk.name, median: median(baseOk.runs.map(pick)) } : undefined);
  const growth = current.runs.map((r) => r.growth / MB);
  const worst = Math.max(...growth);
  const goalNote =
    `goal < ${fmt(GOAL_BYTES / MB)} MB (closed-session budget ${PtyConstants.TOMBSTONE_BUDGET_BYTES / 1024 / 1024} MiB + ${C.GOAL_SLACK_BYTES / MB} MB, issue 26): ` +
    `${median(growth) * MB < GOAL_BYTES ? 'met' : 'MISSED'} on the median` +
    (worst * MB < GOAL_BYTES ? ', every repetition under it' : `; worst repetition ${fmt(worst)} MB`);
  rows.push(
    withNote(
      row(
        group,
        'tuicd',
        ctx,
        unit,
        growth,
        vs((r) => r.growth / MB),
      ),
      [goalNote, baseOk ? undefined : 'no baseline build'].filter(Boolean).join('; '),
    ),
  );
  rows.push(
    row(
      peakGroup,
      'tuicd',
      ctx,
      unit,
      current.runs.map((r) => r.peak / MB),
      vs((r) => r.peak / MB),
    ),
  );
  const seconds = current.runs.map((r) => r.seconds);
  rows.push(
    withNote(
      row(
        timeGroup,
        'tuicd',
        ctx,
        's (lower is better)',
        seconds,
        vs((r) => r.seconds),
      ),
      `${C.CONCURRENT} alive at once; the issue's pace is ${C.CHURN_TARGET_MS / 1000} s: ${Math.max(...seconds) * 1000 <= C.CHURN_TARGET_MS ? 'every churn fit' : `${seconds.filter((s) => s * 1000 > C.CHURN_TARGET_MS).length} of ${seconds.length} took longer`}`,
    ),
  );
  const closed = current.runs.filter((r) => r.closedSessions !== undefined);
  if (closed.length) {
    const budget = closed[0]!.budgetBytes;
    rows.push(
      withNote(
        row(
          statsGroup,
          'tuicd closed_sessions',
          ctx,
          'sessions',
          closed.map((r) => r.closedSessions!),
        ),
        `${sessions} churned + 1 warm-up closed; past the budget the oldest are forgotten`,
      ),
    );
    rows.push(
      withNote(
        row(
          statsGroup,
          'tuicd closed_bytes',
          ctx,
          'MB',
          closed.map((r) => r.closedBytes! / MB),
        ),
        budget === undefined ? undefined : `closed_budget_bytes ${fmt(budget / MB)} MB`,
      ),
    );
  } else {
    rows.push(failedRow(statsGroup, 'tuicd closed_sessions', ctx, 'sessions', '/stats answered no closed_sessions'));
  }
  return rows;
}
