/**
 * Sessions at scale and under a stalled viewer (issue #3 "Benchmarks"):
 * - 200 sessions each printing ~20 KB/s: how late tuicd answers `GET /health` (a proxy for its
 *   event-loop lag, timed from a separate client process) against the same tuicd with 0 sessions,
 *   and tuicd's RSS per session against a bare node-pty process holding as many PTYs;
 * - a viewer that stops reading while its session floods: tuicd's RSS growth against the same flood
 *   watched by a viewer that keeps reading, on uWS (forced) and on the node engine (node:http + ws,
 *   the fallback where no uWS build loads; issue 13 asks that it keep memory bounded too).
 * tuicd is a fresh process (unix socket only) for every measurement that reads its RSS, so one
 * run's heap growth is never charged to the next.
 */
import { readFileSync } from 'node:fs';

import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { LoadClient } from './sessions/clientProc.js';
import { SHELL, STEADY_PRINTER, steadyPrinterPath, YES_FLOOD } from './sessions/scripts.js';
import { fmt, goal, percentile } from './sessions/stats.js';
import {
  childPids,
  createSession,
  deleteSession,
  inBatches,
  listSessions,
  ptyHostPid,
  rssKiB,
  rssSampler,
  sleep,
  startTuicd,
  type TuicdUnderTest,
} from './sessions/tuicd.js';
import type { TuicdEngine } from '../http/engines.js';

const ScaleBenchConstants = {
  /** The issue's figure: 200 sessions, each ~20 KB/s. */
  SESSIONS: 200,
  /** Measuring window with and without sessions (--quick: shorter, same session count). */
  WINDOW_MS: 10_000,
  WINDOW_MS_QUICK: 3_000,
  /** Sessions run this long before the window opens (every one has printed, buffers have grown). */
  SETTLE_MS: 1_500,
  /** Throw-away /health probing first: JIT in tuicd and the client. */
  HEALTH_WARMUP_MS: 1_000,
  /** The issue's probe: one GET /health every 20 ms. */
  HEALTH_INTERVAL_MS: 20,
  /** How often RSS is read during a window. */
  RSS_SAMPLE_MS: 100,
  /** Sessions created / deleted concurrently (the pty host spawns them one by one anyway). */
  CREATE_CONCURRENCY: 4,
  DELETE_CONCURRENCY: 8,
  /** Issue #3: event-loop lag p99 < 10 ms. */
  GOAL_LAG_P99_MS: 10,
  /** Flood length with a stalled / reading viewer (issue: "8 s"). */
  FLOOD_MS: 8_000,
  FLOOD_MS_QUICK: 3_000,
  /** Issue #3: ≤ 2 MB held for a stalled viewer, beyond what a reading viewer costs. */
  GOAL_STALL_MB: 2,
  /** After the session is deleted, a resumed viewer gets this long to read what is left. */
  VIEWER_CLOSE_WAIT_MS: 5_000,
  /** Slack on top of a client command's own length before it counts as hung. */
  CALL_SLACK_MS: 60_000,
} as const;

const KIB_PER_MB = 1000 / 1.024; // RSS is read in KiB; rows are in 10^6 bytes

/** Processes the pty host started (the sessions), so their end can be checked after tuicd stops. */
function sessionProcesses(tuicd: TuicdUnderTest): number[] {
  const host = ptyHostPid(tuicd.pid);
  return host === undefined ? [] : childPids(host);
}

/** A session process that still runs (a zombie waiting for a reaper has ended: it holds nothing). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** How long session processes get to go after tuicd stopped (the host hangs them up on its way out). */
const REAP_WAIT_MS = 3_000;

