/**
 * Proxied `tools/call` (issue #5): server-everything's `echo` through tuicd (`everything__echo`,
 * POST /mcp over TCP with Basic Auth and over its unix socket) against, in the same run, the same
 * server-everything called directly over stdio, the same server-everything served by the SDK's
 * Streamable HTTP transport (its own `streamableHttp` mode), and a minimal SDK Streamable HTTP server
 * whose only tool is an in-process echo (JSON and SSE answers). Sequential latency p50/p99, throughput with 16 callers, and server CPU per call (16 callers
 * and sequential) counting tuicd's upstream child; driven by the raw HTTP generator (and the light stdio driver for the
 * direct peer), then by the SDK Client (over StdioClientTransport for the direct peer).
 * The tuicd rows run on uWS (forced); a second tuicd on its node engine (node:http + ws, the fallback
 * where no uWS build loads) is driven by the raw HTTP generator over TCP, and its rows' ratio is
 * node engine / uWS: what the fallback costs a proxied call.
 * With --baseline-ref an older commit's build (bench/baseline.ts) runs as a further hub on uWS,
 * driven like `tuicd (tcp)` by the raw HTTP generator, and `tuicd (tcp)` gets a row per figure with the
 * ratio current / baseline and issue 14's goal (≥ 0.97× calls/s, ≤ 1.03× CPU per call and p50).
 */
import { baselineEngine, baselineGoalNote, requireUws, type Baseline } from '../baseline.js';
import { errorText, median, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { echoCall, echoCheck, everythingStdio, EVERYTHING_JS, startEverythingStreamable, startHub, withTempDir } from './proxyHub.js';
import {
  callFigures,
  clientCpuNote,
  CONCURRENT_CALLERS,
  CPU_UNIT,
  durationsFor,
  figureRows,
  lightStdio,
  measurePeers,
  ratioNote,
  ratioTo,
  rawHttp,
  sdkHttp,
  sdkStdio,
  seriesKey,
  type Drive,
  type Figure,
  type NoteFor,
  type Peer,
  type Series,
} from './proxyMeasure.js';
import { startBare, type McpTarget } from './toolsCallTargets.js';

/** The issue's goals: ≥ 2× the bare SDK Streamable HTTP server's throughput, ≤ 0.3 ms server CPU per call with the upstream child counted. */
const GOAL_THROUGHPUT_RATIO = 2;
const GOAL_CPU_MS_PER_CALL = 0.3;

const UPSTREAM = 'everything';
/** A minimal SDK Streamable HTTP server whose only tool is an in-process echo: proxies nothing. */
const BARE = 'minimal SDK echo server (tcp)';
/** server-everything's own HTTP mode: the SDK's transport on express, SSE answers, an event store. */
const EVERYTHING_HTTP = 'bare SDK server + server-everything (tcp)';
/** The SDK's default response mode (no enableJsonResponse), as its README runs it: each POST answered on an SSE stream. */
const BARE_SSE = 'minimal SDK echo server, SSE answers (tcp)';
const TUICD_TCP = 'tuicd (tcp)';
const TUICD_UNIX = 'tuicd (unix)';
/** tuicd forced onto node:http + ws; raw HTTP over TCP only (its SDK-Client and unix rows would add minutes, not insight). */
const TUICD_NODE_ENGINE = 'tuicd, node engine (tcp)';
const DIRECT = 'direct stdio';
const TUICD_PEERS = new Set([TUICD_TCP, TUICD_UNIX, TUICD_NODE_ENGINE]);

type Driver = 'raw HTTP' | 'SDK Client';
type StartedOrError = McpTarget | { error: string };

async function attemptStart(what: string, start: () => Promise<McpTarget>): Promise<StartedOrError> {
  try {
    return await start();
  } catch (err) {
    const why = errorText(err);
    return { error: why.startsWith('uWS unavailable') ? why : `${what} did not start: ${why}` };
  }
}

function peer(name: string, server: StartedOrError, drive: (t: McpTarget) => Drive): Peer {
  return { name, drive: 'error' in server ? server : drive(server) };
}

interface Servers {
  bare: StartedOrError;
  bareSse: StartedOrError;
  everythingHttp: StartedOrError;
  hub: StartedOrError;
  hubNode: StartedOrError;
  /** --baseline-ref only: the older build's hub and its peer name. */
  baseline?: { name: string; hub: StartedOrError };
}

/** `tuicd (baseline d6877b6)` → `tuicd (baseline d6877b6, tcp)`. */
const baselinePeerName = (b: Baseline): string => b.label.replace(/\)$/, ', tcp)');

