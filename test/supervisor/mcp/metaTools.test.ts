/**
 * The meta-tools over a real corpus (the registered native tools, one defined here, and
 * upstream-style definitions), with a dispatch that records what call_tool hands the catalog.
 * metaCatalog.test.ts covers them as the real ToolCatalog serves them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { textEnvelope, type CallToolResult } from '../../../shared/mcpEnvelope.js';
import { createMetaTools, firstSentence, isDispatchedResult, META_TOOL_NAMES } from '../../../supervisor/mcp/tools/meta.js';
import { ToolError, type CallerContext, type NativeTool, type ToolDefinition, type ToolValue } from '../../../supervisor/mcp/tools/nativeTool.js';
import { callerContext, nativeTools, UPSTREAM_DEFINITIONS, WEATHER_TOOL } from './surfaceFixtures.js';

interface DispatchCall {
  name: string;
  args: Record<string, unknown>;
  caller: CallerContext;
}

/** A catalog's two hooks over a mutable corpus: `disabled` plays disabled_native_tools. */
function catalogSeam(corpus: readonly ToolDefinition[] = [...nativeTools().map((t) => t.definition), WEATHER_TOOL.definition, ...UPSTREAM_DEFINITIONS]) {
  const calls: DispatchCall[] = [];
  const disabled = new Set<string>();
  let corpusReads = 0;
  const answers = new Map<string, CallToolResult>();
  const meta = createMetaTools({
    corpus: () => {
      corpusReads++;
      return corpus.filter((d) => !disabled.has(d.name));
    },
    dispatch: async (name, args, caller) => {
      calls.push({ name, args, caller });
      if (disabled.has(name)) return textEnvelope({ error: `Tool '${name}' is disabled` });
      return answers.get(name) ?? textEnvelope({ ok: true, tool: name });
    },
  });
  const byName = (n: string): NativeTool => meta.tools.find((t) => t.definition.name === n)!;
  return { meta, calls, disabled, answers, corpusReads: () => corpusReads, byName };
}

async function run(tool: NativeTool, args: Record<string, unknown>, caller = callerContext()): Promise<ToolValue> {
  return tool.handler(args, caller);
}

async function refusal(tool: NativeTool, args: Record<string, unknown>): Promise<string> {
  try {
    await run(tool, args);
  } catch (err) {
    assert.ok(err instanceof ToolError, `expected a ToolError, got ${String(err)}`);
    return err.message;
  }
  assert.fail(`${tool.definition.name} accepted ${JSON.stringify(args)}`);
}

interface SearchAnswer {
  results: Array<{ name: string; summary: string }>;
  count: number;
}

test('meta_tool_definitions_returns_exactly_three_tools_with_expected_names', () => {
  const { meta } = catalogSeam();
  assert.deepEqual(
    meta.tools.map((t) => t.definition.name),
    ['search_tools', 'get_tool_schema', 'call_tool'],
  );
  assert.deepEqual(META_TOOL_NAMES, ['search_tools', 'get_tool_schema', 'call_tool']);
  for (const t of meta.tools) {
    assert.deepEqual(t.actions, [], `${t.definition.name} has no actions`);
    assert.equal(t.definition.inputSchema['type'], 'object');
  }
  assert.deepEqual(meta.tools[0]!.definition.inputSchema['required'], ['query']);
  assert.deepEqual(meta.tools[1]!.definition.inputSchema['required'], ['tool_name']);
  assert.deepEqual(meta.tools[2]!.definition.inputSchema['required'], ['tool_name']);
});

test('search_tools_requires_query: missing, empty, blank or non-string queries are refused by name', async () => {
  const search = catalogSeam().byName('search_tools');
  // Missing: the schema check's words for every required argument.
  assert.equal(await refusal(search, {}), 'query is required');
  for (const args of [{ query: '' }, { query: '   ' }, { query: 42 }, { query: null }]) {
    assert.equal(await refusal(search, args), "search_tools requires a non-empty 'query'");
  }
});

test('search_tools finds tools by name words and description words, with the first sentence as summary', async () => {
  const { byName } = catalogSeam();
  const search = byName('search_tools');
  const issue = (await run(search, { query: 'create an issue on github' })) as unknown as SearchAnswer;
  assert.equal(issue.results[0]!.name, 'github__create_issue');
  assert.equal(issue.results[0]!.summary, 'Create a new issue in a GitHub repository.');
  assert.equal(issue.count, issue.results.length);

  const weather = (await run(search, { query: 'forecast' })) as unknown as SearchAnswer;
  assert.deepEqual(weather.results, [{ name: 'weather', summary: 'Forecasts for a city.' }]);

  for (const native of nativeTools()) {
    const found = (await run(search, { query: native.definition.name, limit: 100 })) as unknown as SearchAnswer;
    assert.ok(
      found.results.some((r) => r.name === native.definition.name),
      `native tool ${native.definition.name} is found by its own name`,
    );
  }
});

