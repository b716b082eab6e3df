/**
 * What the /mcp/upstreams routes need from the running hub (supervisor/hosts/mcpHubHost.ts
 * implements it over the worker channel). Kept narrow so the routes and the save path can be
 * read, and tested, without the worker.
 */
import type { UpstreamDiffPlan } from './configDiff.js';
import type { UpstreamStatusRow } from './upstreamStatus.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

export interface UpstreamControl {
  /** Applies a save's plan: disconnect removed, reconnect changed, connect added; unchanged untouched. */
  applyPlan(plan: UpstreamDiffPlan): Promise<void>;
  /** Manual reconnect. Rejects with UpstreamNotFoundError for an unknown name. */
  reconnect(name: string): Promise<void>;
  /** GET /mcp/upstream-status rows. */
  status(): Promise<UpstreamStatusRow[]>;
}

/** `Upstream '<name>' not found` (HTTP 404). */
export class UpstreamNotFoundError extends Error {
  constructor(readonly upstream: string) {
    super(`Upstream '${clipClientInput(upstream)}' not found`);
  }
}
