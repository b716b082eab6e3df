/**
 * CORS per listener: the local socket admits the desktop/browser-mode origins; on TCP the request
 * guard (requestGuard.ts) has already refused every origin that is not the listener's own or
 * configured, so the one that got this far is echoed, with credentials, never `*`.
 */
import type { ListenerKind } from './types.js';

/** Origins the local (socket) router accepts, as TUICommander does; http ones with any port. */
const LOCAL_ORIGINS = new Set(['http://localhost', 'http://127.0.0.1', 'tauri://localhost', 'https://tauri.localhost']);
const ALLOWED_METHODS = 'GET, POST, PUT, DELETE';
/** Authorization and Content-Type, as TUICommander allows; the MCP headers so browser MCP clients work too. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';
const EXPOSED_HEADERS = 'Mcp-Session-Id';
const PREFLIGHT_MAX_AGE_S = '600';

function isLocalOrigin(origin: string): boolean {
  if (LOCAL_ORIGINS.has(origin)) return true;
  const m = /^(http:\/\/(?:localhost|127\.0\.0\.1)):\d{1,5}$/.exec(origin);
  return m !== null;
}

/** Headers to add to a response; empty when the request carries no Origin or it is not allowed. */
export function corsHeaders(listener: ListenerKind, origin: string | undefined): Record<string, string> {
  if (!origin) return {};
  if (listener === 'tcp')
    return {
      'Access-Control-Allow-Origin': origin,
      Vary: 'Origin',
      'Access-Control-Allow-Credentials': 'true',
      'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    };
  if (!isLocalOrigin(origin)) return {};
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin', 'Access-Control-Expose-Headers': EXPOSED_HEADERS };
}

/** Headers for a preflight (OPTIONS) answer. */
export function preflightHeaders(listener: ListenerKind, origin: string | undefined): Record<string, string> {
  const base = corsHeaders(listener, origin);
  if (!base['Access-Control-Allow-Origin']) return base;
  return {
    ...base,
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_S,
  };
}
