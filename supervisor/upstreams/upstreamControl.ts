/**
 * What the /mcp/upstreams routes need from the running hub (supervisor/hosts/mcpHubHost.ts
 * implements it over the worker channel). Kept narrow so the routes and the save path can be
 * read, and tested, without the worker.
 */
import type { UpstreamDiffPlan } from './configDiff.js';
import type { UpstreamStatusRow } from './upstreamStatus.js';
import { ApiError } from '../../shared/apiError.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

export interface UpstreamControl {
  /** Applies a save's plan: disconnect removed, reconnect changed, connect added; unchanged untouched. */
  applyPlan(plan: UpstreamDiffPlan): Promise<void>;
  /** Manual reconnect. Rejects with UpstreamNotFoundError for an unknown name. */
  reconnect(name: string): Promise<void>;
  /** GET /mcp/upstream-status rows. */
  status(): Promise<UpstreamStatusRow[]>;
}

/** `Upstream '<name>' not found`: no upstream of that name is registered (`not_found`). */
export class UpstreamNotFoundError extends ApiError {
  constructor(readonly upstream: string) {
    super('not_found', `Upstream '${clipClientInput(upstream)}' not found`);
    this.name = 'UpstreamNotFoundError';
  }
}