/** Stops tuicd; SIGKILLs (and counts) any session process still running a few seconds later. */
async function stopAndReap(tuicd: TuicdUnderTest, sessionPids: number[]): Promise<number> {
  await tuicd.stop();
  const deadline = performance.now() + REAP_WAIT_MS;
  while (sessionPids.some(running) && performance.now() < deadline) await sleep(100);
  let survivors = 0;
  for (const pid of sessionPids.filter(running)) {
    survivors++;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return survivors;
}

/** Session processes that outlived their tuicd in the current measurement (a server-side problem if not 0). */
let survivorsSeen = 0;

// ---------------------------------------------------------------------------------------------
// 200 sessions × ~20 KB/s.

interface ScaleRep {
  idleP50: number;
  idleP99: number;
  loadedP50: number;
  loadedP99: number;
  clientLoopP99Ms: number;
  supervisorKiBPerSession: number;
  hostKiBPerSession: number | undefined;
  /** Output bytes/s per session tuicd counted during the window. */
  perSessionRate: number;
  liveAtEnd: number;
  createSeconds: number;
  healthProblems: number;
  /** The HTTP engine tuicd picked (its start line). */
  engine: string | undefined;
}

async function scaleOnce(client: LoadClient, perl: string, windowMs: number): Promise<ScaleRep> {
  const c = ScaleBenchConstants;
  const tuicd = await startTuicd();
  let pids: number[] = [];
  const ids: string[] = [];
  try {
    const sock = tuicd.socketPath;
    // One session that comes and goes: the pty host now runs, and its start-up is not charged to the 200.
    const warm = await createSession(sock, perl, STEADY_PRINTER.args);
    await sleep(300);
    await deleteSession(sock, warm);
    await client.call({ op: 'health', socket: sock, intervalMs: c.HEALTH_INTERVAL_MS, durationMs: c.HEALTH_WARMUP_MS }, c.HEALTH_WARMUP_MS + c.CALL_SLACK_MS);
    const idle = await client.call({ op: 'health', socket: sock, intervalMs: c.HEALTH_INTERVAL_MS, durationMs: windowMs }, windowMs + c.CALL_SLACK_MS);

    const hostPid = ptyHostPid(tuicd.pid);
    const supBefore = rssKiB(tuicd.pid);
    const hostBefore = hostPid === undefined ? undefined : rssKiB(hostPid);
    const t0 = performance.now();
    await inBatches(
      Array.from({ length: c.SESSIONS }, (_, i) => i),
      c.CREATE_CONCURRENCY,
      async () => ids.push(await createSession(sock, perl, STEADY_PRINTER.args)),
    );
    const createSeconds = (performance.now() - t0) / 1000;
    pids = sessionProcesses(tuicd);
    await sleep(c.SETTLE_MS);

    const written0 = await totalWritten(sock);
    const w0 = performance.now();
    const sup = rssSampler(tuicd.pid, c.RSS_SAMPLE_MS);
    const host = rssSampler(hostPid, c.RSS_SAMPLE_MS);
    const loaded = await client.call({ op: 'health', socket: sock, intervalMs: c.HEALTH_INTERVAL_MS, durationMs: windowMs }, windowMs + c.CALL_SLACK_MS);
    const supMax = sup.stop();
    const hostMax = host.stop();
    const written1 = await totalWritten(sock);
    const seconds = (performance.now() - w0) / 1000;
    const live = (await listSessions(sock)).length;

    if (supBefore === undefined || supMax === undefined) throw new Error('could not read tuicd RSS from /proc');
    return {
      idleP50: percentile(idle.samples, 50),
      idleP99: percentile(idle.samples, 99),
      loadedP50: percentile(loaded.samples, 50),
      loadedP99: percentile(loaded.samples, 99),
      clientLoopP99Ms: loaded.clientLoopP99Ms,
      supervisorKiBPerSession: (supMax - supBefore) / c.SESSIONS,
      hostKiBPerSession: hostBefore === undefined || hostMax === undefined ? undefined : (hostMax - hostBefore) / c.SESSIONS,
      perSessionRate: (written1 - written0) / seconds / c.SESSIONS,
      liveAtEnd: live,
      createSeconds,
      healthProblems: idle.errors + idle.non2xx + loaded.errors + loaded.non2xx,
      engine: tuicd.engine?.name,
    };
  } finally {
    await inBatches(ids, c.DELETE_CONCURRENCY, (id) => deleteSession(tuicd.socketPath, id).catch(() => undefined));
    const survivors = await stopAndReap(tuicd, pids);
    if (survivors > 0) survivorsSeen += survivors;
  }
}

async function totalWritten(sock: string): Promise<number> {
  return (await listSessions(sock)).reduce((sum, s) => sum + s.total_written, 0);
}

async function measureScale(ctx: BenchContext, client: LoadClient): Promise<BenchRow[]> {
  const c = ScaleBenchConstants;
  const group = `${c.SESSIONS} sessions × ~${Math.round(STEADY_PRINTER.bytesPerSecond / 1000)} KB/s`;
  const latencyUnit = 'ms (lower is better)';
  const memUnit = 'KiB per session (lower is better)';
  const perl = steadyPrinterPath();
  if (!perl) return [failedRow(group, 'tuicd', ctx, latencyUnit, 'perl not found: the steady printer needs it (Debian: perl-base)')];
  const windowMs = ctx.quick ? c.WINDOW_MS_QUICK : c.WINDOW_MS;
  const reps: ScaleRep[] = [];
  const bare: number[] = [];
  const errors: string[] = [];
  survivorsSeen = 0;
  for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
    try {
      reps.push(await scaleOnce(client, perl, windowMs));
    } catch (err) {
      errors.push(errorText(err));
    }
    try {
      const b = await client.call(
        {
          op: 'bareHold',
          command: perl,
          args: STEADY_PRINTER.args,
          sessions: c.SESSIONS,
          settleMs: c.SETTLE_MS,
          durationMs: windowMs,
          sampleMs: c.RSS_SAMPLE_MS,
        },
        c.SETTLE_MS + windowMs + c.CALL_SLACK_MS,
      );
      bare.push((b.rssMaxKiB - b.rssBeforeKiB) / c.SESSIONS);
    } catch (err) {
      errors.push(`bare node-pty: ${errorText(err)}`);
    }
  }

  const out: BenchRow[] = [];
  const failed = (variant: string, unit: string): BenchRow => failedRow(group, variant, ctx, unit, errors[0] ?? 'no run finished');
  const engines = [...new Set(reps.flatMap((r) => (r.engine ? [r.engine] : [])))];
  const engineNote = engines.length ? `; tuicd picked the ${engines.join(' / ')} HTTP engine` : '';
  const windowNote = `${(windowMs / 1000).toFixed(0)} s window, GET /health every ${c.HEALTH_INTERVAL_MS} ms from a separate client over the unix socket${engineNote}`;
  if (reps.length === 0) {
    out.push(failed('GET /health p99, 0 sessions', latencyUnit), failed(`GET /health p99, ${c.SESSIONS} sessions`, latencyUnit));
  } else {
    const pick = (f: (r: ScaleRep) => number): number[] => reps.map(f);
    const idle99 = pick((r) => r.idleP99);
    const idle50 = pick((r) => r.idleP50);
    out.push(withNote(row(group, 'GET /health p50, 0 sessions', ctx, latencyUnit, idle50), windowNote));
    out.push(
      withNote(
        row(
          group,
          `GET /health p50, ${c.SESSIONS} sessions`,
          ctx,
          latencyUnit,
          pick((r) => r.loadedP50),
          { name: '0 sessions p50', median: median(idle50) },
        ),
        'ratio = loaded / idle (lower is better)',
      ),
    );
    out.push(withNote(row(group, 'GET /health p99, 0 sessions', ctx, latencyUnit, idle99), windowNote));
    const loaded = row(
      group,
      `GET /health p99, ${c.SESSIONS} sessions`,
      ctx,
      latencyUnit,
      pick((r) => r.loadedP99),
      { name: '0 sessions p99', median: median(idle99) },
    );
    const problems = reps.reduce((s, r) => s + r.healthProblems, 0);
    out.push(
      withNote(
        loaded,
        [
          `proxy for event-loop lag p99 (goal < ${c.GOAL_LAG_P99_MS} ms: ${goal(loaded.median < c.GOAL_LAG_P99_MS)}); it also holds the client's own delays (client loop p99 ${fmt(median(pick((r) => r.clientLoopP99Ms)), 2)} ms) and the 200 printers' CPU`,
          `sessions printed ${fmt(median(pick((r) => r.perSessionRate)) / 1000, 3)} KB/s each (tuicd's count)`,
          `${median(pick((r) => r.liveAtEnd))} live at the end; creating ${c.SESSIONS} took ${fmt(median(pick((r) => r.createSeconds)), 2)} s`,
          problems ? `${problems} health requests failed` : '',
          errors.length ? `${errors.length} run(s) failed: ${errors[0]}` : '',
        ]
          .filter(Boolean)
          .join('; '),
      ),
    );
  }
  const bareName = 'bare node-pty process: RSS growth';
  if (bare.length === 0) out.push(failed(bareName, memUnit));
  else
    out.push(
      withNote(
        row(group, bareName, ctx, memUnit, bare),
        `one process spawning ${c.SESSIONS} node-ptys of the same printer, reading Buffers; max VmRSS in the window − before`,
      ),
    );
  const bareBaseline = bare.length ? { name: 'bare node-pty', median: median(bare) } : undefined;
  if (reps.length === 0) {
    out.push(failed('tuicd supervisor: RSS growth', memUnit));
  } else {
    out.push(
      withNote(
        row(
          group,
          'tuicd supervisor: RSS growth',
          ctx,
          memUnit,
          reps.map((r) => r.supervisorKiBPerSession),
          bareBaseline,
        ),
        `the tuicd process alone (/proc/<pid>/status VmRSS), max in the window − before the sessions, / ${c.SESSIONS}`,
      ),
    );
    const hostRuns = reps.filter((r) => r.hostKiBPerSession !== undefined);
    if (hostRuns.length) {
      out.push(
        withNote(
          row(
            group,
            'tuicd supervisor + pty host: RSS growth',
            ctx,
            memUnit,
            hostRuns.map((r) => r.supervisorKiBPerSession + r.hostKiBPerSession!),
            bareBaseline,
          ),
          `pty host alone ${fmt(median(hostRuns.map((r) => r.hostKiBPerSession!)), 3)} KiB/session`,
        ),
      );
    }
  }
  if (survivorsSeen > 0)
    out.push(
      failedRow(
        group,
        'session processes after tuicd stopped',
        ctx,
        'processes',
        `${survivorsSeen} session process(es) still ran ${REAP_WAIT_MS / 1000} s after their session was deleted and tuicd stopped (killed by the bench)`,
      ),
    );
  return out;
}

