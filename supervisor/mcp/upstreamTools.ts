/**
 * What the tool catalog needs from the upstream hub (supervisor/hosts/mcpHubHost.ts provides it):
 * the merged upstream tools as pre-serialized list bytes and as definitions for search, the settle
 * gate the first tools/list waits on, and dispatch.
 */
import type { Cancellation } from '../../shared/cancellation.js';
import type { Disposable } from '../../shared/disposable.js';
import type { ToolCallOutcome } from '../../shared/mcpEnvelope.js';
import type { ToolDefinition } from './tools/nativeTool.js';
import type { ClientRoute } from './upstreamPrimitives.js';

export interface UpstreamToolSource {
  /** The merged tools as JSON array elements without the brackets ('' = none), names qualified. */
  listFragment(): string;
  /** The same tools parsed (search_tools, get_tool_schema); a missing description reads as ''. */
  definitions(): readonly ToolDefinition[];
  /** Pending while the settle gate holds tools/list (≤ 3 s); null once open. */
  settleGate(): Promise<void> | null;
  /**
   * One proxied call; never rejects: routing and upstream failures are isError results. `route`:
   * the client request it serves, where the upstream's progress and requests to the client go.
   */
  call(upstream: string, tool: string, args: Record<string, unknown>, cancellation?: Cancellation, route?: ClientRoute): Promise<ToolCallOutcome>;
  /** The merged set changed. */
  onChanged(listener: () => void): Disposable;
}
