/**
 * What a save of mcp-upstreams.json changes in the running hub, as a plan: which upstreams to
 * disconnect, connect or reconnect. Unchanged servers are not in the plan at all, so their
 * processes keep running.
 */
import { jsonEqual } from '../config/merge.js';
import type { UpstreamConfig, UpstreamServer } from './upstreamConfig.js';

export interface UpstreamDiffPlan {
  disconnect: UpstreamServer[];
  connect: UpstreamServer[];
  /** Same id, something that matters changed: disconnect the old, connect the new. */
  reconnect: Array<{ before: UpstreamServer; after: UpstreamServer; clearStoredAuth: boolean }>;
}

/** Any field change reconnects, a change of headers included. */
function changed(a: UpstreamServer, b: UpstreamServer): boolean {
  return !jsonEqual(a, b);
}

export function diffUpstreams(before: UpstreamConfig, after: UpstreamConfig): UpstreamDiffPlan {
  const old = new Map(before.servers.map((s) => [s.id, s]));
  const next = new Map(after.servers.map((s) => [s.id, s]));
  const plan: UpstreamDiffPlan = { disconnect: [], connect: [], reconnect: [] };
  for (const [id, s] of old) if (!next.has(id)) plan.disconnect.push(s);
  for (const [id, s] of next) {
    const prev = old.get(id);
    if (!prev) plan.connect.push(s);
    else if (changed(prev, s)) {
      // A dynamically registered OAuth client is bound to the old server's authorization server:
      // when only the transport moved, the stored tokens would be presented to the wrong one. An
      // upstream with no auth field authorizes with a registration too; a Bearer token stays.
      const clearStoredAuth = prev.auth?.type !== 'bearer' && jsonEqual(prev.auth, s.auth) && !jsonEqual(prev.transport, s.transport);
      plan.reconnect.push({ before: prev, after: s, clearStoredAuth });
    }
  }
  return plan;
}
