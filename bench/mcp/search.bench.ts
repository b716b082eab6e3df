/**
 * search_tools in collapsed mode (issue #4 item 7): BM25 query latency over a synthetic 1,000-tool
 * corpus shaped like proxied upstream tools, and what an index rebuild costs (one per tool-set
 * change). Baseline in the same run: a linear scan counting query-word substrings, what a search
 * without an index does.
 */
import { Bench } from 'tinybench';

import { type BenchContext, type BenchModule, type BenchRow, failedRow, median, row, withNote } from '../harness.js';
import { Bm25Index, type SearchDocument } from '../../supervisor/mcp/bm25.js';
import { textEnvelope } from '../../shared/mcpEnvelope.js';
import { createMetaTools } from '../../supervisor/mcp/tools/meta.js';
import type { CallerContext, ToolDefinition } from '../../supervisor/mcp/tools/nativeTool.js';

/** The index is sized for the full native + upstream corpus; 190 tools measured live, 1,000 is headroom. */
const CORPUS_TOOLS = 1_000;
const RESULT_LIMIT = 10;
/** Per repetition, for each variant. */
const TIME_MS = { full: 1_000, quick: 200 } as const;

const UPSTREAMS = [
  'github',
  'gitlab',
  'jira',
  'linear',
  'slack',
  'notion',
  'postgres',
  'filesystem',
  'kubernetes',
  'sentry',
  'stripe',
  'figma',
  'confluence',
  'datadog',
  'vercel',
  'docker',
  'aws',
  'gcal',
  'gmail',
  'playwright',
];
const VERBS = ['create', 'list', 'get', 'update', 'delete', 'search', 'close', 'merge', 'comment_on', 'archive', 'export', 'sync'];
const NOUNS = [
  'issue',
  'pullRequest',
  'branch',
  'file',
  'comment',
  'user',
  'project',
  'channel',
  'message',
  'pod',
  'deployment',
  'table',
  'query',
  'dashboard',
  'page',
  'event',
  'invoice',
  'bucket',
  'label',
  'release',
];
const PHRASES = [
  'Returns a paginated JSON list; pass cursor from the previous page to continue.',
  'Requires write access to the workspace and fails with 403 otherwise.',
  'Fields not given keep their current value. Timestamps are ISO 8601 in UTC.',
  'Use the id returned by the list call, not the display name.',
  'Large results are truncated to the first 100 entries; narrow the filter instead.',
  'Supports filtering by owner, state, label and updated-since.',
];
/** Queries an agent types into search_tools: tool intents in a few words. */
const QUERIES = [
  'create github issue',
  'list open pull requests',
  'read a file',
  'send slack message',
  'kubernetes pod logs',
  'delete branch',
  'search jira tickets by label',
  'postgres run query',
  'update notion page',
  'export invoices stripe',
  'sentry events for release',
  'terminal session output',
];

/** A deterministic corpus: `{upstream}__{verb}_{noun}` with one to three sentences of prose (pseudo-random, seeded). */
export function syntheticCorpus(size = CORPUS_TOOLS): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  let seed = 0x9e3779b9;
  const next = (n: number): number => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return seed % n;
  };
  for (let i = 0; i < size; i++) {
    // Every (upstream, verb, noun) once: 20 × 12 × 20 names, enough for 4,800 distinct tools.
    const upstream = UPSTREAMS[i % UPSTREAMS.length]!;
    const verb = VERBS[Math.floor(i / UPSTREAMS.length) % VERBS.length]!;
    const noun = NOUNS[Math.floor(i / (UPSTREAMS.length * VERBS.length)) % NOUNS.length]!;
    const name = `${upstream}__${verb}_${noun}`;
    const sentences = [`${verb.replace('_', ' ')} a ${noun} in ${upstream}.`];
    for (let s = next(3); s > 0; s--) sentences.push(PHRASES[next(PHRASES.length)]!);
    out.push({ name, description: sentences.join(' '), inputSchema: { type: 'object', properties: { id: { type: 'string' } } } });
  }
  return out;
}

/** The baseline: every query word against every name + description, no index. */
function linearScan(docs: readonly SearchDocument[], query: string, limit: number): string[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const scored: Array<[string, number]> = [];
  for (const d of docs) {
    const text = `${d.name} ${d.description}`.toLowerCase();
    let score = 0;
    for (const w of words) if (text.includes(w)) score++;
    if (score > 0) scored.push([d.name, score]);
  }
  return scored
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([n]) => n);
}

const CALLER: CallerContext = {
  isLoopback: true,
  listener: 'socket',
  mcpSessionId: null,
  tuicSession: null,
  boundSessionId: null,
  clientName: 'bench',
  signal: new AbortController().signal,
};

/** Runs every task of `bench` and returns each one's median operations/s. */
async function throughput(bench: Bench): Promise<Map<string, number>> {
  await bench.run();
  const out = new Map<string, number>();
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}${'error' in result ? `: ${String(result.error)}` : ''}`);
    out.set(task.name, result.throughput.p50);
  }
  return out;
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const group = `search_tools (${CORPUS_TOOLS.toLocaleString('en-US')} tools)`;
  const corpus = syntheticCorpus();
  const meta = createMetaTools({ corpus: () => corpus, dispatch: async () => textEnvelope({}) });
  const searchTools = meta.tools[0]!;
  const index = new Bm25Index(corpus);

  // Check once, outside the timing, that the index answers what it should.
  const top = index.search('create github issue', 1)[0]?.name;
  if (!top?.startsWith('github__create_issue'))
    return [failedRow(group, 'BM25 index', ctx, 'queries/s', `sanity: top hit for "create github issue" was ${top}`)];

  let q = 0;
  const nextQuery = (): string => QUERIES[q++ % QUERIES.length]!;
  const values = { index: [] as number[], handler: [] as number[], scan: [] as number[], build: [] as number[] };
  for (let rep = 0; rep < ctx.repetitions; rep++) {
    const bench = new Bench({ time: ctx.quick ? TIME_MS.quick : TIME_MS.full, warmupTime: 100, throws: true });
    bench
      .add('index', () => void index.search(nextQuery(), RESULT_LIMIT))
      .add('handler', async () => void (await searchTools.handler({ query: nextQuery() }, CALLER)))
      .add('scan', () => void linearScan(corpus, nextQuery(), RESULT_LIMIT))
      .add('build', () => void new Bm25Index(corpus));
    const ops = await throughput(bench);
    values.index.push(ops.get('index')!);
    values.handler.push(ops.get('handler')!);
    values.scan.push(ops.get('scan')!);
    values.build.push(ops.get('build')!);
  }
  const scan = { name: 'linear substring scan', median: median(values.scan) };
  const buildMs = values.build.map((opsPerSecond) => 1000 / opsPerSecond);
  return [
    row(group, 'linear substring scan', ctx, 'queries/s', values.scan),
    withNote(row(group, 'BM25 index', ctx, 'queries/s', values.index, scan), `p50 ${(1e6 / median(values.index)).toFixed(0)} µs/query`),
    withNote(row(group, 'search_tools handler', ctx, 'queries/s', values.handler, scan), 'index + summaries + arg checks'),
    withNote(row(group, 'index build', ctx, 'ms', buildMs), 'once per tool-set change; lower is better'),
  ];
};
