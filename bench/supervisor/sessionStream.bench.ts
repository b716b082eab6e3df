/**
 * Session streaming (issue #3 "Benchmarks"): bytes/s a WebSocket viewer of a tuicd session receives
 * against a bare node-pty Buffer read of the same command, and keystroke echo latency through
 * tuicd against the same round trip on a bare node-pty. Both also run against a one-process node-pty
 * + uWS server (ttyd's shape), which shows what tuicd's split into supervisor and pty host costs. tuicd runs as its own process
 * (`node dist/supervisor/main.js`, unix socket only); the viewers, the keystroke timer and the bare
 * node-pty baselines all run in one separate load process (sessions/client.ts).
 * The tuicd rows run on uWS (forced); a second tuicd forced onto its node engine (node:http + ws,
 * the fallback where no uWS build loads) runs the 1-viewer base64 flood and the echo, and its rows'
 * ratio is node engine / uWS: what the fallback costs a viewer.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { cpuSeconds } from '../http/children.js';
import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { LoadClient } from './sessions/clientProc.js';
import type { EchoSpec, StreamResult } from './sessions/protocol.js';
import { base64Flood, ECHO_SCRIPT, fileFlood, SHELL, zeroFlood, type StreamScript } from './sessions/scripts.js';
import { recordedAgentOutput } from '../workers/pty/fixtures/recordedAgentOutput.js';
import { fmt, goal, percentile } from './sessions/stats.js';
import { startOnePtyServer, type OnePtyServer } from './sessions/onePtyPeer.js';
import { createSession, deleteSession, ptyHostPid, startTuicd, type TuicdUnderTest } from './sessions/tuicd.js';
import type { TuicdEngine } from '../http/engines.js';
import { baselineEngine } from '../baseline.js';

const StreamBenchConstants = {
  /**
   * `head -c N`: the issue sizes N at 200 MB; on these 2-core machines that is ~5 s per run and
   * 18 runs per regime, so the full run uses 50 MB and --quick 10 MB (the row note says which).
   */
  FLOOD_BYTES: 50_000_000,
  FLOOD_BYTES_QUICK: 10_000_000,
  /** A stream with no byte for this long is over: a short count shows up as not byte-exact. */
  IDLE_TIMEOUT_MS: 5_000,
  /** Longest a single flood run may take (a 200 MB producer-bound run at 5 MB/s would still fit). */
  STREAM_CALL_TIMEOUT_MS: 180_000,
  /** Keystrokes per echo run, spaced 5–10 ms apart after each echo (issue: "e.g. 500"). */
  ECHO: { keystrokes: 500, warmup: 20, gapMinMs: 5, gapMaxMs: 10 } satisfies EchoSpec,
  ECHO_QUICK: { keystrokes: 150, warmup: 10, gapMinMs: 5, gapMaxMs: 10 } satisfies EchoSpec,
  ECHO_CALL_TIMEOUT_MS: 120_000,
  /** Issue #3 goals. */
  GOAL_BASE64: 0.95,
  GOAL_ZEROS: 0.8,
  GOAL_ECHO_P50_MS: 0.6,
  GOAL_ECHO_P99_MS: 3,
  /** Issue 13: the node engine delivers a session stream at ≥ 0.8× uWS. */
  GOAL_NODE_ENGINE_STREAM: 0.8,
  VIEWER_COUNTS: [1, 3],
} as const;

const BARE = 'bare node-pty (Buffer read)';
/** ttyd's shape in node: a fresh PTY per viewer, so only the one-viewer case has a like-for-like peer. */
const ONE_PROCESS = 'one-process node-pty + uWS server, 1 viewer';
const viewersVariant = (n: number): string => `tuicd, ${n} WebSocket viewer${n === 1 ? '' : 's'}`;
const NODE_ENGINE_VIEWER = 'tuicd (node engine), 1 WebSocket viewer';
/** The default frames (JSON `output`, UTF-8 decoded), what most clients take: issue 29 wants them as cheap as binary. */
const JSON_VIEWER = 'tuicd, 1 JSON viewer (default frames)';

/** A tuicd on one HTTP engine, or why it is not running. */
export interface TuicdSlot {
  tuicd?: TuicdUnderTest;
  error?: string;
}

