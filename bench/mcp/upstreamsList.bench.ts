/**
 * tools/list with upstreams (issue #5): two tuicds, one with server-everything alone and one with
 * server-everything plus three synthetic stdio upstreams (190 upstream tools in all). Bytes of the
 * classic list and of the collapsed one (a `grok-shell-*` session gets the meta-tool surface; the
 * goal holds it ≤ 2,758 B whatever the upstream count), and tools/list latency through tuicd, which
 * answers from the list its hub pushed, against tools/list sent straight to server-everything over
 * stdio, which builds its list per request. Bytes do not vary: idle regime only.
 */
import { errorText, failedRow, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { echoCheck, everythingStdio, EVERYTHING_JS, fixtureStdio, startHub, withTempDir } from './proxyHub.js';
import { durationsFor, figureRows, LATENCY_UNIT, lightStdio, measurePeers, ratioNote, rawHttp, type Figure, type Peer } from './proxyMeasure.js';
import { openSession, post, TUICD_AUTH, type McpTarget } from './toolsCallTargets.js';

const UPSTREAM = 'everything';
/** server-everything's 13 tools plus 3 × 59 synthetic ones: a 190-tool list, the size of a real one measured at 154,117 B. */
const FIXTURE_TOOLS = [59, 59, 59];
const GOAL_COLLAPSED_BYTES = 2_758;
/** tuicd answers tools/list from a pre-serialized list: goal ≤ 0.5× the direct server's latency. */
const GOAL_LATENCY_RATIO = 0.5;
const GROK_CLIENT = 'grok-shell-bench';
const BYTES_UNIT = 'B (lower is better)';

/** One tuicd with its two sessions: the classic surface and the collapsed one. */
interface Hub {
  upstreams: number;
  classic: McpTarget;
  collapsed: McpTarget;
}

async function startHubWithSessions(tmp: string, fixtures: number[]): Promise<Hub> {
  let offset = 0;
  const servers = [everythingStdio(UPSTREAM), ...fixtures.map((n, i) => fixtureStdio(`fx${i + 1}`, n, (offset += n) - n))];
  const classic = await startHub(tmp, servers, { dirName: `hub-${servers.length}`, check: echoCheck(UPSTREAM) });
  try {
    const grok = await openSession('tuicd', classic.port, TUICD_AUTH, null, GROK_CLIENT);
    return { upstreams: servers.length, classic, collapsed: { ...classic, ...grok } };
  } catch (err) {
    await classic.proc.stop();
    throw err;
  }
}

const upstreamsLabel = (hub: Hub): string => `${hub.upstreams} upstream${hub.upstreams === 1 ? '' : 's'}`;

const headerRecord = (lines: string[]): Record<string, string> =>
  Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]));

/** The body of one tools/list answer on this session, and how many tools it lists. */
async function listOnce(t: McpTarget): Promise<{ bytes: number; tools: number }> {
  const answer = await post(t.port, headerRecord(t.sessionHeaders), JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }));
  if (answer.status !== 200) throw new Error(`tools/list answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  const tools = (JSON.parse(answer.text) as { result?: { tools?: unknown[] } }).result?.tools;
  if (!Array.isArray(tools)) throw new Error(`tools/list answered no tools: ${answer.text.slice(0, 200)}`);
  return { bytes: Buffer.byteLength(answer.text), tools: tools.length };
}

/** Exact bytes of each answer body; ratios: collapsed against classic on the same tuicd, classic against the one-upstream tuicd. */
async function byteRows(ctx: BenchContext, hubs: Hub[]): Promise<BenchRow[]> {
  const group = 'tools/list answer bytes';
  const rows: BenchRow[] = [];
  let first: { name: string; median: number } | undefined;
  for (const hub of hubs) {
    const classic = await listOnce(hub.classic);
    const collapsed = await listOnce(hub.collapsed);
    const classicName = `tuicd classic, ${upstreamsLabel(hub)}`;
    rows.push(withNote(row(group, classicName, ctx, BYTES_UNIT, [classic.bytes], first), `${classic.tools} tools`));
    first ??= { name: classicName, median: classic.bytes };
    const met = collapsed.bytes <= GOAL_COLLAPSED_BYTES ? 'met' : 'MISSED';
    const collapsedRow = row(group, `tuicd collapsed, ${upstreamsLabel(hub)}`, ctx, BYTES_UNIT, [collapsed.bytes], {
      name: classicName,
      median: classic.bytes,
    });
    rows.push(withNote(collapsedRow, `${collapsed.tools} tools; goal ≤ ${GOAL_COLLAPSED_BYTES.toLocaleString('en-US')} B: ${met}`));
  }
  return rows;
}

async function latencyRows(ctx: BenchContext, hubs: Hub[]): Promise<BenchRow[]> {
  const direct = 'server-everything direct (stdio)';
  const peers: Peer[] = [{ name: direct, drive: lightStdio([EVERYTHING_JS, 'stdio'], 'tools/list') }];
  for (const hub of hubs) {
    const name = upstreamsLabel(hub);
    peers.push({ name: `tuicd classic, ${name}`, drive: rawHttp(hub.classic, 'tools/list', 'tcp') });
    peers.push({ name: `tuicd collapsed, ${name}`, drive: rawHttp(hub.collapsed, 'tools/list', 'tcp') });
  }
  const series = await measurePeers(peers, [1], ctx.repetitions, durationsFor(ctx));
  const group = 'tools/list sequential latency (tuicd: raw HTTP over tcp; direct: light stdio driver)';
  const goalPeer = `tuicd classic, ${upstreamsLabel(hubs.at(-1)!)}`;
  const names = peers.map((p) => p.name);
  const figures: Figure[] = [
    { group, unit: LATENCY_UNIT, callers: 1, pick: (s) => s.p50, label: 'p50' },
    { group, unit: LATENCY_UNIT, callers: 1, pick: (s) => s.p99, label: 'p99' },
    { group: 'tools/list sequential, server CPU per list (incl. upstreams)', unit: 'ms CPU/list (lower is better)', callers: 1, pick: (s) => s.cpuMs },
  ];
  return figures.flatMap((fig) =>
    figureRows(ctx, fig, names, series, direct, (name, r) => [
      name === goalPeer && fig.label === 'p50'
        ? `goal ≤ ${GOAL_LATENCY_RATIO}× direct: ${r.ratio !== undefined && r.ratio <= GOAL_LATENCY_RATIO ? 'met' : 'MISSED'}`
        : undefined,
      name.startsWith('tuicd collapsed') ? ratioNote(r, fig, series, name.replace('collapsed', 'classic')) : undefined,
    ]),
  );
}

export const run: BenchModule = (ctx) =>
  withTempDir('tuicd-bench-upstreams-list-', async (tmp) => {
    const hubs: Hub[] = [];
    try {
      // One at a time: one tuicd's start-up (and its upstreams') must not delay the other's.
      for (const fixtures of [[], FIXTURE_TOOLS]) hubs.push(await startHubWithSessions(tmp, fixtures));
      return [...(ctx.regime === 'idle' ? await byteRows(ctx, hubs) : []), ...(await latencyRows(ctx, hubs))];
    } catch (err) {
      return [failedRow('tools/list with upstreams', 'tuicd', ctx, '', errorText(err))];
    } finally {
      await Promise.all(hubs.map((h) => h.classic.proc.stop()));
    }
  });
