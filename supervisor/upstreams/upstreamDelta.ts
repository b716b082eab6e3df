/**
 * The `{base, config}` save of mcp-upstreams.json: what the client changed between
 * the copy it loaded (`base`) and the one it sends (`desired`) is applied to the file as it is *now*
 * (`latest`), server by server, keyed by id. So a UI holding a stale copy cannot undo a concurrent
 * OAuth token update or drop a server another process added. Pure: works on raw JSON servers.
 */
import { ApiError } from '../../shared/apiError.js';
import { deepMerge, isPlainObject, jsonMergeDelta } from '../config/merge.js';
import type { JsonObject } from '../config/merge.js';

/** Two saves added a server with the same id: reported (`conflict`), and the file is left as it was. */
export class UpstreamConflictError extends ApiError {
  constructor(message: string) {
    super('conflict', message);
    this.name = 'UpstreamConflictError';
  }
}

function byId(servers: readonly unknown[], what: string): Map<string, JsonObject> {
  const map = new Map<string, JsonObject>();
  for (const [i, s] of servers.entries()) {
    if (!isPlainObject(s) || typeof s['id'] !== 'string' || s['id'] === '') throw new Error(`${what}.servers[${i}] needs a string id`);
    if (map.has(s['id'])) throw new Error(`${what}.servers has the id '${s['id']}' twice`);
    map.set(s['id'], s);
  }
  return map;
}

/** Applies desired − base onto latest; returns the new server list (inputs untouched). */
export function applyUpstreamDelta(latest: readonly unknown[], base: readonly unknown[], desired: readonly unknown[]): JsonObject[] {
  const latestById = byId(latest, 'latest');
  const baseById = byId(base, 'base');
  const desiredById = byId(desired, 'config');
  const result = new Map<string, JsonObject>([...latestById].map(([id, s]) => [id, structuredClone(s)]));

  for (const id of baseById.keys()) if (!desiredById.has(id)) result.delete(id);
  let added = false;
  for (const [id, server] of desiredById) {
    const before = baseById.get(id);
    if (!before) {
      if (latestById.has(id)) throw new UpstreamConflictError(`Server '${id}' was added by another save in the meantime; reload and try again`);
      result.set(id, structuredClone(server));
      added = true;
      continue;
    }
    const current = result.get(id);
    // Removed by another save since the client loaded it: that removal stands.
    if (!current) continue;
    const delta = jsonMergeDelta(before, server);
    if (delta !== undefined) result.set(id, deepMerge(current, delta) as JsonObject);
  }

  const baseOrder = [...baseById.keys()].filter((id) => desiredById.has(id));
  const desiredOrder = [...desiredById.keys()];
  const reordered = added || baseOrder.some((id, i) => desiredOrder[i] !== id);
  if (!reordered) return [...result.values()];
  // The client's order for what it knows; servers it never saw keep their place after them.
  const ordered = desiredOrder.filter((id) => result.has(id)).map((id) => result.get(id)!);
  for (const [id, server] of result) if (!desiredById.has(id)) ordered.push(server);
  return ordered;
}