function peersFor(driver: Driver, { bare, bareSse, everythingHttp, hub, hubNode, baseline }: Servers): Peer[] {
  const everything = [EVERYTHING_JS, 'stdio'];
  if (driver === 'raw HTTP') {
    return [
      peer(BARE, bare, (t) => rawHttp(t, echoCall(null), 'tcp')),
      peer(BARE_SSE, bareSse, (t) => rawHttp(t, echoCall(null), 'tcp')),
      peer(EVERYTHING_HTTP, everythingHttp, (t) => rawHttp(t, echoCall(null), 'tcp')),
      peer(TUICD_TCP, hub, (t) => rawHttp(t, echoCall(UPSTREAM), 'tcp')),
      // Right after tuicd (tcp): within a repetition the two run back to back (but one rotation).
      ...(baseline ? [peer(baseline.name, baseline.hub, (t) => rawHttp(t, echoCall(UPSTREAM), 'tcp'))] : []),
      peer(TUICD_UNIX, hub, (t) => rawHttp(t, echoCall(UPSTREAM), 'unix')),
      peer(TUICD_NODE_ENGINE, hubNode, (t) => rawHttp(t, echoCall(UPSTREAM), 'tcp')),
      { name: DIRECT, drive: lightStdio(everything, echoCall(null)) },
    ];
  }
  return [
    peer(BARE, bare, (t) => sdkHttp(t, echoCall(null))),
    peer(BARE_SSE, bareSse, (t) => sdkHttp(t, echoCall(null))),
    peer(EVERYTHING_HTTP, everythingHttp, (t) => sdkHttp(t, echoCall(null))),
    peer(TUICD_TCP, hub, (t) => sdkHttp(t, echoCall(UPSTREAM))),
    { name: DIRECT, drive: sdkStdio(everything, echoCall(null)) },
  ];
}

/**
 * The goal a tuicd row is held to, by figure (the CPU goal is stated under load). The issue's "bare
 * SDK Streamable HTTP server" is the one measured in front of server-everything (1.45–1.66 ms,
 * 620–830 calls/s): here the SDK's transport serving server-everything itself, the
 * ratio column. The minimal in-process echo server (JSON and SSE answers) proxies nothing, so its
 * ratio is reported beside it as the strictest reference. Under the SDK Client the client itself
 * takes about a core and every server runs at the client's pace: those rows are reported, and the
 * goals are judged on the raw-HTTP rows.
 */
function goalNote(driver: Driver, fig: Figure, r: BenchRow, series: Map<string, Series>): string | undefined {
  if (fig.callers !== CONCURRENT_CALLERS) return undefined;
  if (r.unit === 'calls/s') {
    const ratios = [EVERYTHING_HTTP, BARE, BARE_SSE].flatMap((other) => {
      const ratio = ratioTo(r, fig, series, other);
      return ratio === undefined ? [] : [{ other, ratio }];
    });
    const issueBaseline = ratios.find((x) => x.other === EVERYTHING_HTTP);
    const stricter = ratios.filter((x) => x.other !== EVERYTHING_HTTP).map((x) => `${x.ratio.toFixed(2)}× ${x.other}`);
    const verdict =
      driver === 'SDK Client'
        ? 'not judged here (client-bound; see the raw-HTTP rows)'
        : issueBaseline === undefined
          ? 'no baseline figure'
          : issueBaseline.ratio >= GOAL_THROUGHPUT_RATIO
            ? 'met'
            : 'MISSED';
    return `goal ≥ ${GOAL_THROUGHPUT_RATIO}× ${EVERYTHING_HTTP}: ${verdict}${stricter.length ? `; stricter references: ${stricter.join(', ')}` : ''}`;
  }
  if (r.unit === CPU_UNIT) {
    if (driver === 'SDK Client') return `goal ≤ ${GOAL_CPU_MS_PER_CALL} ms: not judged here (client-bound; see the raw-HTTP rows)`;
    return `goal ≤ ${GOAL_CPU_MS_PER_CALL} ms: ${r.median <= GOAL_CPU_MS_PER_CALL ? 'met' : 'MISSED'}`;
  }
  return undefined;
}

