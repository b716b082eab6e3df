/**
 * A stdio MCP server with N synthetic tools, for the proxy benches' large tool lists (argv:
 * `<tools> [offset]`): names and prose come from the search bench's deterministic corpus (entries
 * offset..offset+N-1, so several fixtures together hold distinct tools), input schemas of 2–6
 * documented properties in the shape real upstreams send (~800 B a tool: a real 190-tool list
 * measured 154,117 B). Newline JSON-RPC, no SDK: initialize, ping, tools/list
 * (serialized once), tools/call (echoes its arguments). Exits when stdin closes.
 */
import { createInterface } from 'node:readline';

import { syntheticCorpus } from './search.bench.js';
import { PROTOCOL_VERSION } from './toolsCallShared.js';

const toolCount = Number(process.argv[2]);
const offset = Number(process.argv[3] ?? 0);
if (!Number.isInteger(toolCount) || toolCount < 1 || !Number.isInteger(offset) || offset < 0) {
  throw new Error('usage: proxyFixtureUpstream <tools ≥ 1> [offset ≥ 0]');
}

/** Property definitions as upstream servers write them: a type, constraints, a sentence of prose. */
const PROPERTIES: Record<string, Record<string, unknown>> = {
  owner: { type: 'string', description: 'Account or organisation that owns the resource (login name, not the display name).' },
  repo: { type: 'string', description: 'Repository name without the owner prefix.' },
  id: { type: 'string', description: 'Identifier returned by the corresponding list or create call.' },
  title: { type: 'string', minLength: 1, maxLength: 256, description: 'Short human-readable title shown in lists and notifications.' },
  body: { type: 'string', description: 'Markdown body. Mentions and references are resolved by the server.' },
  state: { type: 'string', enum: ['open', 'closed', 'all'], default: 'open', description: 'Filter by state.' },
  labels: { type: 'array', items: { type: 'string' }, description: 'Label names to apply or filter by; unknown labels are created.' },
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 30, description: 'Results per page.' },
  cursor: { type: 'string', description: 'Opaque cursor from the previous page; omit for the first page.' },
  since: { type: 'string', format: 'date-time', description: 'Only items updated at or after this ISO 8601 timestamp.' },
  dry_run: { type: 'boolean', default: false, description: 'Validate the request and report what would change without changing anything.' },
};
const PROPERTY_NAMES = Object.keys(PROPERTIES);

function inputSchema(i: number): Record<string, unknown> {
  const count = 2 + (i % 5);
  const names = Array.from({ length: count }, (_, k) => PROPERTY_NAMES[(i * 7 + k * 3) % PROPERTY_NAMES.length]!);
  const unique = [...new Set(names)];
  return {
    type: 'object',
    properties: Object.fromEntries(unique.map((n) => [n, PROPERTIES[n]!])),
    required: unique.slice(0, 1),
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  };
}

// The corpus names read `{upstream}__{verb}_{noun}`: one `__` is the hub's separator, so it becomes `_` here.
const tools = syntheticCorpus(offset + toolCount)
  .slice(offset)
  .map((t, k) => ({
    name: t.name.replace('__', '_'),
    description: t.description,
    inputSchema: inputSchema(offset + k),
    annotations: { readOnlyHint: t.name.includes('__list_') || t.name.includes('__get_') },
  }));
const toolNames = new Set(tools.map((t) => t.name));
const toolsResultJson = JSON.stringify({ tools });

interface Message {
  id?: number | string;
  method?: string;
  params?: { protocolVersion?: string; name?: string; arguments?: unknown };
}

const reply = (id: Message['id'], resultJson: string): boolean => process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}\n`);
const text = (t: string, isError: boolean): string => JSON.stringify({ content: [{ type: 'text', text: t }], isError });

function handle(m: Message): void {
  if (m.id === undefined) return; // notifications
  switch (m.method) {
    case 'initialize':
      reply(
        m.id,
        JSON.stringify({
          protocolVersion: m.params?.protocolVersion ?? PROTOCOL_VERSION,
          capabilities: { tools: {} },
          serverInfo: { name: 'tuicd-bench-fixture', version: '0.0.0' },
        }),
      );
      return;
    case 'ping':
      reply(m.id, '{}');
      return;
    case 'tools/list':
      reply(m.id, toolsResultJson);
      return;
    case 'tools/call': {
      const name = m.params?.name ?? '';
      reply(
        m.id,
        toolNames.has(name) ? text(JSON.stringify({ tool: name, arguments: m.params?.arguments ?? {} }), false) : text(`Unknown tool: ${name}`, true),
      );
      return;
    }
    default:
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } })}\n`);
  }
}

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    if (line.trim()) handle(JSON.parse(line) as Message);
  })
  .on('close', () => process.exit(0));