export async function startSlot(engine: TuicdEngine | undefined, mainPath?: string): Promise<TuicdSlot> {
  try {
    return { tuicd: await startTuicd(engine, mainPath) };
  } catch (err) {
    return { error: errorText(err) };
  }
}

/** "no ratio to tuicd (uWS): uWS unavailable: ..." when the uWS figure is missing. */
function noUwsRatio(uws: TuicdSlot, uwsErrors: string[]): string {
  return `no ratio to tuicd (uWS): ${uws.error ?? uwsErrors[0] ?? 'no run finished'}`;
}

/** Everything measured for one variant across repetitions. */
interface Series {
  values: number[];
  problems: string[];
  errors: string[];
  /** Per run: supervisor and pty-host CPU ms per MB delivered (tuicd variants only). */
  supervisorCpuMsPerMb: number[];
  hostCpuMsPerMb: number[];
  /** Per run: slowest / fastest viewer rate (3 viewers). */
  viewerEvenness: number[];
}

const newSeries = (): Series => ({ values: [], problems: [], errors: [], supervisorCpuMsPerMb: [], hostCpuMsPerMb: [], viewerEvenness: [] });

/** MB/s of the slowest reader in one run (10^6 bytes). */
function slowestRate(r: StreamResult): number {
  return Math.min(...r.viewers.map((v) => (v.lastAt > v.firstAt ? v.bytes / ((v.lastAt - v.firstAt) / 1000) / 1e6 : 0)));
}

function evenness(r: StreamResult): number {
  const rates = r.viewers.map((v) => v.bytes / Math.max(1e-9, v.lastAt - v.firstAt));
  return Math.min(...rates) / Math.max(...rates);
}