// ---------------------------------------------------------------------------------------------
// Stalled viewer.

interface StallRun {
  supervisorGrowthKiB: number;
  hostGrowthKiB: number | undefined;
  /** Bytes the session produced during the flood (the PTY must not wait for the stalled viewer). */
  produced: number;
  sessionAlive: boolean;
  viewerBytes: number;
  resyncs: number;
  viewerEnded: string | undefined;
}

async function stallOnce(client: LoadClient, engine: TuicdEngine, stalled: boolean, floodMs: number): Promise<StallRun> {
  const c = ScaleBenchConstants;
  const tuicd = await startTuicd(engine);
  let pids: number[] = [];
  let id: string | undefined;
  let handle: number | undefined;
  try {
    const sock = tuicd.socketPath;
    id = await createSession(sock, SHELL, ['-c', YES_FLOOD]);
    pids = sessionProcesses(tuicd);
    handle = (await client.call({ op: 'viewerOpen', socket: sock, sessionId: id }, c.CALL_SLACK_MS)).handle;
    await sleep(300);
    const hostPid = ptyHostPid(tuicd.pid);
    const supBefore = rssKiB(tuicd.pid);
    const hostBefore = hostPid === undefined ? undefined : rssKiB(hostPid);
    const sup = rssSampler(tuicd.pid, c.RSS_SAMPLE_MS);
    const host = rssSampler(hostPid, c.RSS_SAMPLE_MS);
    await client.call({ op: 'viewerGo', handle, pause: stalled }, c.CALL_SLACK_MS);
    await sleep(floodMs);
    const supMax = sup.stop();
    const hostMax = host.stop();
    const listed = (await listSessions(sock)).find((s) => s.session_id === id);
    await deleteSession(sock, id);
    const closed = await client.call({ op: 'viewerClose', handle, waitMs: c.VIEWER_CLOSE_WAIT_MS }, c.VIEWER_CLOSE_WAIT_MS + c.CALL_SLACK_MS);
    handle = undefined;
    if (supBefore === undefined || supMax === undefined) throw new Error('could not read tuicd RSS from /proc');
    return {
      supervisorGrowthKiB: supMax - supBefore,
      hostGrowthKiB: hostBefore === undefined || hostMax === undefined ? undefined : hostMax - hostBefore,
      produced: listed?.total_written ?? 0,
      sessionAlive: listed !== undefined,
      viewerBytes: closed.bytes,
      resyncs: closed.frames['resync'] ?? 0,
      viewerEnded: closed.ended?.startsWith('socket error') ? closed.ended : undefined,
    };
  } finally {
    if (handle !== undefined) await client.call({ op: 'viewerClose', handle, waitMs: 0 }, c.CALL_SLACK_MS).catch(() => undefined);
    if (id !== undefined) await deleteSession(tuicd.socketPath, id).catch(() => undefined);
    const survivors = await stopAndReap(tuicd, pids);
    if (survivors > 0) survivorsSeen += survivors;
  }
}

