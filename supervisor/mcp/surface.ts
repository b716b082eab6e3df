/**
 * What the /mcp transport needs from the tool side (issue #4): the tools/list bytes for a
 * surface, one dispatch entry point, a change signal, and the instructions text. The transport
 * (routes/mcp.ts, mcp/transport*) codes against this; mcp/toolCatalog.ts implements it.
 */
import type { Disposable } from '../../shared/disposable.js';
import type { ToolCallOutcome } from '../../shared/mcpEnvelope.js';
import type { CallerContext } from './tools/nativeTool.js';

/** classic = every enabled tool; collapsed = search_tools, get_tool_schema, call_tool (+ progress). */
export type ToolSurface = 'classic' | 'collapsed';

export interface ToolCatalogView {
  /** Which surface a session sees: collapsed when `collapse_tools` is on or the session is a Grok session. */
  surfaceFor(session: { requiresMetaTools: boolean }): ToolSurface;
  /** Pre-serialized `{"tools":[...]}` (the JSON-RPC `result`), rebuilt only when the set changes. */
  toolsListResultJson(surface: ToolSurface): string;
  /**
   * The same as UTF-8 bytes followed by the response envelope's closing `}` (spliced after the
   * response prefix, never re-encoded); with a project allowlist, only its upstreams' tools.
   */
  toolsListResponseTail(surface: ToolSurface, allowlist?: ReadonlySet<string> | null): Buffer;
  /**
   * Dispatches one tools/call: native by name, `{upstream}__{tool}` to the proxy hub (issue #5),
   * meta-tools in either surface. Never throws: failures become `isError` results.
   */
  call(name: string, args: Record<string, unknown>, caller: CallerContext): Promise<ToolCallOutcome>;
  /** Pending while the upstream settle gate holds the first tools/list (≤ 3 s); null otherwise. */
  settleGate(): Promise<void> | null;
  /** Fires whenever the tool set of any surface changes (config toggles, upstream changes). */
  onChanged(listener: () => void): Disposable;
}

/** What initialize's instructions are rendered from: explicit, so a test can render them without a host. */
export interface InstructionContext {
  version: string;
  surface: ToolSurface;
  progressTracking: boolean;
  sessions: ReadonlyArray<{ session_id: string; cwd: string; alias?: string }>;
  repos: readonly string[];
  peerCount: number;
  /** Ask for `intent:` lines (config `intent_tab_title`); absent = off. */
  intentMarkers?: boolean;
  /** Ask for the closing `suggest: [ … ]` line (config `suggest_followups`); absent = off. */
  suggestFollowups?: boolean;
}
