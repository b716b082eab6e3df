/**
 * What a session costs in memory, and whether it comes back (issue 29 items 1-2):
 * - memory per busy session: N shells each printing ~20 KB/s (the steady perl printer), RSS of tuicd +
 *   its pty host over the same tuicd with no session, per session; against a tmux server holding N
 *   windows of the same printer (tmux's own RSS growth per pane) and a bare node-pty process holding N
 *   PTYs (what node-pty itself costs);
 * - memory per idle session: the same with N shells that print a prompt and wait;
 * - memory comes back: a fresh tuicd, M sessions × 1 MB printed and exited, their tombstones expired
 *   (DELETE of a closed session is what the supervisor's tombstone TTL does), then a settle: the pty
 *   host's RSS over its own start (goal: within +30 MB), against the same with the idle collection off
 *   (TUIC_PTY_IDLE_GC=0).
 * The issue's figures were 200 sessions over 60 s; the busy rows use N = 50 over a 10 s window, the idle
 * rows N = 200 (their cost is small beside each process's own noise), and M = 80
 * so one repetition fits in about two minutes: the per-session figure is of a session that has printed
 * ~250 KB, not one whose ring and log are full.
 * tmux is a bench-only peer (`apt-get install tmux`); without it those rows say so.
 * Idle memory is read as a server left alone holds it: both tuicd processes run one memory-reducing
 * collection 2-4 s after the last create or delete (shared/idleGc.ts), so the baseline and the idle
 * sample are read IDLE_SETTLE_MS after the last of them (busy sessions are sampled at once: a busy
 * server never goes quiet). `--baseline-ref R` adds `tuicd (baseline R)` to the busy and idle groups,
 * measured right after tuicd with the same waits. TUICD_BENCH_MEMORY_KINDS=idle (or busy, churn; comma
 * separated) runs only those parts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { LoadClient } from './sessions/clientProc.js';
import { STEADY_PRINTER } from './sessions/scripts.js';
import { fmt } from './sessions/stats.js';
import { createSession, deleteSession, inBatches, listSessions, ptyHostPid, rssKiB, sleep, startTuicd } from './sessions/tuicd.js';

const C = {
  SESSIONS: 50,
  SESSIONS_QUICK: 20,
  /** Busy sessions print this long before RSS is read (the max over the window's last part). */
  WINDOW_MS: 10_000,
  WINDOW_MS_QUICK: 4_000,
  /** Idle sessions: their prompt is out and the shells wait; RSS is the median over this window. */
  IDLE_WINDOW_MS: 4_000,
  RSS_SAMPLE_MS: 200,
  CREATE_CONCURRENCY: 4,
  DELETE_CONCURRENCY: 8,
  /** Memory comes back: sessions × 1 MB, at most this many alive at once. */
  CHURN_SESSIONS: 80,
  CHURN_SESSIONS_QUICK: 40,
  CHURN_BYTES: 1024 * 1024,
  CHURN_CONCURRENT: 8,
  /** After the last tombstone expired: the host's idle collection waits 2 s of quiet, then runs. */
  CHURN_SETTLE_MS: 8_000,
  /** After the warm-up session, before the host's start RSS is read. */
  WARM_SETTLE_MS: 2_000,
  /**
   * After the last create or delete, before idle memory is read: past both processes' idle collection
   * (2-4 s) and V8's own reduction a few seconds after it (measured: the supervisor 110 -> 105 MB
   * 4-5 s after its collection, with no request), then until the RSS holds still (SETTLE_STILL_KIB
   * over SETTLE_STILL_MS), at most SETTLE_MAX_MS.
   */
  IDLE_SETTLE_MS: 10_000,
  SETTLE_STILL_MS: 3_000,
  SETTLE_STILL_KIB: 128,
  SETTLE_MAX_MS: 20_000,
  /** Idle sessions are cheap to create and their cost is small beside the processes' own noise: more of them. */
  IDLE_SESSIONS: 200,
  IDLE_SESSIONS_QUICK: 40,
  GOAL_BACK_MB: 30,
  CALL_SLACK_MS: 60_000,
} as const;

