/** `{upstream}__{tool}` naming and the per-upstream allow/deny filter. */
import { HubConstants } from '../../shared/protocol/mcpHub.js';
import type { UpstreamServerWire } from '../../shared/protocol/upstreamServer.js';

export function qualifiedName(upstream: string, tool: string): string {
  return upstream + HubConstants.SEPARATOR + tool;
}

/** Splits on the FIRST `__` only; null when there is no upstream or no tool part. */
export function splitQualifiedName(name: string): { upstream: string; tool: string } | null {
  const at = name.indexOf(HubConstants.SEPARATOR);
  if (at <= 0 || at + HubConstants.SEPARATOR.length >= name.length) return null;
  return { upstream: name.slice(0, at), tool: name.slice(at + HubConstants.SEPARATOR.length) };
}

/** An exact name, or a prefix ending in `*`. */
function matches(pattern: string, tool: string): boolean {
  return pattern.endsWith('*') ? tool.startsWith(pattern.slice(0, -1)) : pattern === tool;
}

/** Whether the upstream's filter lets `tool` through (no filter = everything). */
export function filterAllows(filter: UpstreamServerWire['tool_filter'], tool: string): boolean {
  if (!filter) return true;
  const hit = filter.patterns.some((p) => matches(p, tool));
  return filter.mode === 'allow' ? hit : !hit;
}