async function measureFlood(
  ctx: BenchContext,
  client: LoadClient,
  uws: TuicdSlot,
  /** Set for the flood the node engine also runs (1 viewer). */
  nodeEngine: TuicdSlot | undefined,
  name: string,
  flood: StreamScript,
  goalRatio: number,
  goalNote: string,
  sizeNote: string,
  /** --baseline-ref: the older build, run beside ours with 1 viewer (its pty host CPU is the comparison). */
  older?: BaselineSlot,
  /** Sessions start as this agent (the output parser's agent rules and screen reads on). */
  agentType?: string,
): Promise<BenchRow[]> {
  const spec = { expected: flood.expected, check: flood.check, idleTimeoutMs: StreamBenchConstants.IDLE_TIMEOUT_MS };
  const baselineVariant = older ? `${older.label}, 1 WebSocket viewer` : undefined;
  const variants = [
    BARE,
    ONE_PROCESS,
    ...StreamBenchConstants.VIEWER_COUNTS.map(viewersVariant),
    JSON_VIEWER,
    ...(nodeEngine ? [NODE_ENGINE_VIEWER] : []),
    ...(baselineVariant ? [baselineVariant] : []),
  ];
  const series = new Map(variants.map((v) => [v, newSeries()]));
  let peer: OnePtyServer | undefined;
  let peerError: string | undefined;
  try {
    peer = await startOnePtyServer(flood.script);
  } catch (err) {
    peerError = errorText(err);
  }
  const runVariant = async (variant: string): Promise<void> => {
    const s = series.get(variant)!;
    if (variant === BARE) {
      const r = await client.call({ op: 'bareStream', script: flood.script, ...spec }, StreamBenchConstants.STREAM_CALL_TIMEOUT_MS);
      record(s, r);
      return;
    }
    if (variant === ONE_PROCESS) {
      if (!peer) throw new Error(peerError ?? 'the one-process server is not running');
      const cpu0 = peer.pid === undefined ? undefined : cpuSeconds(peer.pid);
      const r = await client.call(
        { op: 'stream', socket: peer.socketPath, sessionId: 'peer', viewers: 1, ...spec },
        StreamBenchConstants.STREAM_CALL_TIMEOUT_MS,
      );
      const cpu1 = peer.pid === undefined ? undefined : cpuSeconds(peer.pid);
      record(s, r);
      // Kept in the supervisor series: the peer is one process doing both halves' work.
      if (cpu0 !== undefined && cpu1 !== undefined) s.supervisorCpuMsPerMb.push(((cpu1 - cpu0) * 1000) / (flood.expected / 1e6));
      return;
    }
    const slot = variant === NODE_ENGINE_VIEWER ? nodeEngine! : variant === baselineVariant ? older!.slot : uws;
    const tuicd = slot.tuicd;
    if (!tuicd) throw new Error(slot.error ?? 'tuicd is not running');
    const viewers = variant === viewersVariant(3) ? 3 : 1;
    const id = await createSession(tuicd.socketPath, SHELL, ['-c', flood.script], agentType);
    try {
      const hostPid = ptyHostPid(tuicd.pid);
      const sup0 = cpuSeconds(tuicd.pid);
      const host0 = hostPid === undefined ? undefined : cpuSeconds(hostPid);
      const json = variant === JSON_VIEWER;
      const r = await client.call(
        { op: 'stream', socket: tuicd.socketPath, sessionId: id, viewers, json, ...spec },
        StreamBenchConstants.STREAM_CALL_TIMEOUT_MS,
      );
      const sup1 = cpuSeconds(tuicd.pid);
      const host1 = hostPid === undefined ? undefined : cpuSeconds(hostPid);
      record(s, r);
      const mb = flood.expected / 1e6;
      if (sup0 !== undefined && sup1 !== undefined) s.supervisorCpuMsPerMb.push(((sup1 - sup0) * 1000) / mb);
      if (host0 !== undefined && host1 !== undefined) s.hostCpuMsPerMb.push(((host1 - host0) * 1000) / mb);
      if (viewers > 1) s.viewerEvenness.push(evenness(r));
    } finally {
      await deleteSession(tuicd.socketPath, id).catch(() => undefined);
    }
  };
  /** A run whose bytes are wrong measured a broken path: it is counted as a problem, not as a rate. */
  const record = (s: Series, r: StreamResult): void => {
    const problems = r.viewers.flatMap((v, i) => {
      const resyncs = v.frames?.['resync'] ?? 0;
      const problem = [v.problem, resyncs ? `${resyncs} resync frame(s)` : null].filter(Boolean).join(', ');
      return problem ? [r.viewers.length > 1 ? `viewer ${i}: ${problem}` : problem] : [];
    });
    if (problems.length === 0) s.values.push(slowestRate(r));
    else s.problems.push(problems.length > 1 ? `${problems[0]} (and ${problems.length - 1} more viewer(s))` : problems[0]!);
  };

  // Warm-up (JIT in the client, tuicd and the pty host), not recorded.
  await client.call({ op: 'bareStream', script: flood.script, ...spec }, StreamBenchConstants.STREAM_CALL_TIMEOUT_MS).catch(() => undefined);
  for (const [slot, variant] of [
    [uws, viewersVariant(1)],
    [nodeEngine, NODE_ENGINE_VIEWER],
    [older?.slot, baselineVariant],
  ] as const) {
    if (!slot?.tuicd || variant === undefined) continue;
    await runVariant(variant).catch(() => undefined);
    series.set(variant, newSeries());
  }
  try {
    for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
      // Rotate the order so drift on the machine hits every variant alike.
      const order = variants.map((_, i) => variants[(i + rep) % variants.length]!);
      for (const v of order) {
        try {
          await runVariant(v);
        } catch (err) {
          series.get(v)!.errors.push(errorText(err));
        }
      }
    }
  } finally {
    await peer?.stop();
  }

  const group = `session stream: ${name}`;
  const unit = 'MB/s per viewer';
  const bare = series.get(BARE)!;
  const out: BenchRow[] = [];
  if (bare.values.length === 0) {
    out.push(
      failedRow(group, BARE, ctx, unit, bare.problems.length ? `NOT BYTE-EXACT in every run: ${bare.problems[0]}` : (bare.errors[0] ?? 'no run finished')),
    );
  } else {
    out.push(withNote(row(group, BARE, ctx, unit, bare.values), notes(bare, [sizeNote, 'one reader, in the load process'])));
  }
  const baseline = bare.values.length ? { name: 'bare node-pty', median: median(bare.values) } : undefined;
  const onePeer = series.get(ONE_PROCESS)!;
  for (const v of variants.slice(1)) {
    const s = series.get(v)!;
    if (s.values.length === 0) {
      const slotError = v === NODE_ENGINE_VIEWER ? nodeEngine?.error : v === baselineVariant ? older?.slot.error : uws.error;
      out.push(
        failedRow(
          group,
          v,
          ctx,
          unit,
          s.problems.length
            ? `NOT BYTE-EXACT in every run: ${s.problems[0]}`
            : (s.errors[0] ?? (v === ONE_PROCESS ? peerError : slotError) ?? 'no run finished'),
        ),
      );
      continue;
    }
    if (v === NODE_ENGINE_VIEWER) {
      out.push(nodeEngineFloodRow(ctx, group, unit, s, series.get(viewersVariant(1))!, uws, baseline));
      continue;
    }
    const r = row(group, v, ctx, unit, s.values, baseline);
    const extra: string[] = [];
    if (v === ONE_PROCESS) {
      extra.push("ttyd's shape: node-pty and the WebSocket in one process, no ring, coalescer or text stage; ratio = this / bare");
      if (s.supervisorCpuMsPerMb.length) extra.push(`CPU ms/MB ${fmt(median(s.supervisorCpuMsPerMb), 2)}`);
      out.push(withNote(r, notes(s, extra)));
      continue;
    }
    if (v === JSON_VIEWER) {
      // Issue 29: the default frames against binary ones and against the one-process peer, and what they cost.
      const binary = series.get(viewersVariant(1))!;
      if (binary.values.length) extra.push(`${fmt(r.median / median(binary.values), 2)}× the binary viewer`);
      if (onePeer.values.length) extra.push(`${fmt(r.median / median(onePeer.values), 2)}× the one-process server (goal ≥ 0.95, agent output ≥ 0.9)`);
      if (s.supervisorCpuMsPerMb.length) {
        const total = median(s.supervisorCpuMsPerMb) + median(s.hostCpuMsPerMb);
        extra.push(`CPU ms/MB: supervisor ${fmt(median(s.supervisorCpuMsPerMb), 2)}, pty host ${fmt(median(s.hostCpuMsPerMb), 2)}`);
        if (onePeer.supervisorCpuMsPerMb.length) {
          extra.push(`both processes ${fmt(total / median(onePeer.supervisorCpuMsPerMb), 2)}× the peer's CPU/MB (goal ≤ 1.1)`);
        }
      }
      out.push(withNote(r, notes(s, extra)));
      continue;
    }
    if (v === baselineVariant) {
      if (s.supervisorCpuMsPerMb.length)
        extra.push(`CPU ms/MB: supervisor ${fmt(median(s.supervisorCpuMsPerMb), 2)}, pty host ${fmt(median(s.hostCpuMsPerMb), 2)}`);
      out.push(withNote(r, notes(s, extra)));
      continue;
    }
    if (r.ratio !== undefined) extra.push(`goal ≥ ${goalRatio}${goalNote}: ${goal(r.ratio >= goalRatio)}`);
    if (v === viewersVariant(1) && onePeer.values.length) extra.push(`${fmt(r.median / median(onePeer.values), 2)}× the one-process server`);
    if (v === viewersVariant(1) && onePeer.supervisorCpuMsPerMb.length && s.supervisorCpuMsPerMb.length) {
      const total = median(s.supervisorCpuMsPerMb) + median(s.hostCpuMsPerMb);
      extra.push(
        `both processes ${fmt(total / median(onePeer.supervisorCpuMsPerMb), 2)}× the peer's CPU/MB; pty host goal ≤ 8 ms/MB: ${goal(median(s.hostCpuMsPerMb) <= 8)}`,
      );
    }
    if (s.viewerEvenness.length) extra.push(`slowest/fastest viewer ${fmt(median(s.viewerEvenness), 2)}`);
    if (s.supervisorCpuMsPerMb.length)
      extra.push(`CPU ms/MB: supervisor ${fmt(median(s.supervisorCpuMsPerMb), 2)}, pty host ${fmt(median(s.hostCpuMsPerMb), 2)}`);
    const base = baselineVariant ? series.get(baselineVariant)! : undefined;
    if (v === viewersVariant(1) && base && base.values.length && base.hostCpuMsPerMb.length && s.hostCpuMsPerMb.length) {
      const hostRatio = median(s.hostCpuMsPerMb) / median(base.hostCpuMsPerMb);
      extra.push(
        `vs ${older!.label}: pty host CPU/MB ${fmt(hostRatio, 3)}× (goal ≤ 1.10: ${goal(hostRatio <= 1.1)}), viewer MB/s ${fmt(r.median / median(base.values), 3)}×`,
      );
    }
    out.push(withNote(r, notes(s, extra)));
  }
  return out;
}

