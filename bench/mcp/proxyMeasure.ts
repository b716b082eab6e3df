/**
 * How the proxy benches drive their peers and turn repetitions into rows. A peer is a server plus
 * a driver (the raw HTTP generator, the SDK Client, the light stdio driver); every run yields the
 * driver's figures and the CPU the server spent per answer, counting the processes it started
 * (tuicd's stdio upstreams are its grandchildren through a worker thread).
 */
import { fileURLToPath } from 'node:url';

import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchRow } from '../harness.js';
import { runToEnd } from '../http/children.js';
import { treeCpuDelta, treeCpuSeconds, type TreeCpu } from './proxyProcessTree.js';
import { requestArgs, type RpcRequest, type ToolCall, type ToolsCallLoadResult } from './toolsCallShared.js';
import type { McpTarget } from './toolsCallTargets.js';

export interface Durations {
  warmupMs: number;
  durationMs: number;
}

const DURATIONS = {
  full: { warmupMs: 500, durationMs: 3000 },
  quick: { warmupMs: 200, durationMs: 1000 },
};

export const durationsFor = (ctx: BenchContext): Durations => (ctx.quick ? DURATIONS.quick : DURATIONS.full);

/** A driver may take this much longer than its planned run before it is killed. */
const RUN_SLACK_MS = 15_000;

/** One measured run. */
export interface Run {
  load: ToolsCallLoadResult;
  /** Server CPU per answer: the server process and every process below it. */
  cpuMsPerCall?: number;
  /** The part of it spent in the processes below the server (the upstream children). */
  descendantsCpuMsPerCall?: number;
}

/** Runs one measurement with this many concurrent callers. */
export type Drive = (callers: number, d: Durations) => Promise<Run>;

/** What a driver sends: one tools/call, tools/list, or another request (resources/read, prompts/get). */
export type Request = ToolCall | 'tools/list' | RpcRequest;

const script = (file: string): string => fileURLToPath(new URL(`./${file}`, import.meta.url));
const timing = (d: Durations): string[] => ['--warmup-ms', String(d.warmupMs), '--duration-ms', String(d.durationMs)];
const headerArgs = (lines: string[]): string[] => lines.flatMap((h) => ['--header', h]);
const serverArgs = (args: string[]): string[] => args.flatMap((a) => ['--arg', a]);

