/**
 * GET /health requests/s: tuicd on uWS and on its node engine (node:http + ws) against a bare
 * uWebSockets.js server and a bare node:http server, over TCP (driven by wrk) and over the unix
 * socket (driven by one node client for every variant).
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { baselineGoalNote } from '../baseline.js';
import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { runLoadgen, runWrk, WRK_MISSING, wrkInstalled, type Measurement } from './drivers.js';
import { startTargets, stopTargets, TUICD_NODE_ENGINE, type Started, type Target, type VariantName } from './targets.js';

/** Run lengths. wrk takes whole seconds. A warm-up run per server precedes the measured ones (JIT, accept queues). */
const DURATIONS = {
  full: { wrkS: 5, wrkWarmupS: 2, clientWarmupMs: 1000, clientMs: 5000 },
  quick: { wrkS: 1, wrkWarmupS: 1, clientWarmupMs: 300, clientMs: 1000 },
};
/** The goal from the issue: tuicd serves /health at ≥ 0.8× a bare uWS server in the same run. */
const GOAL_VS_BARE_UWS = 0.8;
/** Issue 13: tuicd on its node engine (the fallback where no uWS build loads) serves ≥ 0.5× tuicd on uWS. */
const GOAL_NODE_ENGINE_VS_UWS = 0.5;

type Driver = (t: Target) => Promise<Measurement>;

interface Transport {
  /** Table group prefix, e.g. "GET /health (tcp, wrk)". */
  label: string;
  measure: Driver;
  warmUp: Driver;
  /** Set when the transport cannot run at all (wrk missing). */
  unavailable?: string;
  /** Extra tuicd row against node:http. */
  tuicdVsNodeHttp: boolean;
}

/** Everything measured for one variant on one transport, one entry per repetition. */
interface Series {
  rps: number[];
  perCpu: number[];
  clientCpu: number[];
  notes: Set<string>;
  error?: string;
}

export const run: BenchModule = async (ctx) => {
  const d = ctx.quick ? DURATIONS.quick : DURATIONS.full;
  const transports: Transport[] = [
    {
      label: 'GET /health (tcp, wrk)',
      measure: (t) => runWrk(t, d.wrkS),
      warmUp: (t) => runWrk(t, d.wrkWarmupS),
      tuicdVsNodeHttp: true,
      ...(wrkInstalled() ? {} : { unavailable: WRK_MISSING }),
    },
    {
      label: 'GET /health (unix, node client)',
      measure: (t) => runLoadgen(t, d.clientWarmupMs, d.clientMs),
      warmUp: (t) => runLoadgen(t, 0, d.clientWarmupMs),
      tuicdVsNodeHttp: false,
    },
  ];
  const tmp = await mkdtemp(join(tmpdir(), 'tuicd-bench-'));
  // On SIGINT run.ts calls process.exit(), which skips the finally below.
  const removeTmp = (): void => rmSync(tmp, { recursive: true, force: true });
  process.once('exit', removeTmp);
  let started: Started[] = [];
  try {
    started = await startTargets(tmp, ctx.baseline);
    const rows: BenchRow[] = [];
    for (const transport of transports) {
      const series = transport.unavailable ? new Map<VariantName, Series>() : await measureAll(ctx, started, transport);
      rows.push(...rowsFor(ctx, transport, started, series));
    }
    return rows;
  } finally {
    await stopTargets(started);
    process.removeListener('exit', removeTmp);
    await rm(tmp, { recursive: true, force: true });
  }
};

