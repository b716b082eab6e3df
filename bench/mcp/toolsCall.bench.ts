/**
 * `tools/call session list` over TCP: tuicd (Basic Auth, its own process) against a bare SDK server
 * (McpServer + StreamableHTTPServerTransport on node:http, one equivalent tool), in the same run.
 * Sequential latency p50/p99 and throughput with 16 concurrent callers, each driven two ways: a raw
 * keep-alive HTTP generator with pre-built request bytes (the client is not the limit) and the SDK
 * Client (what an agent's client sees). Server CPU per request from /proc/<pid>/stat.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { cpuSeconds, runToEnd } from '../http/children.js';
import type { ToolsCallLoadResult } from './toolsCallShared.js';
import { startMcpTargets, stopMcpTargets, type McpTarget, type McpVariant, type StartedMcp } from './toolsCallTargets.js';

const DURATIONS = {
  full: { warmupMs: 500, durationMs: 3000 },
  quick: { warmupMs: 200, durationMs: 1000 },
};
const CONCURRENT_CALLERS = 16;
/** The issue's goals: tuicd answers ≥ 2× the bare SDK server's tools/call throughput, at ≤ 0.3 ms server CPU per call. */
const GOAL_THROUGHPUT_RATIO = 2;
const GOAL_CPU_MS_PER_CALL = 0.3;
const RUN_SLACK_MS = 15_000;
const VARIANTS: McpVariant[] = ['bare SDK', 'tuicd'];

type DriverKind = 'raw HTTP' | 'SDK Client';
type Mode = 'sequential' | 'concurrent';

/** One measured run: the driver's figures plus the server CPU used meanwhile. */
interface Run {
  load: ToolsCallLoadResult;
  serverCpuMsPerCall: number | undefined;
}

/** Per variant, driver and mode, one entry per repetition. */
interface Series {
  p50: number[];
  p99: number[];
  rps: number[];
  cpuMs: number[];
  clientCpu: number[];
  notes: Set<string>;
  error?: string;
}