const IDLE_SCRIPT = ['-c', `printf '$ '; exec sleep 600`];
const KIB_PER_MB = 1000 / 1.024;

function which(command: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8', timeout: 5_000 });
  const path = r.stdout?.trim();
  return path && existsSync(path) ? path : undefined;
}

/** RSS of a process and what it started (tuicd and its pty host), in KiB. */
function tuicdRss(pid: number): number {
  const [supervisor, host] = tuicdRssPair(pid);
  return supervisor + host;
}

/** RSS of tuicd and of its pty host, apart, in KiB. */
function tuicdRssPair(pid: number): [number, number] {
  const host = ptyHostPid(pid);
  return [rssKiB(pid) ?? 0, host === undefined ? 0 : (rssKiB(host) ?? 0)];
}

/**
 * RSS read every RSS_SAMPLE_MS over `ms`: busy memory is its peak; idle memory its median (an idle
 * process's RSS steps up and down with collections of what the creates left, and the peak of that
 * noise swamped the per-session figure).
 */
async function sampleOver(ms: number, read: () => number, pick: Pick): Promise<number> {
  const samples = [read()];
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    await sleep(C.RSS_SAMPLE_MS);
    samples.push(read());
  }
  return pick === 'peak' ? Math.max(...samples) : median(samples);
}

type Pick = 'peak' | 'median';

/** Waits IDLE_SETTLE_MS, then until `read` moved at most SETTLE_STILL_KIB over SETTLE_STILL_MS (bounded). */
async function settle(read: () => number): Promise<void> {
  await sleep(C.IDLE_SETTLE_MS);
  const recent: number[] = [];
  const t0 = performance.now();
  while (performance.now() - t0 < C.SETTLE_MAX_MS) {
    recent.push(read());
    if (recent.length > C.SETTLE_STILL_MS / C.RSS_SAMPLE_MS) recent.shift();
    if (recent.length * C.RSS_SAMPLE_MS >= C.SETTLE_STILL_MS && Math.max(...recent) - Math.min(...recent) <= C.SETTLE_STILL_KIB) return;
    await sleep(C.RSS_SAMPLE_MS);
  }
}

/** KiB per session: tuicd + pty host RSS with `sessions` of `command args`, over the same with none. */
/**
 * `shares` hears each process's part (median of its own samples over the window, per session): the
 * supervisor's RSS moves by megabytes with collections of its own start-up, so its part of an idle
 * figure is mostly noise, and the pty host's is the steady one.
 */
async function tuicdPerSession(
  command: string,
  args: string[],
  sessions: number,
  windowMs: number,
  pick: Pick,
  mainPath?: string,
  shares?: (supervisor: number, host: number) => void,
): Promise<number> {
  const tuicd = await startTuicd(undefined, mainPath);
  try {
    // The pty host starts with the first session: one first, gone before the baseline.
    const warm = await createSession(tuicd.socketPath, '/bin/sh', IDLE_SCRIPT);
    await sleep(500);
    await deleteSession(tuicd.socketPath, warm);
    await settle(() => tuicdRss(tuicd.pid));
    const beforePair = tuicdRssPair(tuicd.pid);
    const before = beforePair[0] + beforePair[1];
    const ids = Array.from({ length: sessions }, (_, i) => i);
    const created: string[] = [];
    await inBatches(ids, C.CREATE_CONCURRENCY, async () => created.push(await createSession(tuicd.socketPath, command, args)));
    if (pick === 'median') await settle(() => tuicdRss(tuicd.pid));
    const pairs: Array<[number, number]> = [];
    const after = await sampleOver(
      windowMs,
      () => {
        const pair = tuicdRssPair(tuicd.pid);
        pairs.push(pair);
        return pair[0] + pair[1];
      },
      pick,
    );
    shares?.((median(pairs.map((p) => p[0])) - beforePair[0]) / sessions, (median(pairs.map((p) => p[1])) - beforePair[1]) / sessions);
    await inBatches(created, C.DELETE_CONCURRENCY, (id) => deleteSession(tuicd.socketPath, id));
    return (after - before) / sessions;
  } finally {
    await tuicd.stop();
  }
}

