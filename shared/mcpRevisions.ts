/**
 * The MCP revisions tuicd's /mcp speaks, and how initialize picks one: shared by the endpoint and
 * by tuic-bridge, which answers initialize itself while tuicd is unreachable.
 */

/** Revisions initialize echoes; anything else (or nothing) gets the one this endpoint implements. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28', '2025-11-25', '2025-03-26'];
export const DEFAULT_PROTOCOL_VERSION = '2025-11-25';
/** serverInfo.name in initialize answers (the name agents' configs and clients know). */
export const SERVER_NAME = 'tuicommander';

export function negotiateProtocolVersion(requested: unknown): string {
  return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : DEFAULT_PROTOCOL_VERSION;
}