/**
 * The node-engine tuicd's row of one figure: its ratio column is node engine / tuicd on uWS (same
 * run), the ratio to the issue's baseline and the goals go in the note. Where uWS cannot load the
 * row still stands, and its note says why there is no ratio.
 */
function nodeEngineRows(ctx: BenchContext, fig: Figure, series: Map<string, Series>, hub: StartedOrError, notes: NoteFor): BenchRow[] {
  const uwsLabel = fig.label ? `${TUICD_TCP} ${fig.label}` : TUICD_TCP;
  return figureRows(ctx, fig, [TUICD_NODE_ENGINE], series, TUICD_TCP, (name, r, s) => {
    const vsIssueBaseline = ratioNote(r, fig, series, EVERYTHING_HTTP);
    const uwsMissing =
      r.ratio === undefined
        ? `no ratio to ${uwsLabel}: ${'error' in hub ? hub.error : (series.get(seriesKey(TUICD_TCP, fig.callers))?.error ?? 'no values')}`
        : undefined;
    const direction = r.ratio !== undefined ? `ratio = node engine / uWS (${fig.unit === 'calls/s' ? 'higher' : 'lower'} is better)` : undefined;
    return [uwsMissing, direction, vsIssueBaseline, ...notes(name, r, s)];
  });
}

/**
 * --baseline-ref: `tuicd (tcp)` against the older build, one row per raw-HTTP figure, ratio current /
 * baseline. Goals (issue 14): calls/s ≥ 0.97×, CPU per call and sequential p50 ≤ 1.03×; p99 is shown
 * without a goal (a tail of a few thousand calls moves more than 3 % between runs).
 */
function baselineRows(ctx: BenchContext, fig: Figure, series: Map<string, Series>, baselineName: string, detail: string | undefined): BenchRow[] {
  const b = series.get(seriesKey(baselineName, fig.callers));
  const bValues = b && !b.error ? fig.pick(b) : [];
  return figureRows(ctx, fig, [TUICD_TCP], series, baselineName, (_name, r, s) => {
    const mine = fig.pick(s);
    const goal =
      fig.unit === 'calls/s'
        ? baselineGoalNote(mine, bValues, true)
        : fig.unit === CPU_UNIT || fig.label === 'p50'
          ? baselineGoalNote(mine, bValues, false)
          : 'no goal on p99';
    const missing = r.ratio === undefined ? `no ratio to ${baselineName}: ${b?.error ?? 'no values'}` : undefined;
    const upstream = fig.unit === CPU_UNIT && s.descendantsCpuMs.length ? `of which the upstream child ${median(s.descendantsCpuMs).toFixed(3)} ms` : undefined;
    return [missing, r.ratio === undefined ? undefined : goal, fig.unit === 'calls/s' ? detail : undefined, upstream, clientCpuNote(fig, s)];
  });
}

/** The older build's hub on uWS (forced where its CLI has --http-engine), its engine read back from /health. */
async function startBaselineHub(tmp: string, b: Baseline, hubSetup: { check: ReturnType<typeof echoCheck> }): Promise<{ target: McpTarget; detail: string }> {
  if ('error' in b) throw new Error(b.error);
  const engine = baselineEngine(b);
  const target = await startHub(tmp, [everythingStdio(UPSTREAM)], {
    ...hubSetup,
    ...(engine ? { engine } : {}),
    dirName: 'tuicd-config-baseline',
    main: b.mainPath,
  });
  try {
    const unknownEngine = await requireUws(b.label, target.socketPath, undefined);
    const detail = [
      `${b.label} is commit ${b.commit.slice(0, 12)}`,
      unknownEngine,
      engine ? undefined : 'started without --http-engine (its CLI has no such flag)',
      b.buildNote,
    ];
    return { target, detail: detail.filter(Boolean).join('; ') };
  } catch (err) {
    await target.proc.stop();
    throw err;
  }
}

