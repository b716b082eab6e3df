/**
 * A proxied `tools/call` to an OAuth upstream (issue 27's Benchmarks): `oauth__whoami` through
 * tuicd's POST /mcp against `bearer__whoami`, the same kind of upstream reached with a static Bearer
 * token from the credential store, same run, same tuicd, same MCP session (oauthHub.ts). The OAuth
 * path reads the stored token set and parses it on every request (tokenRefresher.bearer()); the
 * static one reads a plain string from the same store.
 *
 * - Throughput and latency, raw HTTP generator over tuicd's unix socket (proxyMeasure.ts): calls/s
 *   with 16 callers (**goal ≥ 0.95×** the static-bearer peer), sequential p50/p99, tuicd's CPU per
 *   call. The OAuth tokens live an hour here: no refresh falls into these runs (the note counts them).
 *   Then both peers at once, 8 callers each: the same goal on a ratio the machine's drift cannot skew.
 * - The refresh: tokens that live 61 s (tuicd refreshes 60 s before expiry, so one is due about every
 *   second), one caller in this process timing every call; the call during which the provider's
 *   token endpoint was hit is the one that refreshed. Its latency against the median call of the
 *   same window, and both against the static-bearer peer's median call measured alongside.
 *
 * Both upstreams and the refresh phase's client run in this process, outside tuicd: the CPU rows
 * count tuicd alone.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { BEARER, engineName, OAUTH, startOAuthHub, STATIC_CLIENT_ID, whoami, type OAuthHub } from './oauthHub.js';
import { withTempDir } from './proxyHub.js';
import {
  callFigures,
  clientCpuNote,
  CONCURRENT_CALLERS,
  CPU_UNIT,
  durationsFor,
  figureRows,
  LATENCY_UNIT,
  measurePeers,
  rawHttp,
  seriesKey,
  type Durations,
  type Figure,
  type Series,
} from './proxyMeasure.js';
import { IS_ERROR_MARK, toolsCallBody } from './toolsCallShared.js';

/** Issue 27: the OAuth upstream's calls/s at 16 callers, at least this share of the static-bearer peer's. */
const GOAL_RATIO = 0.95;
/** tuicd refreshes a token this long before it expires (oauthStore.ts). */
const MARGIN_S = 60;
/** Token lifetime in the refresh phase: due for a refresh one whole second after it was issued. */
const SHORT_TTL_S = MARGIN_S + 1;
const LONG_TTL_S = 3600;

const BEARER_PEER = 'static bearer upstream';
const OAUTH_PEER = 'OAuth upstream';
const GROUP = 'proxied whoami, OAuth vs static bearer (unix, raw HTTP)';
const SIMULTANEOUS_GROUP = `proxied whoami, OAuth and static bearer at once (unix, raw HTTP) ${CONCURRENT_CALLERS / 2} + ${CONCURRENT_CALLERS / 2} callers`;
const REFRESH_GROUP = 'OAuth token refresh (unix, one caller in-process)';

/** The refresh phase's window per peer and repetition, and its warm-up. */
const REFRESH_WINDOW = { full: { warmupMs: 1000, durationMs: 5000 }, quick: { warmupMs: 300, durationMs: 1500 } };
const SWITCH_TIMEOUT_MS = 10_000;

/** One caller on one keep-alive connection to tuicd's unix socket, in the MCP session the hub opened. */
class SequentialCaller {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly headers: Record<string, string>;
  private id = 1000;

