/**
 * 500 sessions (issue 29 item 5), 499 of them printing ~20 KB/s, against the same tuicd with none.
 * Per repetition, on a fresh tuicd: GET /health p99 (from a separate client, every 20 ms), both
 * event loops' delay p99 (the supervisor's and the pty host's, from GET /metrics) and keystroke echo
 * p50/p99 through one more session, first with no load, then with the 500 sessions running; and
 * the CPU both processes spent per MB the sessions printed while loaded (steadier on a shared machine).
 * Goals: /health p99 < 10 ms, both loops' p99 < 10 ms, echo p99 < 20 ms.
 *
 * `--baseline-ref R`: the build of R runs the same repetition on its own fresh tuicd right after the
 * current one, so each figure also gets a ratio to that build; the note gives the paired
 * per-repetition ratios (a pair shares the machine's state; the ratio column, median / median, does not).
 */

import { baselineEngine, requireUws } from '../baseline.js';
import { cpuSeconds } from '../http/children.js';
import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { LoadClient } from './sessions/clientProc.js';
import type { EchoSpec } from './sessions/protocol.js';
import { ECHO_SCRIPT, SHELL, STEADY_PRINTER, steadyPrinterPath } from './sessions/scripts.js';
import { fmt, goal, percentile } from './sessions/stats.js';
import { createSession, deleteSession, inBatches, listSessions, ptyHostPid, request, sleep, startTuicd } from './sessions/tuicd.js';

const Constants = {
  /** Printing sessions: with the echo session, 500, tuicd's default max_sessions. */
  SESSIONS: 499,
  SESSIONS_QUICK: 99,
  WINDOW_MS: 10_000,
  WINDOW_MS_QUICK: 3_000,
  /** Sessions print this long before the window opens; the loop-delay gauges cover the last 5–10 s. */
  SETTLE_MS: 6_000,
  SETTLE_MS_QUICK: 2_000,
  HEALTH_INTERVAL_MS: 20,
  CREATE_CONCURRENCY: 8,
  DELETE_CONCURRENCY: 16,
  ECHO: { keystrokes: 300, warmup: 20, gapMinMs: 5, gapMaxMs: 10 } satisfies EchoSpec,
  ECHO_QUICK: { keystrokes: 100, warmup: 10, gapMinMs: 5, gapMaxMs: 10 } satisfies EchoSpec,
  GOAL_LOOP_P99_MS: 10,
  GOAL_ECHO_P99_MS: 20,
  CALL_SLACK_MS: 60_000,
} as const;

interface Phase {
  healthP99: number;
  supervisorLoopP99: number;
  hostLoopP99: number;
  echoP50: number;
  echoP99: number;
}

interface Rep {
  idle: Phase;
  loaded: Phase;
  /** CPU ms per MB the sessions printed over the loaded phase: steadier than latencies on a shared machine. */
  supervisorCpuMsPerMb: number;
  hostCpuMsPerMb: number;
  perSessionRate: number;
  liveAtEnd: number;
}

async function loopDelays(sock: string): Promise<{ supervisor: number; host: number }> {
  const r = await request(sock, 'GET', '/metrics');
  const m = JSON.parse(r.body) as Record<string, unknown>;
  const supervisor = Number(m['event_loop_delay_p99_ms']);
  const host = Number(m['pty_host_event_loop_delay_p99_ms']);
  if (!Number.isFinite(supervisor) || !Number.isFinite(host)) throw new Error('GET /metrics lacks the event-loop delay gauges (an older build?)');
  return { supervisor, host };
}

async function totalWritten(sock: string): Promise<number> {
  return (await listSessions(sock)).reduce((sum, s) => sum + s.total_written, 0);
}

/** One build under test: the current one, or the --baseline-ref build (its main.js and engine flag). */
interface Variant {
  name: string;
  mainPath?: string;
  engine?: 'uws';
  reps: Rep[];
  errors: string[];
  /** Both sides of a baseline ratio run on uWS; a build that reports no engine gets this note instead. */
  engineNote?: string;
}