test('search_tools_nonsense_query_returns_empty', async () => {
  const search = catalogSeam().byName('search_tools');
  assert.deepEqual(await run(search, { query: 'qwxzv plmokn' }), { results: [], count: 0 });
});

test('search_tools_respects_limit: default 10, clamped to 1..100, non-numbers refused', async () => {
  const many: ToolDefinition[] = Array.from({ length: 150 }, (_, i) => ({
    name: `bulk__tool_${i}`,
    description: `Shared keyword widget number ${i}.`,
    inputSchema: { type: 'object', properties: {} },
  }));
  const search = catalogSeam(many).byName('search_tools');
  const count = async (limit?: unknown): Promise<number> =>
    ((await run(search, limit === undefined ? { query: 'widget' } : { query: 'widget', limit })) as unknown as SearchAnswer).count;
  assert.equal(await count(), 10);
  assert.equal(await count(3), 3);
  assert.equal(await count(0), 1);
  assert.equal(await count(-5), 1);
  assert.equal(await count(1000), 100);
  assert.equal(await count(2.9), 2);
  assert.equal(await refusal(search, { query: 'widget', limit: 'five' }), 'search_tools \'limit\' must be a number, got "five"');
});

test('search_tools and get_tool_schema never offer a meta-tool, even if the corpus carried one', async () => {
  const leaky: ToolDefinition[] = [
    { name: 'call_tool', description: 'Shadow call_tool that should never be indexed.', inputSchema: { type: 'object', properties: {} } },
    ...UPSTREAM_DEFINITIONS,
  ];
  const { byName } = catalogSeam(leaky);
  const found = (await run(byName('search_tools'), { query: 'call tool shadow indexed' })) as unknown as SearchAnswer;
  assert.deepEqual(found.results, []);
  for (const name of META_TOOL_NAMES) {
    assert.equal(await refusal(byName('get_tool_schema'), { tool_name: name }), `'${name}' is a meta-tool: its definition is already in tools/list`);
  }
});

test('get_tool_schema returns the full definition, byte for byte as the corpus has it', async () => {
  const { byName } = catalogSeam();
  const getSchema = byName('get_tool_schema');
  const corpus = [...nativeTools().map((t) => t.definition), WEATHER_TOOL.definition, ...UPSTREAM_DEFINITIONS];
  for (const def of corpus) {
    const answer = await run(getSchema, { tool_name: def.name });
    assert.equal(JSON.stringify(answer), JSON.stringify({ name: def.name, description: def.description, inputSchema: def.inputSchema }));
  }
});

test('get_tool_schema refuses an unknown or missing tool name with a pointer to search_tools', async () => {
  const getSchema = catalogSeam().byName('get_tool_schema');
  assert.equal(await refusal(getSchema, { tool_name: 'nope' }), "Tool 'nope' not found. Use search_tools to find tools.");
  assert.equal(await refusal(getSchema, {}), 'tool_name is required');
  assert.equal(await refusal(getSchema, { tool_name: ' ' }), "get_tool_schema requires a non-empty 'tool_name'");
  assert.equal(await refusal(getSchema, { tool_name: 7 }), "get_tool_schema requires a non-empty 'tool_name'");
});

test('search_tools_excludes_disabled_native_tools and get_tool_schema_excludes_disabled_native_tools', async () => {
  const { byName, disabled, meta } = catalogSeam();
  disabled.add('weather');
  meta.rebuild();
  const found = (await run(byName('search_tools'), { query: 'weather forecast' })) as unknown as SearchAnswer;
  assert.deepEqual(found.results, []);
  assert.equal(await refusal(byName('get_tool_schema'), { tool_name: 'weather' }), "Tool 'weather' not found. Use search_tools to find tools.");
});

test('rebuild_tool_search_index_respects_disabled_native_tools: the index is built lazily, once, and again only after rebuild()', async () => {
  const { byName, disabled, meta, corpusReads } = catalogSeam();
  const search = byName('search_tools');
  const names = async (): Promise<string[]> => ((await run(search, { query: 'weather forecast' })) as unknown as SearchAnswer).results.map((r) => r.name);

  assert.equal(corpusReads(), 0, 'nothing is indexed before the first search');
  assert.deepEqual(await names(), ['weather']);
  await names();
  assert.equal(corpusReads(), 1, 'later searches reuse the index');

  disabled.add('weather');
  meta.rebuild();
  assert.deepEqual(await names(), [], 'a disabled tool leaves the index at the next rebuild');
  assert.equal(corpusReads(), 2);

  disabled.delete('weather');
  meta.rebuild();
  assert.deepEqual(await names(), ['weather'], 're-enabled, it is found again');
});

test('call_tool_blocks_meta_tool_recursion: no meta-tool, itself included, is dispatched', async () => {
  const { byName, calls } = catalogSeam();
  for (const name of META_TOOL_NAMES) {
    assert.equal(
      await refusal(byName('call_tool'), { tool_name: name, arguments: { tool_name: 'weather' } }),
      `call_tool cannot invoke meta-tool '${name}'; call it directly`,
    );
  }
  assert.equal(calls.length, 0);
});

