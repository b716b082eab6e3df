/**
 * every_documented_action_constant_matches_schema_and_description: for every tool createNativeTools
 * registers (whatever is registered when this runs, so tools added later are covered), the action
 * constant, the schema's `action` enum and the description's action lines are the same list in the
 * same order — the gate that keeps a client reading descriptions alone from missing an action.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { textEnvelope } from '../../../shared/mcpEnvelope.js';
import { createMetaTools } from '../../../supervisor/mcp/tools/meta.js';
import { ACTION_LINE, type NativeTool } from '../../../supervisor/mcp/tools/nativeTool.js';
import { nativeTools, WEATHER_TOOL } from './surfaceFixtures.js';

const ACTIONS_HEADING = 'Actions:';
/** ACTION_LINE parsed back: `- <name>: <doc>`. */
const ACTION_LINE_RE = /^- ([A-Za-z0-9_]+): (.+)$/;
const TOOL_NAME_RE = /^[a-z][a-z0-9_]*$/;
const SCHEMA_KEYS = new Set(['type', 'properties', 'required']);

/** The action names a description documents: the lines of its `Actions:` block, in order. */
function documentedActions(description: string): string[] {
  const lines = description.split('\n');
  const start = lines.indexOf(ACTIONS_HEADING);
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const m = ACTION_LINE_RE.exec(line);
    if (!m) break;
    names.push(m[1]!);
  }
  return names;
}

/** Everything wrong with one tool's surface; empty when constant, enum and description agree. */
function driftProblems(tool: NativeTool): string[] {
  const { name, description, inputSchema } = tool.definition;
  const problems: string[] = [];
  if (name.includes('__')) problems.push(`name '${name}' contains '__', the upstream separator`);
  if (!TOOL_NAME_RE.test(name)) problems.push(`name '${name}' is not lower snake_case`);
  if (description.trim() === '') problems.push('empty description');

  const extraKeys = Object.keys(inputSchema).filter((k) => !SCHEMA_KEYS.has(k));
  if (extraKeys.length > 0) problems.push(`inputSchema has keys beyond type/properties/required: ${extraKeys.join(', ')}`);
  if (inputSchema['type'] !== 'object') problems.push(`inputSchema.type is ${JSON.stringify(inputSchema['type'])}, not "object"`);
  const properties = inputSchema['properties'];
  const props = typeof properties === 'object' && properties !== null && !Array.isArray(properties) ? (properties as Record<string, unknown>) : null;
  if (!props) problems.push('inputSchema.properties is not an object');
  const required = inputSchema['required'];
  if (required !== undefined) {
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) problems.push('inputSchema.required is not a list of names');
    else for (const r of required as string[]) if (!props || !(r in props)) problems.push(`required '${r}' is not a property`);
  }

  const action = props?.['action'] as { enum?: unknown } | undefined;
  const schemaEnum = action === undefined ? [] : Array.isArray(action.enum) ? (action.enum as string[]) : null;
  if (schemaEnum === null) problems.push('the action property has no enum');
  const documented = documentedActions(description);
  const constant = [...tool.actions];
  if (JSON.stringify(constant) !== JSON.stringify(schemaEnum ?? []))
    problems.push(`actions constant ${JSON.stringify(constant)} ≠ schema enum ${JSON.stringify(schemaEnum)}`);
  if (JSON.stringify(constant) !== JSON.stringify(documented))
    problems.push(`actions constant ${JSON.stringify(constant)} ≠ description lines ${JSON.stringify(documented)}`);
  if (constant.length > 0 && !(Array.isArray(required) && required.includes('action'))) problems.push("'action' is not required");
  return problems;
}

function metaTools(): NativeTool[] {
  return createMetaTools({ corpus: () => [], dispatch: async () => textEnvelope({}) }).tools;
}

test('every_documented_action_constant_matches_schema_and_description for every registered native tool', () => {
  const tools = [...nativeTools(), ...metaTools(), WEATHER_TOOL];
  for (const tool of tools) {
    assert.deepEqual(driftProblems(tool), [], `tool '${tool.definition.name}'`);
  }
  const names = tools.map((t) => t.definition.name);
  assert.equal(new Set(names).size, names.length, `tool names are unique: ${names.join(', ')}`);
  // The test tool has actions, so the action path is exercised whatever is registered.
  assert.deepEqual(documentedActions(WEATHER_TOOL.definition.description), ['today', 'week']);
});

test('the drift gate catches a constant, an enum or a description that went its own way', () => {
  const base = WEATHER_TOOL;
  const withDescription = (description: string): NativeTool => ({ ...base, definition: { ...base.definition, description } });

  const undocumented = withDescription(base.definition.description.replace(`\n${ACTION_LINE('week', 'seven-day forecast')}`, ''));
  assert.deepEqual(driftProblems(undocumented), ['actions constant ["today","week"] ≠ description lines ["today"]']);

  const reordered = { ...base, actions: ['week', 'today'] };
  assert.equal(driftProblems(reordered).length, 2, 'order matters against both the enum and the description');

  const schema = base.definition.inputSchema as { properties: Record<string, unknown> };
  const enumDrift: NativeTool = {
    ...base,
    definition: {
      ...base.definition,
      inputSchema: { ...base.definition.inputSchema, properties: { ...schema.properties, action: { type: 'string', enum: ['today', 'week', 'month'] } } },
    },
  };
  assert.deepEqual(driftProblems(enumDrift), ['actions constant ["today","week"] ≠ schema enum ["today","week","month"]']);

  const badShape: NativeTool = {
    ...base,
    definition: { name: 'weather__today', description: 'x', inputSchema: { type: 'object', properties: {}, additionalProperties: false, required: ['city'] } },
    actions: [],
  };
  assert.deepEqual(driftProblems(badShape), [
    "name 'weather__today' contains '__', the upstream separator",
    'inputSchema has keys beyond type/properties/required: additionalProperties',
    "required 'city' is not a property",
  ]);
});

test('tool definitions do not depend on deps: two builds give byte-identical definitions', () => {
  const first = JSON.stringify(nativeTools().map((t) => [t.definition, t.actions]));
  const second = JSON.stringify(nativeTools().map((t) => [t.definition, t.actions]));
  assert.equal(first, second);
});