/** One engine's stall runs, by repetition. */
interface StallSeries {
  reading: StallRun[];
  stalled: StallRun[];
  /** stalled − reading supervisor growth within one repetition, MB. */
  diffs: number[];
  errors: string[];
}

const mb = (kib: number): number => kib / KIB_PER_MB;
const supervisorMb = (runs: StallRun[]): number[] => runs.map((r) => mb(r.supervisorGrowthKiB));

async function measureStall(ctx: BenchContext, client: LoadClient): Promise<BenchRow[]> {
  const c = ScaleBenchConstants;
  const floodMs = ctx.quick ? c.FLOOD_MS_QUICK : c.FLOOD_MS;
  const group = `stalled viewer, session flooding (yes) for ${floodMs / 1000} s`;
  const unit = 'MB RSS growth (lower is better)';
  const engines: TuicdEngine[] = ['uws', 'node'];
  const all = new Map<TuicdEngine, StallSeries>(engines.map((e) => [e, { reading: [], stalled: [], diffs: [], errors: [] }]));
  survivorsSeen = 0;
  for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
    // Both viewers on both engines per repetition, each on a fresh tuicd; the order rotates so
    // neither viewer nor engine always runs first.
    const runs = engines.flatMap((engine) => [false, true].map((stalled) => ({ engine, stalled })));
    const got = new Map<string, StallRun>();
    for (let i = 0; i < runs.length; i++) {
      const { engine, stalled } = runs[(i + rep) % runs.length]!;
      const s = all.get(engine)!;
      // Where uWS cannot load, every attempt fails the same way: say it once.
      if (s.errors.some((e) => e.includes('uWS unavailable'))) continue;
      try {
        got.set(`${engine}/${stalled}`, await stallOnce(client, engine, stalled, floodMs));
      } catch (err) {
        s.errors.push(`${stalled ? 'stalled' : 'reading'}: ${errorText(err)}`);
      }
    }
    for (const engine of engines) {
      const s = all.get(engine)!;
      const reading = got.get(`${engine}/false`);
      const stalled = got.get(`${engine}/true`);
      if (reading) s.reading.push(reading);
      if (stalled) s.stalled.push(stalled);
      if (reading && stalled) s.diffs.push(mb(stalled.supervisorGrowthKiB - reading.supervisorGrowthKiB));
    }
  }

  const uws = all.get('uws')!;
  const out = stallRows(ctx, group, unit, '', uws);
  const hostRows = (runs: StallRun[]): number[] => runs.filter((x) => x.hostGrowthKiB !== undefined).map((x) => mb(x.hostGrowthKiB!));
  const hostReading = hostRows(uws.reading);
  const hostStalled = hostRows(uws.stalled);
  if (hostReading.length) out.push(withNote(row(group, 'reading viewer: pty host', ctx, unit, hostReading), 'for reference: the host does not see viewers'));
  if (hostStalled.length)
    out.push(
      row(
        group,
        'stalled viewer: pty host',
        ctx,
        unit,
        hostStalled,
        hostReading.length ? { name: 'reading viewer: pty host', median: median(hostReading) } : undefined,
      ),
    );
  out.push(...stallRows(ctx, group, unit, 'node engine: ', all.get('node')!, uws));
  if (survivorsSeen > 0)
    out.push(
      failedRow(
        group,
        'session processes after tuicd stopped',
        ctx,
        'processes',
        `${survivorsSeen} session process(es) still ran ${REAP_WAIT_MS / 1000} s after their session was deleted and tuicd stopped (killed by the bench)`,
      ),
    );
  return out;
}

