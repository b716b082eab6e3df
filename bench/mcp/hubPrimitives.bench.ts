/**
 * Issue 28: the MCP primitives besides tools through tuicd's hub against the same stdio upstream
 * straight, in the same run. server-everything's `resources/read` of its architecture document
 * (through tuicd as `tuic://everything/<uri>`) and `prompts/get args-prompt` (as
 * `everything__args-prompt`), with proxied `tools/call echo` measured the same way as the reference
 * (the issue asks for the tools/call figures' level): tuicd on TCP with Basic Auth driven by the raw
 * HTTP generator, the direct peer by the light stdio driver; sequential p50/p99, calls/s with 16
 * callers (**goal ≥ 0.9×** direct, on the paired per-repetition ratios) and CPU per call with the
 * upstream child counted. Beside them, the same server-everything served straight over HTTP by the
 * SDK's own transport, the baseline the proxied tools/call figures are set against. Then a sampling round trip: the asking fixture's `sample` tool asks the
 * client sampling/createMessage; an SDK Client that declares sampling and answers at once calls it
 * through tuicd (Streamable HTTP) and directly (stdio), one call at a time: p50/p99 of the whole
 * call and what the hub adds to the p50 (tuicd − direct, paired by repetition), beside the same
 * fixture's call that asks the client nothing, as the reference.
 */
import { fileURLToPath } from 'node:url';