export const run: BenchModule = (ctx) =>
  withTempDir('tuicd-bench-proxy-', async (tmp) => {
    const started: McpTarget[] = [];
    const keep = (s: StartedOrError): StartedOrError => {
      if (!('error' in s)) started.push(s);
      return s;
    };
    try {
      // One at a time: one server's start-up CPU must not delay the other's.
      const bare = keep(await attemptStart('the bare SDK server', () => startBare(tmp, echoCheck(null))));
      const bareSse = keep(await attemptStart('the bare SDK server (SSE answers)', () => startBare(tmp, echoCheck(null), 'sse')));
      const everythingHttp = keep(await attemptStart('server-everything in Streamable HTTP mode', () => startEverythingStreamable()));
      const hubSetup = { check: echoCheck(UPSTREAM) };
      const hub = keep(
        await attemptStart('tuicd with server-everything', async () => {
          const t = await startHub(tmp, [everythingStdio(UPSTREAM)], { ...hubSetup, engine: 'uws' });
          // With a baseline, the current hub's engine is read back from /health too: the ratio compares builds, not engines.
          if (ctx.baseline) {
            try {
              await requireUws('tuicd', t.socketPath, undefined);
            } catch (err) {
              await t.proc.stop();
              throw err;
            }
          }
          return t;
        }),
      );
      let baselineDetail: string | undefined;
      const b = ctx.baseline;
      const baseline = b
        ? {
            name: baselinePeerName(b),
            hub: keep(
              await attemptStart(`${b.label} with server-everything`, async () => {
                const started = await startBaselineHub(tmp, b, hubSetup);
                baselineDetail = started.detail;
                return started.target;
              }),
            ),
          }
        : undefined;
      const hubNode = keep(
        await attemptStart('tuicd (node engine) with server-everything', () =>
          startHub(tmp, [everythingStdio(UPSTREAM)], { ...hubSetup, engine: 'node', dirName: 'tuicd-config-node' }),
        ),
      );
      const rows: BenchRow[] = [];
      for (const driver of ['raw HTTP', 'SDK Client'] as const) {
        const peers = peersFor(driver, { bare, bareSse, everythingHttp, hub, hubNode, ...(baseline ? { baseline } : {}) });
        const series = await measurePeers(peers, [1, CONCURRENT_CALLERS], ctx.repetitions, durationsFor(ctx));
        const how = driver === 'raw HTTP' ? 'raw HTTP; direct: light stdio driver' : 'SDK Client';
        for (const fig of callFigures(`proxied echo (${how})`)) {
          const notes: NoteFor = (name, r, s) => [
            TUICD_PEERS.has(name) ? goalNote(driver, fig, r, series) : undefined,
            name !== DIRECT ? ratioNote(r, fig, series, DIRECT) : undefined,
            fig.unit === CPU_UNIT && (TUICD_PEERS.has(name) || name === baseline?.name) && s.descendantsCpuMs.length
              ? `of which the upstream child ${median(s.descendantsCpuMs).toFixed(3)} ms`
              : undefined,
            clientCpuNote(fig, s),
          ];
          const names = peers.map((p) => p.name).filter((n) => n !== TUICD_NODE_ENGINE);
          rows.push(...figureRows(ctx, fig, names, series, EVERYTHING_HTTP, notes));
          if (driver === 'raw HTTP') rows.push(...nodeEngineRows(ctx, fig, series, hub, notes));
          if (driver === 'raw HTTP' && baseline) rows.push(...baselineRows(ctx, fig, series, baseline.name, baselineDetail));
        }
      }
      return rows;
    } finally {
      await Promise.all(started.map((t) => t.proc.stop()));
    }
  });