  constructor(
    private readonly socketPath: string,
    sessionHeaders: string[],
  ) {
    this.headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    for (const line of sessionHeaders) {
      const at = line.indexOf(':');
      this.headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
  }

  /** One tools/call; the answer's text, or throws when it is not a good result. */
  call(tool: string): Promise<string> {
    const body = toolsCallBody(this.id++, { name: tool, arguments: {} });
    return new Promise((resolve, reject) => {
      const req = http.request({ socketPath: this.socketPath, method: 'POST', path: '/mcp', agent: this.agent, headers: this.headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () =>
          res.statusCode === 200 && text.includes('"result"') && !text.includes(IS_ERROR_MARK)
            ? resolve(text)
            : reject(new Error(`${tool}: ${res.statusCode} ${text.slice(0, 300)}`)),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One window of sequential calls: latencies of the calls during which the provider refreshed, and of the others. */
interface Window {
  normal: number[];
  refreshing: number[];
  /** Calls during which the token endpoint was hit more than once (a refresh should happen once). */
  multi: number;
}

async function sequentialWindow(caller: SequentialCaller, tool: string, up: OAuthHub['oauth'], ms: number): Promise<Window> {
  const w: Window = { normal: [], refreshing: [], multi: 0 };
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const before = up.provider.refreshes;
    const t0 = performance.now();
    await caller.call(tool);
    const took = performance.now() - t0;
    const refreshed = up.provider.refreshes - before;
    if (refreshed === 0) w.normal.push(took);
    else w.refreshing.push(took);
    if (refreshed > 1) w.multi++;
  }
  return w;
}

/**
 * The refresh phase: per repetition the two peers back to back (order alternating), each a window of
 * sequential calls. Rows in ms: each peer's median call, the OAuth call that refreshed, and what the
 * refresh added to it (that call − the OAuth median call of the same window); ratios to the
 * static-bearer peer's median call.
 */
async function refreshRows(ctx: BenchContext, setup: OAuthHub): Promise<BenchRow[]> {
  const { hub, oauth, bearer } = setup;
  const d = ctx.quick ? REFRESH_WINDOW.quick : REFRESH_WINDOW.full;
  const caller = new SequentialCaller(hub.socketPath, hub.sessionHeaders);
  try {
    const peers = [
      { name: BEARER_PEER, tool: whoami(BEARER).name, up: bearer },
      { name: OAUTH_PEER, tool: whoami(OAUTH).name, up: oauth },
    ];
    for (const p of peers) await sequentialWindow(caller, p.tool, p.up, d.warmupMs);
    const bearerMedian: number[] = [];
    const oauthMedian: number[] = [];
    const refreshCall: number[] = [];
    const added: number[] = [];
    let calls = 0;
    let refreshes = 0;
    let multi = 0;
    let repsWithout = 0;
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      const windows = new Map<string, Window>();
      for (let i = 0; i < peers.length; i++) {
        const p = peers[(rep + i) % peers.length]!;
        windows.set(p.name, await sequentialWindow(caller, p.tool, p.up, d.durationMs));
      }
      const b = windows.get(BEARER_PEER)!;
      const o = windows.get(OAUTH_PEER)!;
      if (b.refreshing.length > 0) throw new Error('the static-bearer upstream saw a token refresh');
      bearerMedian.push(median(b.normal));
      oauthMedian.push(median(o.normal));
      calls += o.normal.length + o.refreshing.length;
      refreshes += o.refreshing.length;
      multi += o.multi;
      if (o.refreshing.length === 0) {
        repsWithout++;
        continue;
      }
      refreshCall.push(median(o.refreshing));
      added.push(median(o.refreshing) - median(o.normal));
    }
    const base = { name: `${BEARER_PEER}, median call`, median: median(bearerMedian) };
    const rows: BenchRow[] = [
      row(REFRESH_GROUP, base.name, ctx, LATENCY_UNIT, bearerMedian),
      withNote(
        row(REFRESH_GROUP, `${OAUTH_PEER}, median call`, ctx, LATENCY_UNIT, oauthMedian, base),
        `tokens live ${SHORT_TTL_S} s: with the ${MARGIN_S} s margin one is due about every second`,
      ),
    ];
    if (refreshCall.length === 0) {
      rows.push(failedRow(REFRESH_GROUP, `${OAUTH_PEER}, the call that refreshes`, ctx, LATENCY_UNIT, `no refresh in ${calls} calls: the token was never due`));
      return rows;
    }
    const perWindow = `${refreshes} refreshes in ${calls} OAuth calls over ${ctx.repetitions} windows of ${d.durationMs / 1000} s`;
    const once = multi === 0 ? 'the token endpoint hit once per refreshing call' : `${multi} calls hit the token endpoint more than once`;
    rows.push(
      withNote(
        row(REFRESH_GROUP, `${OAUTH_PEER}, the call that refreshes`, ctx, LATENCY_UNIT, refreshCall, base),
        [
          `${(median(refreshCall) / median(oauthMedian)).toFixed(2)}× the OAuth median call`,
          perWindow,
          once,
          repsWithout > 0 ? `${repsWithout} windows saw no refresh` : undefined,
        ]
          .filter(Boolean)
          .join('; '),
      ),
      withNote(
        row(REFRESH_GROUP, `${OAUTH_PEER}, added by the refresh`, ctx, LATENCY_UNIT, added, base),
        'per window: the refreshing call (median of its window) − the median OAuth call of the same window; ratio = how many static-bearer median calls it costs',
      ),
    );
    return rows;
  } finally {
    caller.close();
  }
}

/** Long-lived tokens from now on: the next refresh (due within a second) fetches one that lives an hour. */
async function toLongLivedTokens(setup: OAuthHub): Promise<void> {
  const { hub, oauth } = setup;
  oauth.provider.accessTtlS = LONG_TTL_S;
  const caller = new SequentialCaller(hub.socketPath, hub.sessionHeaders);
  try {
    const before = oauth.provider.refreshes;
    const deadline = Date.now() + SWITCH_TIMEOUT_MS;
    while (oauth.provider.refreshes === before) {
      if (Date.now() > deadline) throw new Error(`no refresh within ${SWITCH_TIMEOUT_MS / 1000} s to take the long-lived token`);
      await caller.call(whoami(OAUTH).name);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The refresh that happened may have been the last short one: two more seconds of calls settle it.
    const settle = Date.now() + 2000;
    while (Date.now() < settle) {
      await caller.call(whoami(OAUTH).name);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    caller.close();
  }
}

/**
 * Both peers at once, half the callers each (two generator processes started together): they share
 * the machine's state through the whole window, so their per-repetition ratio shrugs off what a
 * shared machine does between two back-to-back runs. Values per repetition: calls/s of each.
 */
async function simultaneous(ctx: BenchContext, setup: OAuthHub): Promise<{ bearer: number[]; oauth: number[] }> {
  const d = durationsFor(ctx);
  const half = CONCURRENT_CALLERS / 2;
  const drives = [rawHttp(setup.hub, whoami(BEARER), 'unix'), rawHttp(setup.hub, whoami(OAUTH), 'unix')] as const;
  const both = async (dd: Durations): Promise<[number, number]> => {
    const runs = await Promise.all(drives.map((drive) => drive(half, dd)));
    for (const r of runs) if (r.load.bad > 0) throw new Error(`${r.load.bad} of ${r.load.requests} answers were errors (${r.load.firstProblem ?? '?'})`);
    return [runs[0]!.load.rps, runs[1]!.load.rps];
  };
  await both({ warmupMs: 0, durationMs: d.warmupMs * 2 });
  const out = { bearer: [] as number[], oauth: [] as number[] };
  for (let rep = 0; rep < ctx.repetitions; rep++) {
    const [b, o] = await both(d);
    out.bearer.push(b);
    out.oauth.push(o);
  }
  return out;
}

function simultaneousRows(ctx: BenchContext, v: { bearer: number[]; oauth: number[] }): BenchRow[] {
  const half = CONCURRENT_CALLERS / 2;
  return [
    withNote(
      row(SIMULTANEOUS_GROUP, BEARER_PEER, ctx, 'calls/s', v.bearer),
      `both peers driven at once, ${half} connections each, sharing the machine's state: the steadiest ratio here`,
    ),
    withNote(row(SIMULTANEOUS_GROUP, OAUTH_PEER, ctx, 'calls/s', v.oauth, { name: BEARER_PEER, median: median(v.bearer) }), goalNote(v.oauth, v.bearer)),
  ];
}

/**
 * The goal on calls/s: the paired per-repetition ratios (the two peers run back to back in each
 * repetition), their median against 0.95, and whether every repetition agrees.
 */
function goalNote(mine: number[], peer: number[]): string {
  const goal = `goal ≥ ${GOAL_RATIO}× ${BEARER_PEER} (issue 27)`;
  const holds = (r: number): boolean => r >= GOAL_RATIO;
  if (mine.length === 0 || mine.length !== peer.length) {
    const r = median(mine) / median(peer);
    return `${goal}: ${holds(r) ? 'met' : 'MISSED'} on the ratio of medians (no pairs)`;
  }
  const pairs = mine.map((m, i) => m / peer[i]!);
  const m = median(pairs);
  const disagree = pairs.filter((p) => holds(p) !== holds(m)).length;
  const range = `${Math.min(...pairs).toFixed(3)}–${Math.max(...pairs).toFixed(3)}×`;
  const strength = disagree === 0 ? 'every repetition agrees' : `inconclusive: ${disagree} of ${pairs.length} repetitions say otherwise`;
  return `${goal}: ${holds(m) ? 'met' : 'MISSED'} (paired per-repetition ratio: median ${m.toFixed(3)}×, range ${range}; ${strength})`;
}

function throughputNotes(fig: Figure, series: Map<string, Series>, extra: { engine: string; refreshesDuring: number }) {
  return (peer: string, r: BenchRow, s: Series): Array<string | undefined> => {
    const notes: Array<string | undefined> = [clientCpuNote(fig, s)];
    const base = series.get(seriesKey(BEARER_PEER, fig.callers));
    if (peer === OAUTH_PEER && fig.unit === 'calls/s' && base && !base.error) {
      notes.unshift(goalNote(s.rps, base.rps));
      notes.push(`${extra.refreshesDuring} token refreshes during these runs`);
    }
    if (peer === OAUTH_PEER && fig.unit === CPU_UNIT && base && !base.error && base.cpuMs.length) {
      const deltaUs = (r.median - median(base.cpuMs)) * 1000;
      notes.push(`${deltaUs >= 0 ? '+' : '−'}${Math.abs(deltaUs).toFixed(1)} µs tuicd CPU per call vs the static bearer (medians)`);
    }
    if (peer === BEARER_PEER && fig.unit === 'calls/s') notes.push(`tuicd on ${extra.engine}; the upstreams run in the bench process (not in the CPU rows)`);
    return notes;
  };
}

export const run: BenchModule = (ctx) =>
  withTempDir('tuicd-bench-oauth-', async (tmp) => {
    let setup: OAuthHub | undefined;
    try {
      setup = await startOAuthHub(tmp, SHORT_TTL_S);
      const engine = await engineName(setup.hub.socketPath);
      const checker = new SequentialCaller(setup.hub.socketPath, setup.hub.sessionHeaders);
      const who = await checker.call(whoami(BEARER).name).finally(() => checker.close());
      if (!who.includes(STATIC_CLIENT_ID)) throw new Error(`${whoami(BEARER).name} did not answer for the static token: ${who.slice(0, 200)}`);
      const refresh = await refreshRows(ctx, setup);
      await toLongLivedTokens(setup);
      const refreshesBefore = setup.oauth.provider.refreshes;
      const peers = [
        { name: BEARER_PEER, drive: rawHttp(setup.hub, whoami(BEARER), 'unix') },
        { name: OAUTH_PEER, drive: rawHttp(setup.hub, whoami(OAUTH), 'unix') },
      ];
      const series = await measurePeers(peers, [1, CONCURRENT_CALLERS], ctx.repetitions, durationsFor(ctx));
      let together: BenchRow[];
      try {
        together = simultaneousRows(ctx, await simultaneous(ctx, setup));
      } catch (err) {
        together = [failedRow(SIMULTANEOUS_GROUP, OAUTH_PEER, ctx, 'calls/s', errorText(err))];
      }
      const refreshesDuring = setup.oauth.provider.refreshes - refreshesBefore;
      const calls = callFigures(GROUP).flatMap((fig) =>
        figureRows(ctx, fig, [BEARER_PEER, OAUTH_PEER], series, BEARER_PEER, throughputNotes(fig, series, { engine, refreshesDuring })),
      );
      return [...calls, ...together, ...refresh];
    } catch (err) {
      return [failedRow(GROUP, OAUTH_PEER, ctx, 'calls/s', errorText(err))];
    } finally {
      await setup?.stop();
    }
  });