async function once(variant: Variant, client: LoadClient, perl: string, sessions: number, windowMs: number, settleMs: number, echo: EchoSpec): Promise<Rep> {
  const c = Constants;
  const tuicd = await startTuicd(variant.engine, variant.mainPath);
  const ids: string[] = [];
  try {
    const sock = tuicd.socketPath;
    if (variant.engine) variant.engineNote = await requireUws(variant.name, sock, tuicd.engine?.name);
    const echoId = await createSession(sock, SHELL, ['-c', ECHO_SCRIPT]);
    const phase = async (): Promise<Phase> => {
      const health = await client.call({ op: 'health', socket: sock, intervalMs: c.HEALTH_INTERVAL_MS, durationMs: windowMs }, windowMs + c.CALL_SLACK_MS);
      // Read right after the window: the gauges cover its last 5–10 s.
      const loops = await loopDelays(sock);
      const echoes = (await client.call({ op: 'echo', socket: sock, sessionId: echoId, ...echo }, c.CALL_SLACK_MS)).samples;
      return {
        healthP99: percentile(health.samples, 99),
        supervisorLoopP99: loops.supervisor,
        hostLoopP99: loops.host,
        echoP50: percentile(echoes, 50),
        echoP99: percentile(echoes, 99),
      };
    };
    // Warm-up: JIT in tuicd, the pty host and the client; the gauges fill their window.
    await client.call({ op: 'echo', socket: sock, sessionId: echoId, ...Constants.ECHO_QUICK }, c.CALL_SLACK_MS);
    await sleep(settleMs);
    const idle = await phase();
    await inBatches(
      Array.from({ length: sessions }, (_, i) => i),
      c.CREATE_CONCURRENCY,
      async () => ids.push(await createSession(sock, perl, STEADY_PRINTER.args)),
    );
    await sleep(settleMs);
    const hostPid = ptyHostPid(tuicd.pid);
    const cpu = (): [number, number] => [cpuSeconds(tuicd.pid) ?? NaN, hostPid === undefined ? NaN : (cpuSeconds(hostPid) ?? NaN)];
    const written0 = await totalWritten(sock);
    const cpu0 = cpu();
    const t0 = performance.now();
    const loaded = await phase();
    const cpu1 = cpu();
    const written1 = await totalWritten(sock);
    const seconds = (performance.now() - t0) / 1000;
    const mb = (written1 - written0) / 1e6;
    return {
      idle,
      loaded,
      supervisorCpuMsPerMb: ((cpu1[0] - cpu0[0]) * 1000) / mb,
      hostCpuMsPerMb: ((cpu1[1] - cpu0[1]) * 1000) / mb,
      perSessionRate: (written1 - written0) / seconds / sessions,
      liveAtEnd: (await listSessions(sock)).length - 1,
    };
  } finally {
    await inBatches(ids, c.DELETE_CONCURRENCY, (id) => deleteSession(tuicd.socketPath, id).catch(() => undefined));
    await tuicd.stop();
  }
}

/** "paired ratio median X× (range a–b×)" over the repetitions both variants finished. */
function pairedNote(current: Variant, base: Variant, pick: (r: Rep) => number): string {
  const n = Math.min(current.reps.length, base.reps.length);
  if (n === 0 || current.reps.length !== base.reps.length) return 'no pairs (a repetition failed): ratio of medians only';
  const pairs = current.reps.map((r, i) => pick(r) / pick(base.reps[i]!));
  return `paired per-repetition ratio to ${base.name}: median ${fmt(median(pairs))}×, range ${fmt(Math.min(...pairs))}–${fmt(Math.max(...pairs))}×`;
}

