/**
 * Rules over a whole `mcp-upstreams.json`; the messages are part of the API (clients show them as
 * they are). Every error is collected, so one save tells the user everything that is wrong; a
 * server with an empty name gets only that error (its other checks would all be noise about a
 * server nobody can address).
 */
import { isSelfReferential } from '../../shared/selfReference.js';
import type { UpstreamConfig, UpstreamServer } from './upstreamConfig.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

export { isSelfReferential };

const NAME_PATTERN = /^[a-z0-9_-]+$/;
/** Upstream names prefix tool names (`{upstream}__{tool}`), which MCP keeps to 128 characters. */
export const MAX_NAME_CHARS = 64;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 9110 token characters: what a header name may be made of. */
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the proxy sets itself, or that would let a custom header break the exchange. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'content-type',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'proxy-authorization',
  'cookie',
]);
export const HEADERS_ERROR = 'Invalid or duplicate custom headers';

export interface ValidationContext {
  /** `services.server.port`: the port our own TCP listener uses. */
  ownPort: number;
}

/** How many of the server's headers are refused: each one counts (and is reported) on its own. */
function invalidHeaderCount(server: UpstreamServer): number {
  const names = new Set<string>();
  const refs = new Set<string>();
  let invalid = 0;
  for (const h of server.headers ?? []) {
    const name = h.name.toLowerCase();
    // Short-circuits: a header refused for an earlier reason takes no name or ref.
    const refused =
      !HEADER_TOKEN.test(h.name) ||
      RESERVED_HEADERS.has(name) ||
      !UUID_PATTERN.test(h.credential_ref) ||
      server.transport.type !== 'http' ||
      !addNew(names, name) ||
      !addNew(refs, h.credential_ref.toLowerCase()) ||
      // A custom Authorization would fight the configured auth for the same header.
      (name === 'authorization' && server.auth !== undefined);
    if (refused) invalid++;
  }
  return invalid;
}

function addNew(set: Set<string>, value: string): boolean {
  if (set.has(value)) return false;
  set.add(value);
  return true;
}

/** Every rule violation in `config`, in server order; empty when it may be saved. */
export function validateUpstreamConfig(config: UpstreamConfig, ctx: ValidationContext): string[] {
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const server of config.servers) {
    if (server.name === '') {
      errors.push(`Server '${clipClientInput(server.id)}' has an empty name`);
      continue;
    }
    if (server.name.length > MAX_NAME_CHARS) {
      // Tools are named `{upstream}__{tool}` and MCP keeps tool names to 128 characters.
      errors.push(`Name '${clipClientInput(server.name)}' is invalid: must be at most ${MAX_NAME_CHARS} characters`);
    } else if (!NAME_PATTERN.test(server.name)) {
      errors.push(`Name '${clipClientInput(server.name)}' is invalid: must contain only lowercase letters, digits, hyphens, and underscores`);
    } else if (server.name.includes('__') || server.name.endsWith('_')) {
      // Beyond the name pattern: tools are named `{upstream}__{tool}` and split on the first `__`, so
      // `a_` + `echo` (`a___echo`) or `a__b` + `echo` would route to upstream `a`.
      errors.push(`Name '${clipClientInput(server.name)}' is invalid: must not contain '__' or end with '_' (tool names are '<upstream>__<tool>')`);
    }
    if (seen.has(server.name)) errors.push(`Duplicate server name: '${clipClientInput(server.name)}'`);
    seen.add(server.name);

    const t = server.transport;
    if (t.type === 'http') {
      if (t.url.trim() === '') {
        errors.push(`Server '${clipClientInput(server.id)}' has an empty HTTP URL`);
      } else {
        // `//` must follow the scheme (`http:x` names no host); the scheme itself is case-insensitive (RFC 3986).
        const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(t.url)?.[1]?.toLowerCase();
        if (scheme !== 'http' && scheme !== 'https') errors.push(`URL '${clipClientInput(t.url)}' must use http:// or https:// scheme`);
        else if (isSelfReferential(t.url, ctx.ownPort)) errors.push(`URL '${clipClientInput(t.url)}' points to this TUIC instance (circular proxy)`);
      }
    } else if (t.command.trim() === '') {
      errors.push(`Server '${clipClientInput(server.id)}' has an empty stdio command`);
    }
    for (let n = invalidHeaderCount(server); n > 0; n--) errors.push(HEADERS_ERROR);
    if (server.auth?.type === 'oauth2' && server.auth.client_id.trim() === '') {
      errors.push(`Server '${clipClientInput(server.id)}' has an OAuth2 auth with empty client_id`);
    }
  }
  return errors;
}