/** Interleaves variants within each repetition (rotating the order) so drift hits them alike. */
async function measureAll(ctx: BenchContext, started: Started[], transport: Transport): Promise<Map<VariantName, Series>> {
  const out = new Map<VariantName, Series>();
  const targets = started.flatMap((s) => (s.ok ? [s.target] : []));
  for (const t of targets) out.set(t.name, { rps: [], perCpu: [], clientCpu: [], notes: new Set() });
  const attempt = async (t: Target, driver: Driver, record: boolean): Promise<void> => {
    const s = out.get(t.name)!;
    if (s.error) return;
    try {
      const m = await driver(t);
      if (m.badStatus) s.error = `${t.name}: ${m.badStatus}: the figure would measure an error path`;
      if (!record) return;
      s.rps.push(m.rps);
      if (m.serverCpuS) s.perCpu.push(m.requestsInCpuWindow / m.serverCpuS);
      if (m.clientCpu !== undefined) s.clientCpu.push(m.clientCpu);
      if (m.socketErrors) s.notes.add(m.socketErrors);
    } catch (err) {
      s.error = `${t.name}: ${errorText(err)}${serverState(t)}`;
    }
  };
  for (const t of targets) await attempt(t, transport.warmUp, false);
  for (let rep = 0; rep < ctx.repetitions; rep++) {
    for (let i = 0; i < targets.length; i++) await attempt(targets[(rep + i) % targets.length]!, transport.measure, true);
  }
  return out;
}

function rowsFor(ctx: BenchContext, transport: Transport, started: Started[], series: Map<VariantName, Series>): BenchRow[] {
  const errorOf = (name: VariantName): string | undefined => {
    const s = started.find((x) => (x.ok ? x.target.name : x.name) === name);
    if (s && !s.ok) return s.error;
    return transport.unavailable ?? series.get(name)?.error;
  };
  const detailOf = (name: VariantName): string | undefined =>
    started.find((x): x is Extract<Started, { ok: true }> => x.ok && x.target.name === name)?.target.engineDetail;
  const rows: BenchRow[] = [];
  const groups: Array<{ group: string; unit: string; pick: (s: Series) => number[] }> = [
    { group: transport.label, unit: 'req/s', pick: (s) => s.rps },
    { group: `${transport.label} per server CPU`, unit: 'req/cpu-s', pick: (s) => s.perCpu },
  ];
  // With the generator missing there is nothing per CPU to say either: one error row per variant.
  for (const { group, unit, pick } of transport.unavailable ? groups.slice(0, 1) : groups) {
    const values = (name: VariantName): number[] | string => {
      const error = errorOf(name);
      if (error) return error;
      const v = pick(series.get(name)!);
      return v.length ? v : `${name}: no values (server CPU time is read from /proc, Linux only)`;
    };
    const uws = values('bare uWS');
    const nodeHttp = values('node:http');
    const tuicd = values('tuicd');
    const tuicdNode = values(TUICD_NODE_ENGINE);
    const base = (name: string, v: number[] | string) => (typeof v === 'string' ? undefined : { name, median: median(v) });
    const make = (name: VariantName, v: number[] | string, baseline?: { name: string; median: number }, missingBaseline?: VariantName): BenchRow => {
      if (typeof v === 'string') return failedRow(group, name, ctx, unit, v);
      const r = row(group, name, ctx, unit, v, baseline);
      const s = series.get(name)!;
      const notes = [...s.notes];
      if (missingBaseline && !baseline) {
        // Where no uWS build loads the reason is the whole note; otherwise say the baseline failed.
        const why = errorOf(missingBaseline);
        notes.push(
          why?.startsWith('uWS unavailable')
            ? `no ratio to ${missingBaseline === 'tuicd' ? 'tuicd (uWS)' : missingBaseline}: ${why}`
            : `no ratio: ${missingBaseline} was not measured`,
        );
      }
      if (unit === 'req/s' && s.clientCpu.length) notes.push(`node client CPU ${median(s.clientCpu).toFixed(2)} of a core`);
      return withNote(r, notes.join('; '));
    };
    // A variant that could not run is reported once per transport, in the req/s group.
    const show = (v: number[] | string): boolean => typeof v !== 'string' || unit === 'req/s';
    if (show(uws)) rows.push(withNote(make('bare uWS', uws), unit === 'req/s' ? detailOf('bare uWS') : undefined));
    if (show(nodeHttp)) rows.push(make('node:http', nodeHttp, base('bare uWS', uws), 'bare uWS'));
    if (show(tuicd)) {
      const vsUws = make('tuicd', tuicd, base('bare uWS', uws), 'bare uWS');
      if (vsUws.ratio !== undefined && unit === 'req/s') {
        withNote(vsUws, `goal ≥ ${GOAL_VS_BARE_UWS}× bare uWS: ${vsUws.ratio >= GOAL_VS_BARE_UWS ? 'met' : 'MISSED'}`);
      }
      rows.push(vsUws);
      if (transport.tuicdVsNodeHttp && typeof tuicd !== 'string') rows.push(make('tuicd', tuicd, base('node:http', nodeHttp), 'node:http'));
    }
    if (ctx.baseline) {
      const label = ctx.baseline.label as VariantName;
      rows.push(...baselineRows(label, tuicd, values, show, make, base, unit === 'req/s' ? detailOf(label) : undefined));
    }
    if (!show(tuicdNode)) continue;
    // What the fallback costs: tuicd on node:http + ws over tuicd on uWS, same run.
    const vsTuicdUws = make(TUICD_NODE_ENGINE, tuicdNode, base('tuicd (uWS)', tuicd), 'tuicd');
    // Without a uWS figure the note already says why there is no ratio, and no goal is judged.
    if (unit === 'req/s' && vsTuicdUws.ratio !== undefined) {
      withNote(vsTuicdUws, `goal ≥ ${GOAL_NODE_ENGINE_VS_UWS}× tuicd (uWS): ${vsTuicdUws.ratio >= GOAL_NODE_ENGINE_VS_UWS ? 'met' : 'MISSED'}`);
    }
    rows.push(vsTuicdUws);
    if (transport.tuicdVsNodeHttp && typeof tuicdNode !== 'string') rows.push(make(TUICD_NODE_ENGINE, tuicdNode, base('node:http', nodeHttp), 'node:http'));
  }
  return rows;
}