/** KiB per pane: a tmux server's RSS with `sessions` more windows of `command args`, over it with one quiet window. */
async function tmuxPerSession(tmux: string, command: string, args: string[], sessions: number, windowMs: number, pick: Pick): Promise<number> {
  const socket = `tuicd-bench-${process.pid}-${Date.now()}`;
  const t = (...a: string[]): string => {
    const r = spawnSync(tmux, ['-L', socket, ...a], { encoding: 'utf8', timeout: 10_000 });
    if (r.status !== 0) throw new Error(`tmux ${a[0]}: ${r.stderr || r.error?.message || `status ${r.status}`}`);
    return r.stdout.trim();
  };
  t('-f', '/dev/null', 'new-session', '-d', '-s', 'bench', '-x', '80', '-y', '24', 'exec sleep 600');
  try {
    const pid = Number(t('display', '-p', '#{pid}'));
    await sleep(C.WARM_SETTLE_MS);
    const before = rssKiB(pid) ?? 0;
    for (let i = 0; i < sessions; i++) t('new-window', '-d', '-t', 'bench', '--', command, ...args);
    const after = await sampleOver(windowMs, () => rssKiB(pid) ?? 0, pick);
    return (after - before) / sessions;
  } finally {
    spawnSync(tmux, ['-L', socket, 'kill-server'], { timeout: 10_000 });
  }
}

async function barePerSession(client: LoadClient, command: string, args: string[], sessions: number, windowMs: number): Promise<number> {
  const b = await client.call(
    { op: 'bareHold', command, args, sessions, settleMs: 500, durationMs: windowMs, sampleMs: C.RSS_SAMPLE_MS },
    windowMs + C.CALL_SLACK_MS,
  );
  return (b.rssMaxKiB - b.rssBeforeKiB) / sessions;
}

/** The pty host's RSS after `sessions` × 1 MB ended and their tombstones expired, minus its start, in KiB. */
async function memoryBack(file: string, sessions: number, idleGc: boolean): Promise<{ startKiB: number; growthKiB: number; peakKiB: number }> {
  const saved = process.env.TUIC_PTY_IDLE_GC;
  if (!idleGc) process.env.TUIC_PTY_IDLE_GC = '0';
  let tuicd: Awaited<ReturnType<typeof startTuicd>>;
  try {
    tuicd = await startTuicd();
  } finally {
    if (saved === undefined) delete process.env.TUIC_PTY_IDLE_GC;
    else process.env.TUIC_PTY_IDLE_GC = saved;
  }
  try {
    const socket = tuicd.socketPath;
    const runAll = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      await inBatches(
        Array.from({ length: count }, (_, i) => i),
        C.CHURN_CONCURRENT,
        async () => {
          const id = await createSession(socket, '/bin/sh', ['-c', `cat '${file}'`]);
          ids.push(id);
          for (;;) {
            await sleep(100);
            if (!(await listSessions(socket)).some((s) => s.session_id === id)) break;
          }
        },
      );
      return ids;
    };
    for (const id of await runAll(1)) await deleteSession(socket, id);
    await sleep(C.WARM_SETTLE_MS);
    const host = ptyHostPid(tuicd.pid);
    if (host === undefined) throw new Error('no pty host under tuicd after the warm-up session');
    const start = rssKiB(host) ?? 0;
    let peak = start;
    const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(host) ?? 0)), C.RSS_SAMPLE_MS);
    try {
      const ids = await runAll(sessions);
      // What the supervisor does when a closed session's tombstone expires.
      await inBatches(ids, C.DELETE_CONCURRENCY, (id) => deleteSession(socket, id));
      await sleep(C.CHURN_SETTLE_MS);
    } finally {
      clearInterval(sampler);
    }
    const end = rssKiB(host);
    if (end === undefined) throw new Error('the pty host is gone after the churn');
    return { startKiB: start, growthKiB: end - start, peakKiB: peak - start };
  } finally {
    await tuicd.stop();
  }
}