async function runDriver(args: string[], d: Durations): Promise<ToolsCallLoadResult> {
  const out = await runToEnd(process.execPath, args, d.warmupMs + d.durationMs + RUN_SLACK_MS);
  if (out.code !== 0) throw new Error(`driver exited with code ${out.code}: ${out.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const load = JSON.parse(out.stdout.trim().split('\n').pop()!) as ToolsCallLoadResult;
  if (load.requests === 0) throw new Error(`no answers${load.firstProblem ? `: ${load.firstProblem}` : ''}`);
  return load;
}

function withCpu(load: ToolsCallLoadResult, cpu: TreeCpu | undefined, calls: number): Run {
  if (!cpu || calls === 0) return { load };
  return { load, cpuMsPerCall: ((cpu.root + cpu.descendants) * 1000) / calls, descendantsCpuMsPerCall: (cpu.descendants * 1000) / calls };
}

/**
 * A server running on its own: its CPU is read around the driver's whole run, warm-up and
 * connection set-up included, and divided by every answer since the first (a few requests in thousands).
 */
async function aroundServer(target: McpTarget, args: string[], d: Durations): Promise<Run> {
  const pid = target.proc.child.pid!;
  const before = treeCpuSeconds(pid);
  const load = await runDriver(args, d);
  return withCpu(load, treeCpuDelta(before, treeCpuSeconds(pid)), load.totalRequests);
}

/** The raw HTTP generator (toolsCallLoadgen.ts) on the target's MCP session, over TCP or its unix socket. */
export function rawHttp(target: McpTarget, request: Request, via: 'tcp' | 'unix'): Drive {
  const at = via === 'tcp' ? ['--port', String(target.port)] : ['--socket', target.socketPath];
  return (callers, d) =>
    aroundServer(
      target,
      [script('toolsCallLoadgen.js'), ...at, '--connections', String(callers), ...headerArgs(target.sessionHeaders), ...timing(d), ...requestArgs(request)],
      d,
    );
}

/** How the SDK Client driver behaves beyond its call. */
export interface SdkClientOptions {
  /** Declares sampling and answers every sampling/createMessage at once (`--sampling`). */
  sampling?: boolean;
}

const sdkArgs = (o: SdkClientOptions): string[] => (o.sampling ? ['--sampling'] : []);

/** The SDK Client over Streamable HTTP (toolsCallSdkDriver.ts), which opens its own session. */
export function sdkHttp(target: McpTarget, call: ToolCall, options: SdkClientOptions = {}): Drive {
  const url = `http://127.0.0.1:${target.port}/mcp`;
  return (callers, d) =>
    aroundServer(
      target,
      [
        script('toolsCallSdkDriver.js'),
        '--url',
        url,
        '--callers',
        String(callers),
        ...headerArgs(target.authHeaders),
        ...timing(d),
        ...requestArgs(call),
        ...sdkArgs(options),
      ],
      d,
    );
}

/** A stdio server the driver spawns itself and measures over its window: `node <args>`. */
async function spawnedServer(args: string[], d: Durations): Promise<Run> {
  const load = await runDriver(args, d);
  return withCpu(load, load.serverCpu, load.requests);
}

/** The light newline JSON-RPC driver (proxyDirectStdio.ts) straight to `node <args>`. */
export function lightStdio(args: string[], request: Request): Drive {
  return (callers, d) =>
    spawnedServer([script('proxyDirectStdio.js'), ...serverArgs(args), '--callers', String(callers), ...timing(d), ...requestArgs(request)], d);
}

/** The SDK Client over StdioClientTransport straight to `node <args>`. */
export function sdkStdio(args: string[], call: ToolCall, options: SdkClientOptions = {}): Drive {
  return (callers, d) =>
    spawnedServer(
      [
        script('toolsCallSdkDriver.js'),
        '--command',
        process.execPath,
        ...serverArgs(args),
        '--callers',
        String(callers),
        ...timing(d),
        ...requestArgs(call),
        ...sdkArgs(options),
      ],
      d,
    );
}

/** A peer, or the reason it cannot run (it did not start). */
export interface Peer {
  name: string;
  drive: Drive | { error: string };
}

/** One peer at one caller count: a value per repetition. */
export interface Series {
  p50: number[];
  p99: number[];
  rps: number[];
  cpuMs: number[];
  descendantsCpuMs: number[];
  clientCpu: number[];
  notes: Set<string>;
  error?: string;
}

export const seriesKey = (peer: string, callers: number): string => `${peer}/${callers}`;

/**
 * Every peer at every caller count, interleaved within each repetition (the order rotates, so
 * drift hits them alike), after one warm-up run each. An error answer stops that series: its
 * figure would measure an error path.
 */
export async function measurePeers(peers: Peer[], callerCounts: number[], repetitions: number, d: Durations): Promise<Map<string, Series>> {
  const out = new Map<string, Series>();
  for (const p of peers) {
    for (const callers of callerCounts) {
      const s: Series = { p50: [], p99: [], rps: [], cpuMs: [], descendantsCpuMs: [], clientCpu: [], notes: new Set() };
      if ('error' in p.drive) s.error = p.drive.error;
      out.set(seriesKey(p.name, callers), s);
    }
  }
  const attempt = async (p: Peer, callers: number, record: boolean): Promise<void> => {
    const s = out.get(seriesKey(p.name, callers))!;
    if (s.error || 'error' in p.drive) return;
    try {
      const r = await p.drive(callers, record ? d : { warmupMs: 0, durationMs: d.warmupMs * 2 });
      if (r.load.bad > 0) s.error = `${r.load.bad} of ${r.load.requests} answers were errors (${r.load.firstProblem ?? '?'})`;
      if (!record || s.error) return;
      s.p50.push(r.load.p50Ms);
      s.p99.push(r.load.p99Ms);
      s.rps.push(r.load.rps);
      if (r.cpuMsPerCall !== undefined) s.cpuMs.push(r.cpuMsPerCall);
      if (r.descendantsCpuMsPerCall !== undefined) s.descendantsCpuMs.push(r.descendantsCpuMsPerCall);
      s.clientCpu.push(r.load.clientCpu);
      if (r.load.errors > 0) s.notes.add(`${r.load.errors} socket errors (${r.load.firstProblem ?? '?'})`);
    } catch (err) {
      s.error = errorText(err);
    }
  };
  for (const p of peers) await attempt(p, Math.max(...callerCounts), false);
  for (let rep = 0; rep < repetitions; rep++) {
    for (const callers of callerCounts) {
      for (let i = 0; i < peers.length; i++) await attempt(peers[(rep + i) % peers.length]!, callers, true);
    }
  }
  return out;
}

/** How many callers the throughput figures keep in flight. */
export const CONCURRENT_CALLERS = 16;
export const LATENCY_UNIT = 'ms (lower is better)';
export const CPU_UNIT = 'ms CPU/call (lower is better)';

/** One figure of a table: which series, which values, in which unit. */
export interface Figure {
  group: string;
  unit: string;
  callers: number;
  pick: (s: Series) => number[];
  /** Appended to the variant name, e.g. "p50". */
  label?: string;
}

/**
 * A call bench's figures: sequential latency p50 and p99, calls/s with CONCURRENT_CALLERS, and server
 * CPU per call at both loads (one call at a time, every hop between threads and processes pays a
 * wake-up that a loaded server shares between calls).
 */
export function callFigures(group: string): Figure[] {
  const concurrent = `${group} ${CONCURRENT_CALLERS} callers`;
  return [
    { group: `${group} sequential latency`, unit: LATENCY_UNIT, callers: 1, pick: (s) => s.p50, label: 'p50' },
    { group: `${group} sequential latency`, unit: LATENCY_UNIT, callers: 1, pick: (s) => s.p99, label: 'p99' },
    { group: concurrent, unit: 'calls/s', callers: CONCURRENT_CALLERS, pick: (s) => s.rps },
    { group: `${concurrent} server CPU`, unit: CPU_UNIT, callers: CONCURRENT_CALLERS, pick: (s) => s.cpuMs },
    { group: `${group} sequential server CPU`, unit: CPU_UNIT, callers: 1, pick: (s) => s.cpuMs },
  ];
}

/** "client CPU 0.30 of a core" for throughput rows: near 1, the driver was the limit. */
export const clientCpuNote = (fig: Figure, s: Series): string | undefined =>
  fig.unit === 'calls/s' && s.clientCpu.length ? `client CPU ${median(s.clientCpu).toFixed(2)} of a core` : undefined;

/** What the figure's rows add to their notes: goals, a second peer's ratio. */
export type NoteFor = (peer: string, r: BenchRow, s: Series) => Array<string | undefined>;

/**
 * One row per peer: median and spread over the repetitions, the ratio against `baseline`'s median
 * (same run, same regime). A peer without values gets an error row that says why.
 */
export function figureRows(ctx: BenchContext, fig: Figure, peers: string[], series: Map<string, Series>, baseline: string, notes?: NoteFor): BenchRow[] {
  const values = (peer: string): number[] | string => {
    const s = series.get(seriesKey(peer, fig.callers));
    if (!s) return `${peer}: not measured`;
    if (s.error) return `${peer}: ${s.error}`;
    const v = fig.pick(s);
    return v.length ? v : `${peer}: no values (server CPU time is read from /proc, Linux only)`;
  };
  const name = (peer: string): string => (fig.label ? `${peer} ${fig.label}` : peer);
  const base = values(baseline);
  return peers.map((peer) => {
    const v = values(peer);
    if (typeof v === 'string') return failedRow(fig.group, name(peer), ctx, fig.unit, v);
    const ratioTo = peer !== baseline && typeof base !== 'string' ? { name: name(baseline), median: median(base) } : undefined;
    const r = row(fig.group, name(peer), ctx, fig.unit, v, ratioTo);
    const s = series.get(seriesKey(peer, fig.callers))!;
    const extra = [...(notes?.(peer, r, s) ?? []), ...s.notes].filter((n): n is string => !!n);
    return withNote(r, extra.join('; '));
  });
}

/** This row's median over another peer's median in the same figure; undefined when that peer has no values. */
export function ratioTo(r: BenchRow, fig: Figure, series: Map<string, Series>, other: string): number | undefined {
  const s = series.get(seriesKey(other, fig.callers));
  const v = s && !s.error ? fig.pick(s) : [];
  if (v.length === 0 || median(v) === 0) return undefined;
  return r.median / median(v);
}

/** "0.42× direct stdio": this row's median against another peer's, for a second ratio in the note. */
export function ratioNote(r: BenchRow, fig: Figure, series: Map<string, Series>, other: string): string | undefined {
  const ratio = ratioTo(r, fig, series, other);
  return ratio === undefined ? undefined : `${ratio.toFixed(2)}× ${fig.label ? `${other} ${fig.label}` : other}`;
}
