/**
 * Proxied `tools/call` (issue #5): server-everything's `echo` through tuicd (`everything__echo`,
 * POST /mcp over TCP with Basic Auth and over its unix socket) against, in the same run, the same
 * server-everything called directly over stdio, the same server-everything served by the SDK's
 * Streamable HTTP transport (its own `streamableHttp` mode), and a minimal SDK Streamable HTTP server
 * whose only tool is an in-process echo (JSON and SSE answers). Sequential latency p50/p99, throughput with 16 callers, and server CPU per call (16 callers
 * and sequential) counting tuicd's upstream child; driven by the raw HTTP generator (and the light stdio driver for the
 * direct peer), then by the SDK Client (over StdioClientTransport for the direct peer).
 */
import { errorText, median, type BenchModule, type BenchRow } from '../harness.js';
import { echoCall, echoCheck, everythingStdio, EVERYTHING_JS, startEverythingStreamable, startHub, withTempDir } from './proxyHub.js';
import { callFigures, clientCpuNote, CONCURRENT_CALLERS, CPU_UNIT, durationsFor, figureRows, lightStdio, measurePeers, ratioNote, ratioTo, rawHttp, sdkHttp, sdkStdio, type Drive, type Figure, type Peer, type Series } from './proxyMeasure.js';
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
const DIRECT = 'direct stdio';
const TUICD_PEERS = new Set([TUICD_TCP, TUICD_UNIX]);

type Driver = 'raw HTTP' | 'SDK Client';
type StartedOrError = McpTarget | { error: string };

async function attemptStart(what: string, start: () => Promise<McpTarget>): Promise<StartedOrError> {
  try {
    return await start();
  } catch (err) {
    return { error: `${what} did not start: ${errorText(err)}` };
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
}

function peersFor(driver: Driver, { bare, bareSse, everythingHttp, hub }: Servers): Peer[] {
  const everything = [EVERYTHING_JS, 'stdio'];
  if (driver === 'raw HTTP') {
    return [
      peer(BARE, bare, (t) => rawHttp(t, echoCall(null), 'tcp')),
      peer(BARE_SSE, bareSse, (t) => rawHttp(t, echoCall(null), 'tcp')),
      peer(EVERYTHING_HTTP, everythingHttp, (t) => rawHttp(t, echoCall(null), 'tcp')),
      peer(TUICD_TCP, hub, (t) => rawHttp(t, echoCall(UPSTREAM), 'tcp')),
      peer(TUICD_UNIX, hub, (t) => rawHttp(t, echoCall(UPSTREAM), 'unix')),
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
 * SDK Streamable HTTP server" is the one PERFORMANCE.md measured in front of server-everything
 * (1.45–1.66 ms, 620–830 calls/s): here the SDK's transport serving server-everything itself, the
 * ratio column. The minimal in-process echo server (JSON and SSE answers) proxies nothing, so its
 * ratio is reported beside it as the strictest reference. Under the SDK Client the client itself
 * takes about a core and every server runs at the client's pace: those rows are reported, and the
 * goals are judged on the raw-HTTP rows, as PERFORMANCE.md advises.
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
      driver === 'SDK Client' ? 'not judged here (client-bound; see the raw-HTTP rows)' : issueBaseline === undefined ? 'no baseline figure' : issueBaseline.ratio >= GOAL_THROUGHPUT_RATIO ? 'met' : 'MISSED';
    return `goal ≥ ${GOAL_THROUGHPUT_RATIO}× ${EVERYTHING_HTTP}: ${verdict}${stricter.length ? `; stricter references: ${stricter.join(', ')}` : ''}`;
  }
  if (r.unit === CPU_UNIT) {
    if (driver === 'SDK Client') return `goal ≤ ${GOAL_CPU_MS_PER_CALL} ms: not judged here (client-bound; see the raw-HTTP rows)`;
    return `goal ≤ ${GOAL_CPU_MS_PER_CALL} ms: ${r.median <= GOAL_CPU_MS_PER_CALL ? 'met' : 'MISSED'}`;
  }
  return undefined;
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
      const hub = keep(await attemptStart('tuicd with server-everything', () => startHub(tmp, [everythingStdio(UPSTREAM)], { check: echoCheck(UPSTREAM) })));
      const rows: BenchRow[] = [];
      for (const driver of ['raw HTTP', 'SDK Client'] as const) {
        const peers = peersFor(driver, { bare, bareSse, everythingHttp, hub });
        const series = await measurePeers(peers, [1, CONCURRENT_CALLERS], ctx.repetitions, durationsFor(ctx));
        const how = driver === 'raw HTTP' ? 'raw HTTP; direct: light stdio driver' : 'SDK Client';
        for (const fig of callFigures(`proxied echo (${how})`)) {
          const rowsOfFigure = figureRows(ctx, fig, peers.map((p) => p.name), series, EVERYTHING_HTTP, (name, r, s) => [
            TUICD_PEERS.has(name) ? goalNote(driver, fig, r, series) : undefined,
            name !== DIRECT ? ratioNote(r, fig, series, DIRECT) : undefined,
            fig.unit === CPU_UNIT && TUICD_PEERS.has(name) && s.descendantsCpuMs.length ? `of which the upstream child ${median(s.descendantsCpuMs).toFixed(3)} ms` : undefined,
            clientCpuNote(fig, s),
          ]);
          rows.push(...rowsOfFigure);
        }
      }
      return rows;
    } finally {
      await Promise.all(started.map((t) => t.proc.stop()));
    }
  });