export const run: BenchModule = async (ctx) => {
  const perl = which(STEADY_PRINTER.command);
  const tmux = which('tmux');
  const sessions = ctx.quick ? C.SESSIONS_QUICK : C.SESSIONS;
  const idleSessions = ctx.quick ? C.IDLE_SESSIONS_QUICK : C.IDLE_SESSIONS;
  const windowMs = ctx.quick ? C.WINDOW_MS_QUICK : C.WINDOW_MS;
  const churn = ctx.quick ? C.CHURN_SESSIONS_QUICK : C.CHURN_SESSIONS;
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-bench-mem-'));
  const file = join(dir, 'one-mb.txt');
  writeFileSync(file, `${'m'.repeat(99)}\n`.repeat(C.CHURN_BYTES / 100));
  const only = process.env['TUICD_BENCH_MEMORY_KINDS']?.split(',').map((k) => k.trim());
  const wanted = (kind: string) => only === undefined || only.includes(kind);
  const b = ctx.baseline;
  const baseline = b === undefined ? undefined : 'error' in b ? { label: b.label, error: b.error } : { label: b.label, mainPath: b.mainPath };
  const client = LoadClient.start();
  const allKinds = [
    {
      kind: 'busy',
      label: `${sessions} shells × ~20 KB/s, ${windowMs / 1000} s`,
      command: perl,
      args: STEADY_PRINTER.args,
      window: windowMs,
      pick: 'peak',
      count: sessions,
    },
    {
      kind: 'idle',
      label: `${idleSessions} shells at a prompt`,
      command: '/bin/sh',
      args: IDLE_SCRIPT,
      window: C.IDLE_WINDOW_MS,
      pick: 'median',
      count: idleSessions,
    },
  ] as const;
  const kinds = allKinds.filter((k) => wanted(k.kind));
  const per = new Map<string, { values: number[]; errors: string[] }>();
  const add = (key: string, f: () => Promise<number>) => async () => {
    const slot = per.get(key) ?? { values: [], errors: [] };
    per.set(key, slot);
    try {
      slot.values.push(await f());
    } catch (err) {
      slot.errors.push(errorText(err));
    }
  };
  const back = {
    on: [] as Array<{ growthKiB: number; startKiB: number; peakKiB: number }>,
    off: [] as Array<{ growthKiB: number; startKiB: number; peakKiB: number }>,
    errors: [] as string[],
  };
  try {
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      for (const k of kinds) {
        if (k.command === undefined) continue;
        // Each process's part, of tuicd ('') and of the baseline build ('baseline-'): the pty host's is the steady one.
        const sharesOf = (prefix: string) => (supervisor: number, host: number) => {
          for (const [who, v] of [
            ['supervisor', supervisor],
            ['host', host],
          ] as const) {
            const slot = per.get(`${k.kind}:${prefix}${who}`) ?? { values: [], errors: [] };
            per.set(`${k.kind}:${prefix}${who}`, slot);
            slot.values.push(v);
          }
        };
        const tuicdSteps = [add(`${k.kind}:tuicd`, () => tuicdPerSession(k.command!, [...k.args], k.count, k.window, k.pick, undefined, sharesOf('')))];
        if (baseline !== undefined && 'mainPath' in baseline) {
          const main = baseline.mainPath;
          tuicdSteps.push(add(`${k.kind}:baseline`, () => tuicdPerSession(k.command!, [...k.args], k.count, k.window, k.pick, main, sharesOf('baseline-'))));
        }
        const steps = [
          async () => {
            for (const step of tuicdSteps) await step();
          },
          add(`${k.kind}:bare`, () => barePerSession(client, k.command!, [...k.args], k.count, k.window)),
          ...(tmux ? [add(`${k.kind}:tmux`, () => tmuxPerSession(tmux, k.command!, [...k.args], k.count, k.window, k.pick))] : []),
        ];
        // The order rotates, so no peer always runs on the machine the previous one left.
        for (let i = 0; i < steps.length; i++) await steps[(rep + i) % steps.length]!();
      }
      for (const on of !wanted('churn') ? [] : rep % 2 === 0 ? [true, false] : [false, true]) {
        try {
          (on ? back.on : back.off).push(await memoryBack(file, churn, on));
        } catch (err) {
          back.errors.push(errorText(err));
        }
      }
    }
  } finally {
    await client.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rowsFor(ctx, { sessions, churn, perl, tmux, kinds, per, back, baseline, churned: wanted('churn') });
};