import { namespacedUri } from '../../shared/upstreamUris.js';
import { errorText, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { checkRequests, REQUEST_OPTIONS, toolText, type CheckedRequest, type HubProblems } from './hubPrimitivesCheck.js';
import { echoCall, echoCheck, everythingStdio, EVERYTHING_JS, startEverythingStreamable, startHub, withTempDir } from './proxyHub.js';
import {
  callFigures,
  clientCpuNote,
  CONCURRENT_CALLERS,
  CPU_UNIT,
  durationsFor,
  figureRows,
  LATENCY_UNIT,
  lightStdio,
  measurePeers,
  rawHttp,
  sdkHttp,
  sdkStdio,
  seriesKey,
  type Drive,
  type Figure,
  type NoteFor,
  type Peer,
  type Request,
  type Series,
} from './proxyMeasure.js';
import type { ToolCall } from './toolsCallShared.js';
import type { McpTarget } from './toolsCallTargets.js';
import { stdioServer } from '../../test/helpers/upstreamServers.js';

/** Issue 28's goal for resources/read and prompts/get over stdio upstreams. */
const GOAL_RATIO = 0.9;

const EVERYTHING = 'everything';
const ASKING = 'ask';
const ASKING_JS = fileURLToPath(new URL('../../test/fixtures/upstreams/askingServer.js', import.meta.url));
const EVERYTHING_ARGS = [EVERYTHING_JS, 'stdio'];

const DOCUMENT_URI = 'demo://resource/static/document/architecture.md';
const PROMPT = 'args-prompt';
const PROMPT_ARGUMENTS = { city: 'Springfield', state: 'Illinois' };
const SAMPLE_ARGUMENTS = { prompt: 'say something' };

const TUICD = 'tuicd (tcp)';
const DIRECT = 'direct stdio';
/**
 * server-everything served over HTTP by the SDK's own Streamable HTTP transport (its `streamableHttp`
 * mode): the baseline the proxied tools/call figures are set against, a client reaching the same
 * server straight over HTTP instead of through tuicd.
 */
const EVERYTHING_HTTP = 'bare SDK server + server-everything (tcp)';

/** One measured primitive: the request through tuicd, the same request straight to server-everything. */
interface Primitive {
  check: CheckedRequest;
  viaHub: Request;
  direct: Request;
  /** The issue's ≥ 0.9× goal applies (not to the tools/call reference). */
  goal: boolean;
}

const textOfContents = (contents: Array<{ text: string } | { blob: string }>): string => contents.map((c) => ('text' in c ? c.text : '(blob)')).join('\n');

const PRIMITIVES: Primitive[] = [
  {
    check: {
      name: 'resources/read architecture.md',
      directServer: EVERYTHING_ARGS,
      viaHub: async (c) => textOfContents((await c.readResource({ uri: namespacedUri(EVERYTHING, DOCUMENT_URI) }, REQUEST_OPTIONS)).contents),
      direct: async (c) => textOfContents((await c.readResource({ uri: DOCUMENT_URI }, REQUEST_OPTIONS)).contents),
    },
    viaHub: { method: 'resources/read', params: { uri: namespacedUri(EVERYTHING, DOCUMENT_URI) } },
    direct: { method: 'resources/read', params: { uri: DOCUMENT_URI } },
    goal: true,
  },
  {
    check: {
      name: `prompts/get ${PROMPT}`,
      directServer: EVERYTHING_ARGS,
      viaHub: async (c) => JSON.stringify((await c.getPrompt({ name: `${EVERYTHING}__${PROMPT}`, arguments: PROMPT_ARGUMENTS }, REQUEST_OPTIONS)).messages),
      direct: async (c) => JSON.stringify((await c.getPrompt({ name: PROMPT, arguments: PROMPT_ARGUMENTS }, REQUEST_OPTIONS)).messages),
    },
    viaHub: { method: 'prompts/get', params: { name: `${EVERYTHING}__${PROMPT}`, arguments: PROMPT_ARGUMENTS } },
    direct: { method: 'prompts/get', params: { name: PROMPT, arguments: PROMPT_ARGUMENTS } },
    goal: true,
  },
  {
    check: {
      name: 'tools/call echo (reference)',
      directServer: EVERYTHING_ARGS,
      viaHub: async (c) => toolText(await c.callTool(echoCall(EVERYTHING), undefined, REQUEST_OPTIONS)),
      direct: async (c) => toolText(await c.callTool(echoCall(null), undefined, REQUEST_OPTIONS)),
    },
    viaHub: echoCall(EVERYTHING),
    direct: echoCall(null),
    goal: false,
  },
];

const sampleCall = (upstream: string | null): ToolCall => ({ name: upstream === null ? 'sample' : `${upstream}__sample`, arguments: SAMPLE_ARGUMENTS });

const SAMPLING: CheckedRequest = {
  name: 'sampling round trip',
  directServer: [ASKING_JS],
  viaHub: async (c) => toolText(await c.callTool(sampleCall(ASKING), undefined, REQUEST_OPTIONS)),
  direct: async (c) => toolText(await c.callTool(sampleCall(null), undefined, REQUEST_OPTIONS)),
};

/** The fixture's `log` tool with no levels: the same upstream and client, no request to the client. */
const plainCall = (upstream: string | null): ToolCall => ({ name: upstream === null ? 'log' : `${upstream}__log`, arguments: { levels: [] } });

const PLAIN_CALL: CheckedRequest = {
  name: 'the asking fixture asking nothing',
  directServer: [ASKING_JS],
  viaHub: async (c) => toolText(await c.callTool(plainCall(ASKING), undefined, REQUEST_OPTIONS)),
  direct: async (c) => toolText(await c.callTool(plainCall(null), undefined, REQUEST_OPTIONS)),
};

type HubOrError = McpTarget | { error: string };

/** A peer through tuicd: its drive, or why it cannot run (tuicd did not start, or the check failed). */
function hubPeer(name: string, hub: HubOrError, problems: HubProblems, request: string, drive: (t: McpTarget) => Drive): Peer {
  if ('error' in hub) return { name, drive: hub };
  const problem = problems.get(request);
  return { name, drive: problem === undefined ? drive(hub) : { error: `through tuicd ${request} failed its check: ${problem}` } };
}

/**
 * The calls/s note: the two peers run back to back in each repetition, so their values pair up.
 * With the goal, the verdict is on the median of the per-repetition ratios and says whether every
 * pair agrees; without (the tools/call reference), the same ratios are given for comparison.
 */
function throughputNote(mine: number[], direct: number[], withGoal: boolean): string | undefined {
  if (mine.length === 0 || direct.length === 0) return undefined;
  const goal = withGoal ? `goal ≥ ${GOAL_RATIO}× ${DIRECT} (issue 28)` : `reference for the ${GOAL_RATIO}× goal of resources/read and prompts/get`;
  const holds = (ratio: number): boolean => ratio >= GOAL_RATIO;
  const verdict = (ratio: number): string => (withGoal ? (holds(ratio) ? 'met' : 'MISSED') : 'no goal of its own');
  if (mine.length !== direct.length || direct.some((d) => d === 0))
    return `${goal}: ${verdict(median(mine) / median(direct))} on the ratio of medians (no pairs)`;
  const pairs = mine.map((m, i) => m / direct[i]!);
  const m = median(pairs);
  const disagree = pairs.filter((p) => holds(p) !== holds(m)).length;
  const range = `${Math.min(...pairs).toFixed(3)}–${Math.max(...pairs).toFixed(3)}×`;
  const strength = disagree === 0 ? 'every repetition agrees' : `inconclusive: ${disagree} of ${pairs.length} repetitions say otherwise`;
  return `${goal}: ${verdict(m)} (paired per-repetition ratio: median ${m.toFixed(3)}×, range ${range}${withGoal ? `; ${strength}` : ''})`;
}

const valuesOf = (series: Map<string, Series>, peer: string, fig: Figure): number[] => {
  const s = series.get(seriesKey(peer, fig.callers));
  return s && !s.error ? fig.pick(s) : [];
};

/** tuicd's calls/s against the bare SDK HTTP server's, paired by repetition (no goal of its own: the tools/call figures' baseline). */
function httpBaselineNote(mine: number[], bare: number[]): string | undefined {
  if (mine.length === 0 || mine.length !== bare.length || bare.some((b) => b === 0)) return undefined;
  const pairs = mine.map((m, i) => m / bare[i]!);
  return `vs ${EVERYTHING_HTTP}: paired ratio median ${median(pairs).toFixed(2)}×, range ${Math.min(...pairs).toFixed(2)}–${Math.max(...pairs).toFixed(2)}×`;
}

async function primitiveRows(ctx: BenchContext, hub: HubOrError, problems: HubProblems, p: Primitive, everythingHttp: HubOrError): Promise<BenchRow[]> {
  const peers: Peer[] = [
    hubPeer(TUICD, hub, problems, p.check.name, (t) => rawHttp(t, p.viaHub, 'tcp')),
    { name: DIRECT, drive: lightStdio(EVERYTHING_ARGS, p.direct) },
    { name: EVERYTHING_HTTP, drive: 'error' in everythingHttp ? everythingHttp : rawHttp(everythingHttp, p.direct, 'tcp') },
  ];
  const series = await measurePeers(peers, [1, CONCURRENT_CALLERS], ctx.repetitions, durationsFor(ctx));
  const rows: BenchRow[] = [];
  for (const fig of callFigures(`hub ${p.check.name} (raw HTTP; direct: light stdio driver)`)) {
    const notes: NoteFor = (name, _r, s) => [
      name === TUICD && fig.unit === 'calls/s' ? throughputNote(valuesOf(series, TUICD, fig), valuesOf(series, DIRECT, fig), p.goal) : undefined,
      name === TUICD && fig.unit === 'calls/s' ? httpBaselineNote(valuesOf(series, TUICD, fig), valuesOf(series, EVERYTHING_HTTP, fig)) : undefined,
      fig.unit === CPU_UNIT && name === TUICD && s.descendantsCpuMs.length
        ? `of which the upstream child ${median(s.descendantsCpuMs).toFixed(3)} ms`
        : undefined,
      clientCpuNote(fig, s),
    ];
    rows.push(...figureRows(ctx, fig, [TUICD, DIRECT, EVERYTHING_HTTP], series, DIRECT, notes));
  }
  return rows;
}

/** The peers' names for the fixture's call that asks the client nothing (the sampling reference). */
const TUICD_PLAIN = `${TUICD}, no client request`;
const DIRECT_PLAIN = `${DIRECT}, no client request`;

/** The added-latency row of a pair: tuicd p50 − direct p50 per repetition, with the paired ratio in the note. */
function addedRow(ctx: BenchContext, p50: Figure, series: Map<string, Series>, hubName: string, directName: string, extra?: string): BenchRow[] {
  const mine = valuesOf(series, hubName, p50);
  const direct = valuesOf(series, directName, p50);
  if (mine.length === 0 || mine.length !== direct.length) return [];
  const added = mine.map((m, i) => m - direct[i]!);
  const ratios = mine.map((m, i) => m / direct[i]!);
  const range = (v: number[], digits: number): string => `${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}`;
  const variant = hubName === TUICD ? 'added by the hub p50' : `added by the hub p50, no client request`;
  const note = `${hubName} p50 − ${directName} p50, paired by repetition (range ${range(added, 3)} ms); paired ratio median ${median(ratios).toFixed(2)}×, range ${range(ratios, 2)}×`;
  return [withNote(row(p50.group, variant, ctx, LATENCY_UNIT, added), [note, extra].filter(Boolean).join('; '))];
}

/**
 * Sequential sampling round trips, SDK Client on both sides: p50/p99 and what the hub adds to the
 * p50. The same fixture's `log` tool with no levels (it asks the client nothing) runs beside them,
 * interleaved, as the reference: what the hub adds to any call of this upstream over this client,
 * so the difference is what the round trip to the client costs through the hub.
 */
async function samplingRows(ctx: BenchContext, hub: HubOrError, problems: HubProblems): Promise<BenchRow[]> {
  const peers: Peer[] = [
    hubPeer(TUICD, hub, problems, SAMPLING.name, (t) => sdkHttp(t, sampleCall(ASKING), { sampling: true })),
    { name: DIRECT, drive: sdkStdio([ASKING_JS], sampleCall(null), { sampling: true }) },
    hubPeer(TUICD_PLAIN, hub, problems, PLAIN_CALL.name, (t) => sdkHttp(t, plainCall(ASKING), { sampling: true })),
    { name: DIRECT_PLAIN, drive: sdkStdio([ASKING_JS], plainCall(null), { sampling: true }) },
  ];
  const series = await measurePeers(peers, [1], ctx.repetitions, durationsFor(ctx));
  const sampling = callFigures('hub sampling round trip (SDK Client, answers at once)').filter((f) => f.callers === 1);
  const plain = callFigures('hub sampling reference: the fixture asking nothing (SDK Client)').filter((f) => f.callers === 1);
  const rows: BenchRow[] = [];
  for (const fig of sampling) rows.push(...figureRows(ctx, fig, [TUICD, DIRECT], series, DIRECT));
  const p50 = sampling.find((f) => f.label === 'p50')!;
  const plainAdded = addedRow(ctx, p50, series, TUICD_PLAIN, DIRECT_PLAIN)[0];
  const share =
    plainAdded && !Number.isNaN(plainAdded.median)
      ? `of which the same call asking nothing adds ${plainAdded.median.toFixed(3)} ms (the reference group)`
      : undefined;
  rows.push(...addedRow(ctx, p50, series, TUICD, DIRECT, share));
  for (const fig of plain) rows.push(...figureRows(ctx, fig, [TUICD_PLAIN, DIRECT_PLAIN], series, DIRECT_PLAIN));
  const plainP50 = plain.find((f) => f.label === 'p50')!;
  rows.push(...addedRow(ctx, plainP50, series, TUICD_PLAIN, DIRECT_PLAIN));
  return rows;
}

export const run: BenchModule = (ctx) =>
  withTempDir('tuicd-bench-hub-primitives-', async (tmp) => {
    let hub: HubOrError;
    try {
      hub = await startHub(tmp, [everythingStdio(EVERYTHING), stdioServer(ASKING, [ASKING_JS])], { check: echoCheck(EVERYTHING) });
    } catch (err) {
      hub = { error: `tuicd with server-everything and the asking fixture did not start: ${errorText(err)}` };
    }
    try {
      const requests = [...PRIMITIVES.map((p) => p.check), SAMPLING, PLAIN_CALL];
      let problems: HubProblems;
      try {
        problems = await checkRequests('error' in hub ? undefined : hub, requests);
      } catch (err) {
        // A direct answer failed: nothing here would measure a working request.
        throw new Error(`check before timing: ${errorText(err)}`);
      }
      let everythingHttp: HubOrError;
      try {
        everythingHttp = await startEverythingStreamable();
      } catch (err) {
        everythingHttp = { error: `server-everything over HTTP did not start: ${errorText(err)}` };
      }
      const rows: BenchRow[] = [];
      try {
        for (const p of PRIMITIVES) rows.push(...(await primitiveRows(ctx, hub, problems, p, everythingHttp)));
      } finally {
        if (!('error' in everythingHttp)) await everythingHttp.proc.stop();
      }
      rows.push(...(await samplingRows(ctx, hub, problems)));
      return rows;
    } finally {
      if (!('error' in hub)) await hub.proc.stop();
    }
  });
