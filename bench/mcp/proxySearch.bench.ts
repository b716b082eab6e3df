/**
 * `search_tools` through the real hub (issue #5; search.bench.ts measures the index in-process):
 * tuicd in collapsed mode with four synthetic stdio upstreams of 250 tools each, so the BM25 corpus
 * holds 1,000 proxied tools plus the natives. tools/call `search_tools` over POST /mcp (TCP, Basic
 * Auth, raw HTTP generator) against `get_tool_schema` on the same session, a meta-tool call of the
 * same path and answer size that searches nothing: the ratio is what BM25 over 1,000 tools adds.
 */
import { errorText, failedRow, type BenchModule } from '../harness.js';
import { fixtureStdio, startHub, withTempDir } from './proxyHub.js';
import { callFigures, clientCpuNote, CONCURRENT_CALLERS, durationsFor, figureRows, measurePeers, rawHttp } from './proxyMeasure.js';
import type { CallCheck, McpTarget } from './toolsCallTargets.js';

const UPSTREAMS = 4;
const TOOLS_PER_UPSTREAM = 250;
/** The fixture's first tool (proxyFixtureUpstream.ts renames the corpus' `github__create_issue`), and a query it answers. */
const KNOWN_TOOL = 'fx1__github_create_issue';
const QUERY = 'create github issue';

const SEARCH = 'search_tools';
const SCHEMA = 'get_tool_schema';

const textOf = (result: Record<string, unknown>): string => (result['content'] as Array<{ text?: string }> | undefined)?.[0]?.text ?? '';

const SEARCH_CHECK: CallCheck = {
  call: { name: SEARCH, arguments: { query: QUERY } },
  verify(result) {
    const found = JSON.parse(textOf(result) || '{}') as { results?: Array<{ name: string }> };
    return result['isError'] !== true && found.results?.[0]?.name.startsWith('fx') ? undefined : 'found no proxied tool';
  },
};

export const run: BenchModule = (ctx) =>
  withTempDir('tuicd-bench-proxy-search-', async (tmp) => {
    const group = `search_tools through tuicd (${(UPSTREAMS * TOOLS_PER_UPSTREAM).toLocaleString('en-US')} proxied tools, collapsed)`;
    let hub: McpTarget | undefined;
    try {
      const servers = Array.from({ length: UPSTREAMS }, (_, i) => fixtureStdio(`fx${i + 1}`, TOOLS_PER_UPSTREAM, i * TOOLS_PER_UPSTREAM));
      hub = await startHub(tmp, servers, { config: { collapse_tools: true }, check: SEARCH_CHECK });
      const peers = [
        { name: SCHEMA, drive: rawHttp(hub, { name: SCHEMA, arguments: { tool_name: KNOWN_TOOL } }, 'tcp') },
        { name: SEARCH, drive: rawHttp(hub, SEARCH_CHECK.call, 'tcp') },
      ];
      const series = await measurePeers(peers, [1, CONCURRENT_CALLERS], ctx.repetitions, durationsFor(ctx));
      return callFigures(group).flatMap((fig) =>
        figureRows(ctx, fig, [SCHEMA, SEARCH], series, SCHEMA, (name, _r, s) => [
          name === SEARCH && fig.label === 'p50' ? `query "${QUERY}"` : undefined,
          clientCpuNote(fig, s),
        ]),
      );
    } catch (err) {
      return [failedRow(group, SEARCH, ctx, 'ms', errorText(err))];
    } finally {
      await hub?.proc.stop();
    }
  });