function rowsFor(
  ctx: BenchContext,
  r: {
    sessions: number;
    churn: number;
    perl: string | undefined;
    tmux: string | undefined;
    kinds: ReadonlyArray<{ kind: string; label: string; command: string | undefined }>;
    per: Map<string, { values: number[]; errors: string[] }>;
    back: {
      on: Array<{ growthKiB: number; startKiB: number; peakKiB: number }>;
      off: Array<{ growthKiB: number; startKiB: number; peakKiB: number }>;
      errors: string[];
    };
    baseline: { label: string; mainPath?: string; error?: string } | undefined;
    churned: boolean;
  },
): BenchRow[] {
  const rows: BenchRow[] = [];
  const unit = 'KiB per session (lower is better)';
  for (const k of r.kinds) {
    const group = `memory per ${k.kind} session (${k.label})`;
    if (k.command === undefined) {
      rows.push(failedRow(group, 'tuicd', ctx, unit, 'perl not found: the steady printer needs it (Debian: perl-base)'));
      continue;
    }
    const get = (who: string) => r.per.get(`${k.kind}:${who}`);
    const tmuxSlot = get('tmux');
    const bareSlot = get('bare');
    const tuicdSlot = get('tuicd');
    const tmuxMedian = tmuxSlot?.values.length ? median(tmuxSlot.values) : undefined;
    const bareMedian = bareSlot?.values.length ? median(bareSlot.values) : undefined;
    if (!r.tmux) rows.push(failedRow(group, 'tmux server (per pane)', ctx, unit, 'tmux not found (apt-get install tmux: a bench-only peer)'));
    else if (tmuxMedian === undefined) rows.push(failedRow(group, 'tmux server (per pane)', ctx, unit, tmuxSlot?.errors[0] ?? 'no runs'));
    else
      rows.push(
        withNote(
          row(group, 'tmux server (per pane)', ctx, unit, tmuxSlot!.values),
          'tmux 3 defaults (history-limit 2000); RSS of the server over it with one quiet window',
        ),
      );
    if (bareMedian === undefined) rows.push(failedRow(group, 'bare node-pty process', ctx, unit, bareSlot?.errors[0] ?? 'no runs'));
    else
      rows.push(withNote(row(group, 'bare node-pty process', ctx, unit, bareSlot!.values), 'one process holding the PTYs, reading Buffers and dropping them'));
    if (!tuicdSlot?.values.length) {
      rows.push(failedRow(group, 'tuicd (supervisor + pty host)', ctx, unit, tuicdSlot?.errors[0] ?? 'no runs'));
      continue;
    }
    const m = median(tuicdSlot.values);
    const baseSlot = get('baseline');
    const baseMedian = baseSlot?.values.length ? median(baseSlot.values) : undefined;
    if (r.baseline !== undefined) {
      if (baseMedian === undefined) rows.push(failedRow(group, r.baseline.label, ctx, unit, r.baseline.error ?? baseSlot?.errors[0] ?? 'no runs'));
      else rows.push(withNote(row(group, r.baseline.label, ctx, unit, baseSlot!.values), 'the same measurement of that build, right after tuicd'));
    }
    const notes = [`RSS of tuicd and its pty host over the same with no session`];
    if (baseMedian !== undefined) notes.push(`${fmt(m / baseMedian)}× ${r.baseline!.label}`);
    if (bareMedian !== undefined) notes.push(`${fmt(m / bareMedian)}× the bare node-pty process`);
    if (tmuxMedian !== undefined) notes.push(`goal ${k.kind === 'busy' ? '≤ 1.0×' : '≤ 3×'} tmux: ${fmt(m / tmuxMedian)}×`);
    for (const [who, label] of [
      ['host', 'tuicd: pty host part'],
      ['supervisor', 'tuicd: supervisor part'],
    ] as const) {
      const slot = get(who);
      const baseSlot = get(`baseline-${who}`);
      const partNote = 'that process alone (median of its samples over the window, over its RSS with no session)';
      if (baseSlot?.values.length && r.baseline !== undefined)
        rows.push(withNote(row(group, `${r.baseline.label}: ${label.slice('tuicd: '.length)}`, ctx, unit, baseSlot.values), partNote));
      if (!slot?.values.length) continue;
      const vsBase = baseSlot?.values.length ? `; ${fmt(median(slot.values) / median(baseSlot.values))}× ${r.baseline?.label ?? 'the baseline'}'s` : '';
      rows.push(
        withNote(
          row(group, label, ctx, unit, slot.values, tmuxMedian === undefined ? undefined : { name: 'tmux server (per pane)', median: tmuxMedian }),
          `${partNote}${vsBase}`,
        ),
      );
    }
    rows.push(
      withNote(
        row(
          group,
          'tuicd (supervisor + pty host)',
          ctx,
          unit,
          tuicdSlot.values,
          tmuxMedian === undefined ? undefined : { name: 'tmux server (per pane)', median: tmuxMedian },
        ),
        notes.join('; '),
      ),
    );
  }
  if (!r.churned) return rows;
  const group = `pty host RSS over its start after ${r.churn} sessions × 1 MB ended and their tombstones expired (${C.CHURN_SETTLE_MS / 1000} s later)`;
  const mbUnit = 'MB (lower is better)';
  const growth = (xs: Array<{ growthKiB: number }>) => xs.map((x) => x.growthKiB / KIB_PER_MB);
  const off = growth(r.back.off);
  const on = growth(r.back.on);
  if (off.length === 0) rows.push(failedRow(group, 'tuicd, idle collection off (TUIC_PTY_IDLE_GC=0)', ctx, mbUnit, r.back.errors[0] ?? 'no runs'));
  else rows.push(row(group, 'tuicd, idle collection off (TUIC_PTY_IDLE_GC=0)', ctx, mbUnit, off));
  if (on.length === 0) rows.push(failedRow(group, 'tuicd', ctx, mbUnit, r.back.errors[0] ?? 'no runs'));
  else {
    const startMb = median(r.back.on.map((x) => x.startKiB)) / KIB_PER_MB;
    const ratios = r.back.on.map((x) => (x.startKiB + x.growthKiB) / x.startKiB);
    const under = on.filter((g) => g <= C.GOAL_BACK_MB).length;
    rows.push(
      withNote(
        row(group, 'tuicd', ctx, mbUnit, on, off.length ? { name: 'tuicd, idle collection off (TUIC_PTY_IDLE_GC=0)', median: median(off) } : undefined),
        `goal ≤ +${C.GOAL_BACK_MB} MB: ${median(on) <= C.GOAL_BACK_MB ? 'met' : 'MISSED'} on the median, ${under} of ${on.length} repetitions; end/start RSS ${fmt(median(ratios))}× (start ${fmt(startMb)} MB); peak +${fmt(median(r.back.on.map((x) => x.peakKiB)) / KIB_PER_MB)} MB`,
      ),
    );
  }
  return rows;
}