test('call_tool_missing_arguments_defaults_to_empty_object', async () => {
  const { byName, calls } = catalogSeam();
  await run(byName('call_tool'), { tool_name: 'weather' });
  await run(byName('call_tool'), { tool_name: 'weather', arguments: null });
  assert.deepEqual(
    calls.map((c) => c.args),
    [{}, {}],
  );
});

test('call_tool refuses a missing tool_name and non-object arguments before dispatching', async () => {
  const { byName, calls } = catalogSeam();
  const call = byName('call_tool');
  assert.equal(await refusal(call, { arguments: {} }), 'tool_name is required');
  assert.equal(await refusal(call, { tool_name: '', arguments: {} }), "call_tool requires a non-empty 'tool_name'");
  assert.equal(await refusal(call, { tool_name: 'weather', arguments: [1, 2] }), "call_tool 'arguments' must be an object, got [1,2]");
  assert.equal(await refusal(call, { tool_name: 'weather', arguments: 'action=today' }), 'call_tool \'arguments\' must be an object, got "action=today"');
  assert.equal(calls.length, 0);
});

test('call_tool_propagates_addr_for_localhost_only_tools: the caller reaches dispatch unchanged', async () => {
  const { byName, calls } = catalogSeam();
  const remote = callerContext({ isLoopback: false, listener: 'tcp', tuicSession: 'a3d1e0c2-0000-4000-8000-000000000001' });
  await run(byName('call_tool'), { tool_name: 'weather', arguments: { action: 'today' } }, remote);
  assert.equal(calls.length, 1);
  assert.equal(calls[0]!.caller, remote);
  assert.deepEqual(calls[0]!.args, { action: 'today' });
});

test('call_tool_rejects_disabled_native_tool: dispatch decides, and its refusal comes back as is', async () => {
  const { byName, calls, disabled } = catalogSeam();
  disabled.add('weather');
  const answer = await run(byName('call_tool'), { tool_name: 'weather', arguments: { action: 'today' } });
  assert.equal(calls.length, 1, 'discovery does not gate dispatch: the catalog re-checks');
  assert.deepEqual(answer, textEnvelope({ error: "Tool 'weather' is disabled" }));
});

test('call_tool_routes_unknown_upstream_prefixed_name_through_proxy and passes its result through unchanged', async () => {
  const { byName, calls, answers } = catalogSeam();
  const upstreamResult: CallToolResult = {
    content: [
      { type: 'text', text: 'created #12' },
      { type: 'resource_link', uri: 'https://github.com/o/r/issues/12', name: 'issue 12' },
    ],
    structuredContent: { number: 12 },
    isError: false,
    _meta: { 'io.example/trace': 'abc' },
  };
  answers.set('github__create_issue', upstreamResult);
  const args = { owner: 'o', repo: 'r', title: 't' };
  const answer = await run(byName('call_tool'), { tool_name: 'github__create_issue', arguments: args });
  assert.equal(answer, upstreamResult, 'the very object dispatch returned');
  assert.deepEqual(answer, {
    content: [
      { type: 'text', text: 'created #12' },
      { type: 'resource_link', uri: 'https://github.com/o/r/issues/12', name: 'issue 12' },
    ],
    structuredContent: { number: 12 },
    isError: false,
    _meta: { 'io.example/trace': 'abc' },
  });
  assert.ok(isDispatchedResult(answer), 'the catalog can tell it is already a result and must not re-wrap it');
  assert.deepEqual(calls[0]!.name, 'github__create_issue');
  // A name no corpus lists still goes to dispatch: the proxy, not discovery, decides.
  await run(byName('call_tool'), { tool_name: 'unknown_upstream__tool' });
  assert.equal(calls[1]!.name, 'unknown_upstream__tool');
});

test("a native result through call_tool keeps the compact text envelope; other tools' values are not marked as dispatched", async () => {
  const { byName } = catalogSeam();
  const answer = await run(byName('call_tool'), { tool_name: 'weather' });
  assert.deepEqual(answer, { content: [{ type: 'text', text: '{"ok":true,"tool":"weather"}' }], isError: false });
  assert.ok(isDispatchedResult(answer));
  const search = await run(byName('search_tools'), { query: 'weather' });
  assert.ok(!isDispatchedResult(search));
  assert.ok(!isDispatchedResult(textEnvelope({ content: [] })));
});

test('firstSentence: up to the first sentence end or line break', () => {
  assert.equal(firstSentence('Manage sessions. Actions follow.'), 'Manage sessions.');
  assert.equal(firstSentence('Terminal sessions\n\nActions:\n- list: all'), 'Terminal sessions');
  assert.equal(firstSentence('Version 1.2 is out! Then more.'), 'Version 1.2 is out!');
  assert.equal(firstSentence(''), '');
});
