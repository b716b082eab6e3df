/**
 * Shared inputs for the meta-tool, instruction, drift and surface tests: the native tools as
 * createNativeTools builds them (whatever is registered when the test runs), a few upstream-style
 * definitions, and a caller.
 */
import { textEnvelope } from '../../../shared/mcpEnvelope.js';
import { renderInstructions } from '../../../supervisor/mcp/instructions.js';
import { createNativeTools, type NativeToolDeps } from '../../../supervisor/mcp/tools/index.js';
import { createMetaTools } from '../../../supervisor/mcp/tools/meta.js';
import { defineTool, type CallerContext, type NativeTool, type ToolDefinition } from '../../../supervisor/mcp/tools/nativeTool.js';
import type { InstructionContext } from '../../../supervisor/mcp/surface.js';

/**
 * Deps a factory may capture but not use: any property read yields another inert value, any call
 * throws. Tool definitions must not depend on deps, so building with these must work; a factory
 * that calls a dependency while building its definition fails here by name.
 */
export function inertDeps(): NativeToolDeps {
  const inert = (path: string): unknown =>
    new Proxy(function inertDependency() {}, {
      get: (_target, key) => (typeof key === 'symbol' ? undefined : inert(`${path}.${key}`)),
      apply: () => {
        throw new Error(`a tool factory called ${path}() while building its definition: definitions must not depend on deps`);
      },
      construct: () => {
        throw new Error(`a tool factory constructed ${path} while building its definition: definitions must not depend on deps`);
      },
    });
  return inert('deps') as NativeToolDeps;
}

export function nativeTools(): NativeTool[] {
  return createNativeTools(inertDeps());
}

/** Tools as an upstream would expose them once proxied (`{upstream}__{tool}`), described by their own servers. */
export const UPSTREAM_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'github__create_issue',
    description: 'Create a new issue in a GitHub repository. Requires owner, repo and title.',
    inputSchema: {
      type: 'object',
      properties: { owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' }, body: { type: 'string' } },
      required: ['owner', 'repo', 'title'],
    },
  },
  {
    name: 'github__list_pull_requests',
    description: 'List pull requests in a GitHub repository, filtered by state.',
    inputSchema: {
      type: 'object',
      properties: { owner: { type: 'string' }, repo: { type: 'string' }, state: { type: 'string' } },
      required: ['owner', 'repo'],
    },
  },
  {
    name: 'filesystem__read_text_file',
    description: 'Read the complete contents of a text file from the file system.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

/** A native-style tool with actions, defined here so the corpus is never empty whatever is registered. */
export const WEATHER_TOOL: NativeTool = defineTool({
  name: 'weather',
  summary: 'Forecasts for a city. Reads a public weather service.',
  actions: { today: "today's forecast", week: 'seven-day forecast' },
  properties: {},
  handler: () => ({}),
});

export function callerContext(overrides: Partial<CallerContext> = {}): CallerContext {
  return {
    isLoopback: true,
    listener: 'socket',
    mcpSessionId: 'mcp-session-1',
    tuicSession: null,
    boundSessionId: null,
    clientName: 'test-client',
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** The measurement fixtures: `.empty` is no repos, sessions or peers; `.loaded` is 8 repos, 12 sessions, 6 peers. */
export function instructionContext(surface: InstructionContext['surface'], load: 'empty' | 'loaded'): InstructionContext {
  const base = { version: '0.1.0', surface, progressTracking: true, intentMarkers: true, suggestFollowups: true };
  if (load === 'empty') return { ...base, sessions: [], repos: [], peerCount: 0 };
  const repos = Array.from({ length: 8 }, (_, i) => `/home/dev/src/project-${i + 1}`);
  const sessions = Array.from({ length: 12 }, (_, i) => ({
    session_id: `${(0x1a2b3c4d + i * 0x111).toString(16)}-5e6f-4a7b-8c9d-0e1f2a3b4c5d`,
    cwd: repos[i % repos.length]!,
    alias: `pr-${i + 1}`,
  }));
  return { ...base, sessions, repos, peerCount: 6 };
}

/** The collapsed surface: the meta-tools, then progress when it is registered (it stays direct). */
export function collapsedDefinitions(natives: readonly NativeTool[]): ToolDefinition[] {
  const meta = createMetaTools({ corpus: () => natives.map((n) => n.definition), dispatch: async () => textEnvelope({}) }).tools;
  return [...meta, ...natives.filter((n) => n.definition.name === 'progress')].map((t) => t.definition);
}

/**
 * Every surface a client receives, as the exact text it receives:
 * instructions for both surfaces and both fixtures, each native and meta tool's definition, and
 * the tools/list result of each surface. Classic lists every registered tool, as the baseline
 * measurement's fixture did (production hides config and debug by default), but for the
 * ai_terminal_* family: off unless ai_terminal_mcp_enabled, it is measured as its own list.
 */
export function surfaceTexts(): Record<string, string> {
  const natives = nativeTools();
  const out: Record<string, string> = {};
  for (const surface of ['classic', 'collapsed'] as const) {
    for (const load of ['empty', 'loaded'] as const) out[`instructions.${surface}.${load}`] = renderInstructions(instructionContext(surface, load));
  }
  const collapsed = collapsedDefinitions(natives);
  for (const def of [...natives.map((n) => n.definition), ...collapsed]) out[`schema.${def.name}`] ??= JSON.stringify(def);
  const aiTerminal = (n: NativeTool) => n.definition.name.startsWith('ai_terminal_');
  out['tools/list.classic'] = JSON.stringify({ tools: natives.filter((n) => !aiTerminal(n)).map((n) => n.definition) });
  out['tools/list.ai_terminal'] = JSON.stringify({ tools: natives.filter(aiTerminal).map((n) => n.definition) });
  out['tools/list.collapsed'] = JSON.stringify({ tools: collapsed });
  return out;
}
