/**
 * DNS-rebinding protection for /mcp on the TCP listener (MCP security best practices; REFERENCE
 * §1.0 "Host/Origin validation on TCP"). A rebinding attack reaches us under the attacker's domain
 * name, so the Host must be a name we answer to — an IP literal, localhost, this machine's name or
 * the bound host — and a browser's Origin must name one of those too. The unix socket is exempt:
 * no browser can reach it.
 */
import { isIP } from 'node:net';
import { hostname as osHostname } from 'node:os';

/** The bundled WebView origins the desktop app's frontend uses. */
const WEBVIEW_ORIGINS = new Set(['tauri://localhost', 'https://tauri.localhost']);

/** Bind addresses that mean "every interface", not a name a client would use. */
const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '[::]']);

export interface HostGuardOptions {
  /** Names this machine answers to; default os.hostname() and `<hostname>.local`. */
  machineNames?: readonly string[];
  /** The host the TCP listener bound (ignored when a wildcard). */
  boundHost?: () => string | null;
}

/** `host[:port]` or `[v6]:port` → lower-cased host without brackets or port; null when malformed. */
export function hostOf(hostHeader: string): string | null {
  const value = hostHeader.trim().toLowerCase();
  if (value.length === 0) return null;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    return value.slice(1, end);
  }
  const colon = value.indexOf(':');
  if (colon < 0) return value;
  if (!/^\d{1,5}$/.test(value.slice(colon + 1))) return null;
  return value.slice(0, colon);
}

export class HostGuard {
  private readonly names: Set<string>;

  constructor(private readonly opts: HostGuardOptions = {}) {
    const machine = osHostname().toLowerCase();
    this.names = new Set(['localhost', ...(opts.machineNames ?? [machine, `${machine}.local`]).map((n) => n.toLowerCase())]);
  }

  /** True for a host name (no port) we answer to. */
  allowsHost(host: string): boolean {
    const h = host.toLowerCase().replace(/\.$/, '');
    if (isIP(h) !== 0) return true;
    if (this.names.has(h)) return true;
    const bound = this.opts.boundHost?.()?.toLowerCase();
    return bound !== undefined && !WILDCARD_BINDS.has(bound) && h === bound.replace(/^\[|\]$/g, '');
  }

  /** Null when the request may pass; otherwise the refusal message. */
  check(headers: Readonly<Record<string, string>>): string | null {
    const hostHeader = headers['host'];
    if (hostHeader === undefined || hostHeader === '') return 'Invalid Host header: missing';
    const host = hostOf(hostHeader);
    if (host === null || !this.allowsHost(host)) return `Invalid Host header: ${hostHeader}`;

    const origin = headers['origin'];
    if (origin === undefined || origin === '') return null;
    if (WEBVIEW_ORIGINS.has(origin.toLowerCase())) return null;
    let originHost: string;
    try {
      originHost = new URL(origin).hostname;
    } catch {
      return `Invalid Origin header: ${origin}`;
    }
    // "null" (sandboxed frame, file://) has no host and parses as an invalid URL or an empty host.
    if (originHost === '' || !this.allowsHost(originHost.replace(/^\[|\]$/g, ''))) return `Invalid Origin header: ${origin}`;
    return null;
  }
}