export interface BaselineSlot {
  label: string;
  slot: TuicdSlot;
}

/**
 * The node engine's 1-viewer row: its ratio column is node engine / uWS (issue 13's goal), the
 * ratio to bare node-pty goes in the note.
 */
function nodeEngineFloodRow(
  ctx: BenchContext,
  group: string,
  unit: string,
  s: Series,
  uwsSeries: Series,
  uws: TuicdSlot,
  bare: { name: string; median: number } | undefined,
): BenchRow {
  const uwsBase = uwsSeries.values.length ? { name: `${viewersVariant(1)} (uWS)`, median: median(uwsSeries.values) } : undefined;
  const r = row(group, NODE_ENGINE_VIEWER, ctx, unit, s.values, uwsBase);
  const goalRatio = StreamBenchConstants.GOAL_NODE_ENGINE_STREAM;
  const extra = [r.ratio === undefined ? noUwsRatio(uws, uwsSeries.errors) : `goal ≥ ${goalRatio}× uWS: ${goal(r.ratio >= goalRatio)}`];
  if (bare) extra.push(`${fmt(r.median / bare.median, 2)}× ${bare.name}`);
  if (s.supervisorCpuMsPerMb.length)
    extra.push(`CPU ms/MB: supervisor ${fmt(median(s.supervisorCpuMsPerMb), 2)}, pty host ${fmt(median(s.hostCpuMsPerMb), 2)}`);
  return withNote(r, notes(s, extra));
}