export const run: BenchModule = async (ctx: BenchContext) => {
  const c = Constants;
  const sessions = ctx.quick ? c.SESSIONS_QUICK : c.SESSIONS;
  const group = `${sessions + 1} sessions, ${sessions} printing ~${Math.round(STEADY_PRINTER.bytesPerSecond / 1000)} KB/s: both loops and echo`;
  const unit = 'ms (lower is better)';
  const perl = steadyPrinterPath();
  if (!perl) return [failedRow(group, 'tuicd', ctx, unit, 'perl not found: the steady printer needs it (Debian: perl-base)')];
  const windowMs = ctx.quick ? c.WINDOW_MS_QUICK : c.WINDOW_MS;
  const settleMs = ctx.quick ? c.SETTLE_MS_QUICK : c.SETTLE_MS;
  const b = ctx.baseline;
  // With a baseline both run on uWS, so the ratio compares builds, not engines.
  const current: Variant = { name: 'tuicd', reps: [], errors: [], ...(b ? { engine: 'uws' as const } : {}) };
  const older: Variant | undefined = b
    ? 'error' in b
      ? { name: b.label, reps: [], errors: [b.error] }
      : { name: b.label, mainPath: b.mainPath, ...(baselineEngine(b) ? { engine: 'uws' as const } : {}), reps: [], errors: [] }
    : undefined;
  const runnable = [current, ...(older && !(b && 'error' in b) ? [older] : [])];
  const client = LoadClient.start();
  try {
    for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
      // The baseline right after the current build in every repetition: the two values pair up.
      const done = new Map<Variant, Rep>();
      for (const v of runnable) {
        try {
          done.set(v, await once(v, client, perl, sessions, windowMs, settleMs, ctx.quick ? c.ECHO_QUICK : c.ECHO));
        } catch (err) {
          v.errors.push(errorText(err));
        }
      }
      // Keep only complete pairs, so the paired ratios line up by repetition.
      if (done.size === runnable.length) for (const [v, r] of done) v.reps.push(r);
    }
  } finally {
    await client.stop();
  }
  if (current.reps.length === 0)
    return [failedRow(group, `tuicd, ${sessions} sessions`, ctx, unit, current.errors[0] ?? older?.errors[0] ?? 'no run finished')];
  const out: BenchRow[] = [];
  const rate = median(current.reps.map((r) => r.perSessionRate));
  const live = Math.min(...current.reps.map((r) => r.liveAtEnd));
  const loadNote = `${fmt(rate / 1000, 3)} KB/s per session measured, ${live} of ${sessions} alive at the end${ctx.quick ? ' (--quick: fewer sessions)' : ''}`;
  const figures: Array<[string, (p: Phase) => number, number | undefined]> = [
    ['GET /health p99', (p) => p.healthP99, c.GOAL_LOOP_P99_MS],
    ['supervisor event-loop delay p99', (p) => p.supervisorLoopP99, c.GOAL_LOOP_P99_MS],
    ['pty host event-loop delay p99', (p) => p.hostLoopP99, c.GOAL_LOOP_P99_MS],
    ['keystroke echo p50', (p) => p.echoP50, undefined],
    ['keystroke echo p99', (p) => p.echoP99, c.GOAL_ECHO_P99_MS],
  ];
  const base = older?.reps.length ? older : undefined;
  for (const [name, pick, goalMs] of figures) {
    const idle = current.reps.map((r) => pick(r.idle));
    const loaded = current.reps.map((r) => pick(r.loaded));
    const notes: string[] = [];
    if (base) {
      const baseIdle = base.reps.map((r) => pick(r.idle));
      const baseLoaded = base.reps.map((r) => pick(r.loaded));
      out.push(row(group, `${base.name}: ${name}, no load`, ctx, unit, baseIdle));
      out.push(withNote(row(group, `${base.name}: ${name}, ${sessions} sessions`, ctx, unit, baseLoaded), base.engineNote));
      out.push(
        withNote(
          row(group, `${name}, no load`, ctx, unit, idle, { name: `${base.name}: ${name}, no load`, median: median(baseIdle) }),
          `ratio = tuicd / ${base.name}; ${pairedNote(current, base, (r) => pick(r.idle))}`,
        ),
      );
      notes.push(`ratio = tuicd / ${base.name} (lower is better); ${pairedNote(current, base, (r) => pick(r.loaded))}`);
      notes.push(`loaded / no load: ${fmt(median(loaded) / median(idle))}×`);
    } else {
      out.push(row(group, `${name}, no load`, ctx, unit, idle));
      notes.push('ratio = loaded / no load (lower is better)');
    }
    const vs = base
      ? { name: `${base.name}: ${name}, ${sessions} sessions`, median: median(base.reps.map((r) => pick(r.loaded))) }
      : { name: `${name}, no load`, median: median(idle) };
    const r = row(group, `${name}, ${sessions} sessions`, ctx, unit, loaded, vs);
    if (goalMs !== undefined) notes.push(`goal < ${goalMs} ms: ${goal(r.median < goalMs)}`);
    if (name === 'GET /health p99') {
      notes.push(loadNote);
      if (current.engineNote) notes.push(current.engineNote);
      if (older && !base) notes.push(`no baseline figures: ${older.errors[0] ?? 'no repetition finished'}`);
    }
    const errors = [...current.errors, ...(older?.errors ?? [])];
    if (errors.length) notes.push(`${errors.length} run(s) failed: ${errors[0]}`);
    out.push(withNote(r, notes.join('; ')));
  }
  const cpuUnit = 'CPU ms/MB (lower is better)';
  const cpuFigures: Array<[string, (r: Rep) => number]> = [
    ['supervisor CPU per MB printed', (r) => r.supervisorCpuMsPerMb],
    ['pty host CPU per MB printed', (r) => r.hostCpuMsPerMb],
  ];
  for (const [name, pick] of cpuFigures) {
    const variant = `${name}, ${sessions} sessions`;
    if (base) out.push(row(group, `${base.name}: ${variant}`, ctx, cpuUnit, base.reps.map(pick)));
    const r = row(
      group,
      variant,
      ctx,
      cpuUnit,
      current.reps.map(pick),
      base ? { name: `${base.name}: ${variant}`, median: median(base.reps.map(pick)) } : undefined,
    );
    out.push(
      withNote(r, base ? `ratio = tuicd / ${base.name}; ${pairedNote(current, base, pick)}` : 'over the loaded phase (the /health window and the echo run)'),
    );
  }
  return out;
};
