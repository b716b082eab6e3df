/**
 * The meta-tools as the catalog serves them: the registered native tools, a real ConfigStore and
 * the same config → catalog.refresh() wiring the supervisor uses. What search_tools finds,
 * get_tool_schema describes and call_tool runs follows disabled_native_tools, never collapse_tools.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ConfigStore } from '../../../supervisor/config/configStore.js';
import type { CallToolResult } from '../../../shared/mcpEnvelope.js';
import { catalogSettings } from '../../../supervisor/mcp/mcpService.js';
import { ToolCatalog } from '../../../supervisor/mcp/toolCatalog.js';
import { callerContext, nativeTools } from './surfaceFixtures.js';
import { toCallToolResult } from '../../../shared/mcpEnvelope.js';
import type { ToolCallOutcome } from '../../../shared/mcpEnvelope.js';

/** Catalog calls as result objects (a proxied result may come back as raw JSON bytes). */
const call = async (catalog: { call(...a: any[]): Promise<ToolCallOutcome> }, ...args: any[]) => toCallToolResult(await catalog.call(...args));

async function catalogWithConfig(t: { after(fn: () => unknown): void }): Promise<{ catalog: ToolCatalog; config: ConfigStore }> {
  const dir = await mkdtemp(join(tmpdir(), 'tuicd-meta-catalog-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const config = new ConfigStore({ path: join(dir, 'config.json') });
  await config.load();
  const catalog = new ToolCatalog({ nativeTools: nativeTools(), settings: () => catalogSettings(config.get()) });
  const sub = config.onChange(() => catalog.refresh());
  t.after(() => {
    sub.dispose();
    catalog.dispose();
    config.dispose();
  });
  return { catalog, config };
}

function payload(result: CallToolResult): unknown {
  const first = result.content[0] as { type: string; text: string };
  assert.equal(first.type, 'text');
  return JSON.parse(first.text);
}

async function searchNames(catalog: ToolCatalog, query: string): Promise<string[]> {
  const answer = payload(await call(catalog, 'search_tools', { query, limit: 100 }, callerContext())) as { results: Array<{ name: string }> };
  return answer.results.map((r) => r.name);
}

const EVERY_NATIVE_WORD = nativeTools()
  .map((n) => n.definition.name.replace(/_/g, ' '))
  .join(' ');

test('search_tools_excludes_disabled_native_tools: config and debug, hidden by default, are not found, described or run', async (t) => {
  const { catalog, config } = await catalogWithConfig(t);
  assert.deepEqual(config.get().disabled_native_tools, ['config', 'debug']);
  const found = await searchNames(catalog, EVERY_NATIVE_WORD);
  const registered = nativeTools().map((n) => n.definition.name);
  // ai_terminal_* are off too, through ai_terminal_mcp_enabled rather than disabled_native_tools.
  const hiddenByDefault = (name: string) => name === 'config' || name === 'debug' || name.startsWith('ai_terminal_');
  for (const name of registered) {
    if (hiddenByDefault(name)) assert.ok(!found.includes(name), `${name} is hidden from search`);
    else assert.ok(found.includes(name), `${name} is found`);
  }
  for (const hidden of ['config', 'debug'].filter((n) => registered.includes(n))) {
    const schema = await call(catalog, 'get_tool_schema', { tool_name: hidden }, callerContext());
    assert.deepEqual(payload(schema), { error: `Tool '${hidden}' not found. Use search_tools to find tools.`, code: 'not_found' });
    assert.equal(schema.isError, true);
    const called = await call(catalog, 'call_tool', { tool_name: hidden, arguments: { action: 'get' } }, callerContext());
    assert.equal(called.isError, true, 'call_tool_rejects_disabled_native_tool: discovery does not gate dispatch, dispatch does');
    assert.match(JSON.stringify(payload(called)), new RegExp(`'${hidden}' is disabled`));
    assert.equal((payload(called) as { code: string }).code, 'forbidden');
  }
});

test('ai_terminal_tools_are_found_and_dispatched_only_with_ai_terminal_mcp_enabled', async (t) => {
  const { catalog, config } = await catalogWithConfig(t);
  const family = nativeTools()
    .map((n) => n.definition.name)
    .filter((n) => n.startsWith('ai_terminal_'));
  assert.equal(family.length, 13);
  const called = await call(catalog, 'call_tool', { tool_name: 'ai_terminal_get_state', arguments: { session_id: 'x' } }, callerContext());
  assert.equal(called.isError, true);
  assert.equal((payload(called) as { code: string }).code, 'forbidden');
  assert.match((payload(called) as { error: string }).error, /is off: the ai_terminal_\* tools need ai_terminal_mcp_enabled set to true/);
  await config.update({ ai_terminal_mcp_enabled: true });
  const found = await searchNames(catalog, family.join(' ').replace(/_/g, ' '));
  for (const name of family) assert.ok(found.includes(name), `${name} is found once enabled`);
});

test('tool_search_index_ignores_collapse_tools_toggle', async (t) => {
  const { catalog, config } = await catalogWithConfig(t);
  const before = await searchNames(catalog, EVERY_NATIVE_WORD);
  assert.ok(before.length > 0);
  await config.update({ collapse_tools: true });
  assert.equal(catalog.surfaceFor({ requiresMetaTools: false }), 'collapsed', 'the toggle took effect');
  assert.deepEqual(await searchNames(catalog, EVERY_NATIVE_WORD), before);
  await config.update({ collapse_tools: false });
  assert.deepEqual(await searchNames(catalog, EVERY_NATIVE_WORD), before);
});

test('rebuild_tool_search_index_respects_disabled_native_tools', async (t) => {
  const { catalog, config } = await catalogWithConfig(t);
  assert.ok((await searchNames(catalog, 'plugin dev guide')).includes('plugin_dev_guide'));
  await config.update({ disabled_native_tools: ['plugin_dev_guide'] });
  assert.ok(!(await searchNames(catalog, 'plugin dev guide')).includes('plugin_dev_guide'), 'gone after the config change');
  assert.ok((await searchNames(catalog, EVERY_NATIVE_WORD)).includes('config'), 'config, no longer disabled, is found');
  await config.update({ disabled_native_tools: ['config', 'debug'] });
  assert.ok((await searchNames(catalog, 'plugin dev guide')).includes('plugin_dev_guide'), 'back after re-enabling');
});

test('call_tool keeps the native compact text envelope: it answers exactly as the direct call', async (t) => {
  const { catalog } = await catalogWithConfig(t);
  const direct = await call(catalog, 'plugin_dev_guide', {}, callerContext());
  const viaMeta = await call(catalog, 'call_tool', { tool_name: 'plugin_dev_guide' }, callerContext());
  assert.deepEqual(viaMeta, direct);
  assert.equal(viaMeta.content.length, 1);
  assert.equal(viaMeta.isError, false);
  const text = (viaMeta.content[0] as { text: string }).text;
  assert.equal(text, JSON.stringify(JSON.parse(text)), 'compact JSON text, not a doubly wrapped envelope');
  assert.ok(!text.includes('"content":[{"type"'), 'not an envelope inside an envelope');
});

test("call_tool through the catalog: a meta name is refused, an unknown name gets the catalog's answer", async (t) => {
  const { catalog } = await catalogWithConfig(t);
  const recursion = await call(catalog, 'call_tool', { tool_name: 'call_tool', arguments: { tool_name: 'session' } }, callerContext());
  assert.deepEqual(payload(recursion), { error: "call_tool cannot invoke meta-tool 'call_tool'; call it directly", code: 'invalid_input', field: 'tool_name' });
  assert.equal(recursion.isError, true);
  const unknown = await call(catalog, 'call_tool', { tool_name: 'nope' }, callerContext());
  assert.equal(unknown.isError, true);
  assert.match((payload(unknown) as { error: string }).error, /^Unknown tool 'nope'\. Available: /);
  assert.equal((payload(unknown) as { code: string }).code, 'not_found');
});