/** Byte-exactness first (it decides whether the figure means anything), then errors, then the rest. */
function notes(s: Series, extra: string[]): string {
  const parts: string[] = [];
  const runs = s.values.length + s.problems.length;
  if (s.problems.length) parts.push(`NOT BYTE-EXACT in ${s.problems.length}/${runs} runs (left out of the figure): ${s.problems[0]}`);
  else if (s.values.length) parts.push(`byte-exact in ${runs}/${runs} runs`);
  if (s.errors.length) parts.push(`${s.errors.length} run(s) failed: ${s.errors[0]}`);
  return [...parts, ...extra].join('; ');
}

/** The keystroke echo rows (also run alone by sessionEcho.bench.ts). */
export async function measureEcho(ctx: BenchContext, client: LoadClient, uws: TuicdSlot, nodeEngine: TuicdSlot, older?: BaselineSlot): Promise<BenchRow[]> {
  const spec = ctx.quick ? StreamBenchConstants.ECHO_QUICK : StreamBenchConstants.ECHO;
  const bare = { p50: [] as number[], p99: [] as number[], errors: [] as string[] };
  const ours = { p50: [] as number[], p99: [] as number[], errors: [] as string[] };
  const oursNode = { p50: [] as number[], p99: [] as number[], errors: [] as string[] };
  const onePeer = { p50: [] as number[], p99: [] as number[], errors: [] as string[] };
  /** --baseline-ref: the older build's echo, for "echo latency must not change" (≥ 0.97×, i.e. ≤ 1.03× the time). */
  const olderEcho = { p50: [] as number[], p99: [] as number[], errors: [] as string[] };
  let peer: OnePtyServer | undefined;
  let peerError: string | undefined;
  try {
    peer = await startOnePtyServer(ECHO_SCRIPT);
  } catch (err) {
    peerError = errorText(err);
  }
  const runPeer = async (): Promise<number[]> => {
    if (!peer) throw new Error(peerError ?? 'the one-process server is not running');
    return (await client.call({ op: 'echo', socket: peer.socketPath, sessionId: 'peer', ...spec }, StreamBenchConstants.ECHO_CALL_TIMEOUT_MS)).samples;
  };
  const runTuicd = async (slot: TuicdSlot): Promise<number[]> => {
    const tuicd = slot.tuicd;
    if (!tuicd) throw new Error(slot.error ?? 'tuicd is not running');
    const id = await createSession(tuicd.socketPath, SHELL, ['-c', ECHO_SCRIPT]);
    try {
      return (await client.call({ op: 'echo', socket: tuicd.socketPath, sessionId: id, ...spec }, StreamBenchConstants.ECHO_CALL_TIMEOUT_MS)).samples;
    } finally {
      await deleteSession(tuicd.socketPath, id).catch(() => undefined);
    }
  };
  const runBare = async (): Promise<number[]> =>
    (await client.call({ op: 'bareEcho', script: ECHO_SCRIPT, ...spec }, StreamBenchConstants.ECHO_CALL_TIMEOUT_MS)).samples;
  const into = async (target: typeof bare, run: () => Promise<number[]>): Promise<void> => {
    try {
      const samples = await run();
      target.p50.push(percentile(samples, 50));
      target.p99.push(percentile(samples, 99));
    } catch (err) {
      target.errors.push(errorText(err));
    }
  };
  try {
    // Rotated, so no variant always runs first (or right after the same one).
    const order: Array<[typeof bare, () => Promise<number[]>]> = [
      [bare, runBare],
      [ours, () => runTuicd(uws)],
      [onePeer, runPeer],
      [oursNode, () => runTuicd(nodeEngine)],
      ...(older ? [[olderEcho, () => runTuicd(older.slot)] as [typeof bare, () => Promise<number[]>]] : []),
    ];
    for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
      for (let i = 0; i < order.length; i++) {
        const [target, run] = order[(rep + i) % order.length]!;
        await into(target, run);
      }
    }
  } finally {
    await peer?.stop();
  }

  const group = 'keystroke echo (WS text frame → PTY echo → WS)';
  const unit = 'ms (lower is better)';
  const bareVariant = (p: string): string => `bare node-pty in-process, ${p}`;
  const oursVariant = (p: string): string => `tuicd, ${p}`;
  const peerVariant = (p: string): string => `one-process node-pty + uWS server, ${p}`;
  const perRun = `${spec.keystrokes} keystrokes/run, ${spec.gapMinMs}–${spec.gapMaxMs} ms apart`;
  const out: BenchRow[] = [];
  for (const [p, goalMs] of [
    ['p50', StreamBenchConstants.GOAL_ECHO_P50_MS],
    ['p99', StreamBenchConstants.GOAL_ECHO_P99_MS],
  ] as const) {
    const b = bare[p];
    const o = ours[p];
    if (b.length === 0) out.push(failedRow(group, bareVariant(p), ctx, unit, bare.errors[0] ?? 'no run finished'));
    else out.push(withNote(row(group, bareVariant(p), ctx, unit, b), `${perRun}; write() + onData in the load process`));
    const one = onePeer[p];
    if (one.length === 0) out.push(failedRow(group, peerVariant(p), ctx, unit, onePeer.errors[0] ?? peerError ?? 'no run finished'));
    else {
      const r = row(group, peerVariant(p), ctx, unit, one, b.length ? { name: `bare ${p}`, median: median(b) } : undefined);
      out.push(withNote(r, "ttyd's shape: node-pty and the WebSocket in one process (no pty host, ring or text stage); ratio = this / bare"));
    }
    if (o.length === 0) {
      out.push(failedRow(group, oursVariant(p), ctx, unit, ours.errors[0] ?? uws.error ?? 'no run finished'));
    } else {
      const r = row(group, oursVariant(p), ctx, unit, o, b.length ? { name: `bare ${p}`, median: median(b) } : undefined);
      const extra = [`goal ${p} ≤ ${goalMs} ms: ${goal(r.median <= goalMs)}`, 'ratio = tuicd / bare (lower is better)'];
      if (one.length) extra.push(`${fmt(r.median / median(one))}× the one-process server (issue 29 goal ≤ 1.2: ${goal(r.median / median(one) <= 1.2)})`);
      const old = olderEcho[p];
      if (older && old.length) extra.push(`${fmt(r.median / median(old), 3)}× ${older.label} (goal ≤ 1.03: ${goal(r.median / median(old) <= 1.03)})`);
      else if (older) extra.push(`${older.label}: ${olderEcho.errors[0] ?? older.slot.error ?? 'no run finished'}`);
      if (ours.errors.length) extra.push(`${ours.errors.length} run(s) failed: ${ours.errors[0]}`);
      out.push(withNote(r, extra.join('; ')));
    }
    // The node engine: ratio = node engine / uWS (lower is better); the echo goals hold for it too.
    const n = oursNode[p];
    const nodeVariant = `tuicd (node engine), ${p}`;
    if (n.length === 0) {
      out.push(failedRow(group, nodeVariant, ctx, unit, oursNode.errors[0] ?? nodeEngine.error ?? 'no run finished'));
      continue;
    }
    const r = row(group, nodeVariant, ctx, unit, n, o.length ? { name: `tuicd (uWS) ${p}`, median: median(o) } : undefined);
    const extra = [
      r.ratio === undefined ? noUwsRatio(uws, ours.errors) : 'ratio = node engine / uWS (lower is better)',
      `goal ${p} ≤ ${goalMs} ms: ${goal(r.median <= goalMs)}`,
    ];
    if (b.length) extra.push(`${fmt(r.median / median(b))}× bare`);
    if (oursNode.errors.length) extra.push(`${oursNode.errors.length} run(s) failed: ${oursNode.errors[0]}`);
    out.push(withNote(r, extra.join('; ')));
  }
  return out;
}