/**
 * --baseline-ref: the older build's row (ratio to bare uWS, for context; its note names the commit and
 * engine), then the current tuicd against it, with issue 14's goal: ≥ 0.97× on req/s and on req per
 * server CPU second (= CPU per request ≤ 1.03×).
 */
function baselineRows(
  label: VariantName,
  tuicd: number[] | string,
  values: (name: VariantName) => number[] | string,
  show: (v: number[] | string) => boolean,
  make: (name: VariantName, v: number[] | string, baseline?: { name: string; median: number }, missingBaseline?: VariantName) => BenchRow,
  base: (name: string, v: number[] | string) => { name: string; median: number } | undefined,
  detail: string | undefined,
): BenchRow[] {
  const rows: BenchRow[] = [];
  const b = values(label);
  if (show(b)) rows.push(withNote(make(label, b, base('bare uWS', values('bare uWS')), 'bare uWS'), detail));
  if (typeof tuicd === 'string') return rows;
  const current = make('tuicd', tuicd, base(label, b), label);
  // The guard runs on TCP only: on the unix socket the ratio is a control (it should sit near 1).
  if (typeof b !== 'string')
    withNote(current, `${baselineGoalNote(tuicd, b, true)}${current.group.includes('unix') ? '; control: no request guard on the unix socket' : ''}`);
  rows.push(current);
  return rows;
}

/** Why a server may have stopped answering: whether it is still running, and its last output line. */
function serverState(t: Target): string {
  const { exitCode, signalCode } = t.proc.child;
  const state =
    exitCode !== null || signalCode !== null ? `the server process exited (${signalCode ?? `code ${exitCode}`})` : 'the server process is still running';
  const last = t.proc.tail().split('\n').pop()?.slice(0, 300);
  return ` [${state}${last ? `; its last output: ${last}` : ''}]`;
}