/**
 * One engine's supervisor rows: reading, stalled, stalled − reading. For the node engine (`vsUws`
 * given) the reading and stalled rows' ratio is node engine / uWS; stalled / reading goes in the note.
 */
function stallRows(ctx: BenchContext, group: string, unit: string, prefix: string, s: StallSeries, vsUws?: StallSeries): BenchRow[] {
  const c = ScaleBenchConstants;
  const producedNote = (runs: StallRun[]): string =>
    `session produced ${fmt(median(runs.map((r) => r.produced)) / 1e6, 3)} MB${runs.every((r) => r.sessionAlive) ? '' : ` (session ended early in ${runs.filter((r) => !r.sessionAlive).length} run(s))`}`;
  const uwsBase = (runs: StallRun[] | undefined, what: string): { name: string; median: number } | undefined =>
    runs?.length ? { name: `${what} (uWS)`, median: median(supervisorMb(runs)) } : undefined;
  const noUwsRatio = vsUws ? `no ratio to uWS: ${vsUws.errors[0] ?? 'no run finished'}` : '';
  const out: BenchRow[] = [];
  const fail = (variant: string): BenchRow => failedRow(group, `${prefix}${variant}`, ctx, unit, s.errors[0] ?? 'no run finished');
  if (s.reading.length === 0) {
    out.push(fail('reading viewer: supervisor'));
  } else {
    const base = uwsBase(vsUws?.reading, 'reading viewer');
    const notes = [
      `${producedNote(s.reading)}; tuicd VmRSS max during the flood − before`,
      vsUws ? (base ? 'ratio = node engine / uWS (lower is better)' : noUwsRatio) : '',
    ];
    out.push(withNote(row(group, `${prefix}reading viewer: supervisor`, ctx, unit, supervisorMb(s.reading), base), notes.filter(Boolean).join('; ')));
  }
  if (s.stalled.length === 0) {
    out.push(fail('stalled viewer: supervisor'));
  } else {
    const ended = s.stalled.find((r) => r.viewerEnded)?.viewerEnded;
    const readingMedian = s.reading.length ? median(supervisorMb(s.reading)) : undefined;
    const base = vsUws ? uwsBase(vsUws.stalled, 'stalled viewer') : readingMedian === undefined ? undefined : { name: 'reading viewer', median: readingMedian };
    const r = row(group, `${prefix}stalled viewer: supervisor`, ctx, unit, supervisorMb(s.stalled), base);
    const notes = [
      vsUws ? (base ? 'ratio = node engine / uWS (lower is better)' : noUwsRatio) : 'ratio = stalled / reading (lower is better)',
      vsUws && readingMedian !== undefined ? `${fmt(r.median / readingMedian, 3)}× its reading viewer` : '',
      producedNote(s.stalled),
      `after resuming, the viewer got ${fmt(median(s.stalled.map((x) => x.viewerBytes)) / 1e6, 3)} MB and ${median(s.stalled.map((x) => x.resyncs))} resync frame(s)`,
      ended ? `RESUMED VIEWER BROKE: ${ended}` : '',
      s.errors.length ? `${s.errors.length} run(s) failed: ${s.errors[0]}` : '',
    ];
    out.push(withNote(r, notes.filter(Boolean).join('; ')));
  }
  if (s.diffs.length) {
    const d = row(group, `${prefix}stalled − reading: supervisor (same repetition)`, ctx, 'MB', s.diffs);
    // A spread relative to a median near 0 says nothing; the range does.
    d.spread = NaN;
    const uwsDiff = vsUws?.diffs.length ? `uWS: ${fmt(median(vsUws.diffs), 2)} MB` : '';
    out.push(
      withNote(
        d,
        [
          `goal ≤ ${c.GOAL_STALL_MB} MB: ${goal(d.median <= c.GOAL_STALL_MB)}; range ${fmt(Math.min(...s.diffs), 2)} … ${fmt(Math.max(...s.diffs), 2)} MB`,
          uwsDiff,
        ]
          .filter(Boolean)
          .join('; '),
      ),
    );
  }
  return out;
}

export const run: BenchModule = async (ctx) => {
  const client = LoadClient.start();
  try {
    const rows: BenchRow[] = [];
    rows.push(...(await measureScale(ctx, client)));
    rows.push(...(await measureStall(ctx, client)));
    return rows;
  } finally {
    await client.stop();
  }
};