async function drive(t: McpTarget, driver: DriverKind, mode: Mode, d: { warmupMs: number; durationMs: number }): Promise<Run> {
  const n = mode === 'sequential' ? 1 : CONCURRENT_CALLERS;
  const headerArgs = (driver === 'raw HTTP' ? t.sessionHeaders : t.authHeaders).flatMap((h) => ['--header', h]);
  const timing = ['--warmup-ms', String(d.warmupMs), '--duration-ms', String(d.durationMs)];
  const args =
    driver === 'raw HTTP'
      ? [fileURLToPath(new URL('./toolsCallLoadgen.js', import.meta.url)), '--port', String(t.port), '--connections', String(n), ...headerArgs, ...timing]
      : [
          fileURLToPath(new URL('./toolsCallSdkDriver.js', import.meta.url)),
          '--url',
          `http://127.0.0.1:${t.port}/mcp`,
          '--callers',
          String(n),
          ...headerArgs,
          ...timing,
        ];
  const pid = t.proc.child.pid!;
  const cpu0 = cpuSeconds(pid);
  const out = await runToEnd(process.execPath, args, d.warmupMs + d.durationMs + RUN_SLACK_MS);
  const cpu1 = cpuSeconds(pid);
  if (out.code !== 0) throw new Error(`${driver} driver exited with code ${out.code}: ${out.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const load = JSON.parse(out.stdout.trim().split('\n').pop()!) as ToolsCallLoadResult;
  if (load.requests === 0) throw new Error(`no answers${load.firstProblem ? `: ${load.firstProblem}` : ''}`);
  // The SDK driver's own session set-up (initialize, GET stream) is in the window too: a few requests in thousands.
  const serverCpuMsPerCall = cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / load.totalRequests;
  return { load, serverCpuMsPerCall };
}

export const run: BenchModule = async (ctx) => {
  const d = ctx.quick ? DURATIONS.quick : DURATIONS.full;
  const tmp = await mkdtemp(join(tmpdir(), 'tuicd-bench-mcp-'));
  const removeTmp = (): void => rmSync(tmp, { recursive: true, force: true });
  process.once('exit', removeTmp);
  let started: StartedMcp[] = [];
  try {
    started = await startMcpTargets(tmp);
    const rows: BenchRow[] = [];
    for (const driver of ['raw HTTP', 'SDK Client'] as const) {
      const series = await measureAll(ctx, started, driver, d);
      rows.push(...rowsFor(ctx, driver, started, series));
    }
    return rows;
  } finally {
    await stopMcpTargets(started);
    process.removeListener('exit', removeTmp);
    await rm(tmp, { recursive: true, force: true });
  }
};

const key = (v: McpVariant, mode: Mode): string => `${v}/${mode}`;

/** Variants interleave within each repetition (the order rotates) so drift hits them alike; one warm-up run each first. */
async function measureAll(
  ctx: BenchContext,
  started: StartedMcp[],
  driver: DriverKind,
  d: { warmupMs: number; durationMs: number },
): Promise<Map<string, Series>> {
  const out = new Map<string, Series>();
  const targets = started.flatMap((s) => (s.ok ? [s.target] : []));
  for (const t of targets)
    for (const mode of ['sequential', 'concurrent'] as const)
      out.set(key(t.name, mode), { p50: [], p99: [], rps: [], cpuMs: [], clientCpu: [], notes: new Set() });
  const attempt = async (t: McpTarget, mode: Mode, record: boolean): Promise<void> => {
    const s = out.get(key(t.name, mode))!;
    if (s.error) return;
    try {
      const r = await drive(t, driver, mode, record ? d : { warmupMs: 0, durationMs: d.warmupMs * 2 });
      if (r.load.bad > 0)
        s.error = `${t.name}: ${r.load.bad} of ${r.load.requests} answers were errors (${r.load.firstProblem ?? '?'}): the figure would measure an error path`;
      if (!record || s.error) return;
      s.p50.push(r.load.p50Ms);
      s.p99.push(r.load.p99Ms);
      s.rps.push(r.load.rps);
      if (r.serverCpuMsPerCall !== undefined) s.cpuMs.push(r.serverCpuMsPerCall);
      s.clientCpu.push(r.load.clientCpu);
      if (r.load.errors > 0) s.notes.add(`${r.load.errors} socket errors (${r.load.firstProblem ?? '?'})`);
    } catch (err) {
      s.error = `${t.name}: ${errorText(err)}${serverState(t)}`;
    }
  };
  for (const t of targets) await attempt(t, 'concurrent', false);
  for (let rep = 0; rep < ctx.repetitions; rep++) {
    for (const mode of ['sequential', 'concurrent'] as const) {
      for (let i = 0; i < targets.length; i++) await attempt(targets[(rep + i) % targets.length]!, mode, true);
    }
  }
  return out;
}

function rowsFor(ctx: BenchContext, driver: DriverKind, started: StartedMcp[], series: Map<string, Series>): BenchRow[] {
  const startError = (v: McpVariant): string | undefined => {
    const s = started.find((x) => (x.ok ? x.target.name : x.name) === v);
    return s && !s.ok ? s.error : undefined;
  };
  const answerNote = started.flatMap((s) => (s.ok ? [`${s.target.name} ${s.target.answerBytes} B`] : [])).join(', ');
  const lower = 'ratio = tuicd / bare SDK (lower is better)';
  const groups: Array<{
    group: string;
    mode: Mode;
    unit: string;
    pick: (s: Series) => number[];
    label?: string;
    goal?: (r: BenchRow) => string;
    extra?: string;
  }> = [
    {
      group: `tools/call sequential latency (tcp, ${driver})`,
      mode: 'sequential',
      unit: 'ms (lower is better)',
      pick: (s) => s.p50,
      label: 'p50',
      extra: lower,
    },
    {
      group: `tools/call sequential latency (tcp, ${driver})`,
      mode: 'sequential',
      unit: 'ms (lower is better)',
      pick: (s) => s.p99,
      label: 'p99',
      extra: lower,
    },
    {
      group: `tools/call ${CONCURRENT_CALLERS} callers (tcp, ${driver})`,
      mode: 'concurrent',
      unit: 'calls/s',
      pick: (s) => s.rps,
      goal: (r) => `goal ≥ ${GOAL_THROUGHPUT_RATIO}× bare SDK: ${r.ratio! >= GOAL_THROUGHPUT_RATIO ? 'met' : 'MISSED'}`,
    },
    {
      group: `tools/call ${CONCURRENT_CALLERS} callers (tcp, ${driver}) server CPU`,
      mode: 'concurrent',
      unit: 'ms CPU/call (lower is better)',
      pick: (s) => s.cpuMs,
      goal: (r) => `goal ≤ ${GOAL_CPU_MS_PER_CALL} ms: ${r.median <= GOAL_CPU_MS_PER_CALL ? 'met' : 'MISSED'}`,
      extra: lower,
    },
  ];
  const rows: BenchRow[] = [];
  for (const g of groups) {
    const values = (v: McpVariant): number[] | string => {
      const error = startError(v) ?? series.get(key(v, g.mode))?.error;
      if (error) return error;
      const picked = g.pick(series.get(key(v, g.mode))!);
      return picked.length ? picked : `${v}: no values (server CPU time is read from /proc, Linux only)`;
    };
    const bare = values('bare SDK');
    const variantName = (v: McpVariant): string => (g.label ? `${v} ${g.label}` : v);
    for (const v of VARIANTS) {
      const vals = values(v);
      if (typeof vals === 'string') {
        rows.push(failedRow(g.group, variantName(v), ctx, g.unit, vals));
        continue;
      }
      const baseline = v === 'tuicd' && typeof bare !== 'string' ? { name: variantName('bare SDK'), median: median(bare) } : undefined;
      const r = row(g.group, variantName(v), ctx, g.unit, vals, baseline);
      const s = series.get(key(v, g.mode))!;
      const notes = [...s.notes];
      if (v === 'tuicd' && g.goal && (r.ratio !== undefined || g.unit.startsWith('ms CPU'))) notes.push(g.goal(r));
      if (v === 'tuicd' && baseline && g.extra) notes.push(g.extra);
      if (g.unit === 'calls/s') notes.push(`${driver} client CPU ${median(s.clientCpu).toFixed(2)} of a core`);
      if (g.label === 'p50' && v === 'tuicd') notes.push(`answer bodies: ${answerNote}`);
      rows.push(withNote(r, notes.join('; ')));
    }
  }
  return rows;
}

function serverState(t: McpTarget): string {
  const { exitCode, signalCode } = t.proc.child;
  const state =
    exitCode !== null || signalCode !== null ? `the server process exited (${signalCode ?? `code ${exitCode}`})` : 'the server process is still running';
  const last = t.proc.tail().split('\n').pop()?.slice(0, 300);
  return ` [${state}${last ? `; its last output: ${last}` : ''}]`;
}
