/**
 * The collapsed surface's meta-tools (lazy tool discovery: a client sees three tools, not hundreds):
 * search_tools, get_tool_schema and call_tool stand in for the full tool list. They see the same corpus in both surfaces — every
 * enabled non-meta tool — so discovery never widens what a caller may run: dispatch goes back
 * through the catalog, which re-applies disabled_native_tools and the upstream filters.
 */
import { Type } from 'typebox';

import type { ToolCallOutcome } from '../../../shared/mcpEnvelope.js';
import { Bm25Index } from '../bm25.js';
import { defineTool, ToolError, type CallerContext, type NativeTool, type ToolDefinition } from './nativeTool.js';
import { clipClientInput } from '../../../shared/quoteClientInput.js';

export const META_TOOL_NAMES: readonly string[] = ['search_tools', 'get_tool_schema', 'call_tool'];

export function isMetaToolName(name: string): boolean {
  return META_TOOL_NAMES.includes(name);
}

const SEARCH_LIMIT = {
  default: 10,
  min: 1,
  max: 100,
} as const;

/** What the meta-tools search and dispatch into; the catalog provides it. */
export interface MetaToolSource {
  /** Every enabled non-meta tool (native, and later `{upstream}__{tool}`), filters applied. */
  corpus(): readonly ToolDefinition[];
  /** The catalog's non-meta dispatch; it re-checks disabled tools and never throws. */
  dispatch(name: string, args: Record<string, unknown>, caller: CallerContext): Promise<ToolCallOutcome>;
  /** Whether this caller may see the tool (a project's upstream allowlist); absent = every tool. */
  visible?(name: string, caller: CallerContext): boolean;
}

export interface MetaTools {
  tools: NativeTool[];
  /** Drops the index; the next search_tools or get_tool_schema rebuilds it from the corpus. */
  rebuild(): void;
}

/**
 * call_tool's results are already MCP results (upstream ones must pass through unmodified), so
 * the catalog must not wrap them again in the native text envelope: it asks here.
 */
const dispatchedResults = new WeakSet<object>();

export function isDispatchedResult(value: unknown): value is ToolCallOutcome {
  return typeof value === 'object' && value !== null && dispatchedResults.has(value);
}

/** The first sentence of a description: up to the first `.`/`!`/`?` followed by a space, or the first line. */
export function firstSentence(description: string): string {
  const firstLine = description.trim().split('\n', 1)[0] ?? '';
  const end = /[.!?](\s|$)/.exec(firstLine);
  return end ? firstLine.slice(0, end.index + 1) : firstLine.trim();
}

interface Snapshot {
  index: Bm25Index;
  byName: Map<string, ToolDefinition>;
}

/** `<tool> requires a non-empty '<key>'`: what a mistyped or blank query or tool name is told. */
const nonEmpty = (tool: string, key: string) => `${tool} requires a non-empty '${key}'`;

/** The tool name, present and a string by the schema; a blank one is refused in the same words. */
function requireName(args: Record<string, unknown>, tool: string): string {
  const name = args['tool_name'] as string;
  if (name.trim() === '') throw new ToolError('invalid_input', nonEmpty(tool, 'tool_name'), { field: 'tool_name' });
  return name;
}

export function createMetaTools(source: MetaToolSource): MetaTools {
  let snapshot: Snapshot | null = null;
  const current = (): Snapshot => {
    if (!snapshot) {
      const defs = source.corpus().filter((d) => !isMetaToolName(d.name));
      snapshot = { index: new Bm25Index(defs), byName: new Map(defs.map((d) => [d.name, d])) };
    }
    return snapshot;
  };

  const searchTools = defineTool({
    name: 'search_tools',
    summary:
      'Keyword search (BM25) over the names and descriptions of every tool this server offers, including the ones not listed here. Returns {results:[{name, summary}], count}, best match first.',
    properties: {
      query: Type.String({ description: 'Keywords, e.g. "session output"', errorMessage: nonEmpty('search_tools', 'query') }),
      // Any number: floored and clamped into range.
      limit: Type.Number({
        description: `Most results to return, ${SEARCH_LIMIT.min}-${SEARCH_LIMIT.max} (default ${SEARCH_LIMIT.default})`,
        errorMessage: "search_tools 'limit' must be a number, got {json}",
      }),
    },
    required: ['query'],
    handler: (args, caller) => {
      const query = args['query'] as string;
      if (query.trim() === '') throw new ToolError('invalid_input', nonEmpty('search_tools', 'query'), { field: 'query' });
      const limit = (args['limit'] as number | undefined) ?? SEARCH_LIMIT.default;
      const clamped = Math.min(SEARCH_LIMIT.max, Math.max(SEARCH_LIMIT.min, Math.floor(limit)));
      const { index, byName } = current();
      const visible = source.visible;
      const hits = index.search(query, clamped, visible ? (name) => visible(name, caller) : undefined);
      const results = hits.map((hit) => ({ name: hit.name, summary: firstSentence(byName.get(hit.name)!.description) }));
      return { results, count: results.length };
    },
  });

  const getToolSchema = defineTool({
    name: 'get_tool_schema',
    summary: 'The full definition {name, description, inputSchema} of one tool named by search_tools.',
    properties: { tool_name: Type.String({ description: 'Exact tool name', errorMessage: nonEmpty('get_tool_schema', 'tool_name') }) },
    required: ['tool_name'],
    handler: (args, caller) => {
      const name = requireName(args, 'get_tool_schema');
      if (isMetaToolName(name))
        throw new ToolError('invalid_input', `'${clipClientInput(name)}' is a meta-tool: its definition is already in tools/list`, { field: 'tool_name' });
      const def = current().byName.get(name);
      if (!def || (source.visible && !source.visible(name, caller)))
        throw new ToolError('not_found', `Tool '${clipClientInput(name)}' not found. Use search_tools to find tools.`);
      return { name: def.name, description: def.description, inputSchema: def.inputSchema };
    },
  });

  const callTool = defineTool({
    name: 'call_tool',
    summary: "Runs one tool by name with its arguments and answers with that tool's own result.",
    properties: {
      tool_name: Type.String({ description: 'Exact tool name', errorMessage: nonEmpty('call_tool', 'tool_name') }),
      arguments: Type.Object(
        {},
        { additionalProperties: true, description: 'Its arguments (default {})', errorMessage: "call_tool 'arguments' must be an object, got {json}" },
      ),
    },
    required: ['tool_name'],
    handler: async (args, caller) => {
      const name = requireName(args, 'call_tool');
      if (isMetaToolName(name))
        throw new ToolError('invalid_input', `call_tool cannot invoke meta-tool '${clipClientInput(name)}'; call it directly`, { field: 'tool_name' });
      // Checked by the called tool itself: call_tool only passes them on.
      const toolArgs = (args['arguments'] as Record<string, unknown> | undefined) ?? {};
      const result = await source.dispatch(name, toolArgs, caller);
      dispatchedResults.add(result);
      return result;
    },
  });

  return {
    tools: [searchTools, getToolSchema, callTool],
    rebuild: () => {
      snapshot = null;
    },
  };
}