/** The load client, tuicd on each engine and the baseline build (if any) for `measure`, all stopped after it. */
export async function withSlots(
  ctx: BenchContext,
  measure: (client: LoadClient, uws: TuicdSlot, nodeEngine: TuicdSlot, baseline: BaselineSlot | undefined) => Promise<BenchRow[]>,
): Promise<BenchRow[]> {
  const client = LoadClient.start();
  let uws: TuicdSlot = {};
  let nodeEngine: TuicdSlot = {};
  let baseline: BaselineSlot | undefined;
  try {
    // One at a time: one's start-up CPU must not delay the other's ready line.
    uws = await startSlot('uws');
    nodeEngine = await startSlot('node');
    if (ctx.baseline) {
      const b = ctx.baseline;
      baseline = { label: b.label, slot: 'error' in b ? { error: b.error } : await startSlot(baselineEngine(b), b.mainPath) };
    }
    return await measure(client, uws, nodeEngine, baseline);
  } finally {
    await client.stop();
    await Promise.all([uws.tuicd?.stop(), nodeEngine.tuicd?.stop(), baseline?.slot.tuicd?.stop()]);
  }
}

export const run: BenchModule = (ctx) =>
  withSlots(ctx, async (client, uws, nodeEngine, baseline) => {
    const n = ctx.quick ? StreamBenchConstants.FLOOD_BYTES_QUICK : StreamBenchConstants.FLOOD_BYTES;
    const sizeNote = `N = ${n / 1e6} MB${ctx.quick ? ' (--quick)' : ''}, not the issue's 200 MB (2-core box)`;
    const rows: BenchRow[] = [];
    rows.push(
      ...(await measureFlood(
        ctx,
        client,
        uws,
        nodeEngine,
        `head -c N /dev/urandom | base64`,
        base64Flood(n),
        StreamBenchConstants.GOAL_BASE64,
        '',
        sizeNote,
        baseline,
      )),
    );
    rows.push(
      ...(await measureFlood(
        ctx,
        client,
        uws,
        undefined,
        `head -c N /dev/zero | tr '\\0' a`,
        zeroFlood(n),
        StreamBenchConstants.GOAL_ZEROS,
        ' (busy regime)',
        sizeNote,
      )),
    );
    // Issue 16: recorded agent output into sessions started as claude, so the output parser runs
    // everything it runs for an agent (line rules, OSC, 10 screen reads/s) on the pty host's hot path.
    const agentDir = await mkdtemp(join(tmpdir(), 'tuicd-bench-agent-flood-'));
    try {
      const bytes = recordedAgentOutput(n);
      const file = join(agentDir, 'agent-output.bin');
      await writeFile(file, bytes);
      const flood = fileFlood(file, bytes.length, createHash('sha256').update(bytes).digest('hex'));
      rows.push(
        ...(await measureFlood(
          ctx,
          client,
          uws,
          undefined,
          'cat <recorded agent output> (agent_type claude)',
          flood,
          StreamBenchConstants.GOAL_BASE64,
          '',
          sizeNote,
          baseline,
          'claude',
        )),
      );
    } finally {
      await rm(agentDir, { recursive: true, force: true });
    }
    rows.push(...(await measureEcho(ctx, client, uws, nodeEngine, baseline)));
    return rows;
  });
