/**
 * The TCP listener's request guard, run before auth on every route and WebSocket upgrade: tuicd
 * runs shells, so a browser page elsewhere that reaches a route is remote code execution.
 *
 * - `Host` must be a name this server answers to: loopback (`localhost`, 127/8, ::1), this
 *   machine's names and interface addresses, the bound host, or `services.server.allowed_hosts`.
 *   A DNS-rebinding attack arrives under the attacker's name and fails here. Missing, malformed or
 *   repeated → refused.
 * - A browser `Origin`, when sent, must be same-origin with the request (its host:port is the
 *   validated Host) or listed in `services.server.allowed_origins`. IP-literal origins follow the
 *   same rule as names. `lan_auth_bypass` never skips this: it runs before auth.
 * The unix socket has no guard: no browser reaches it.
 */
import { isIP } from 'node:net';
import { hostname as osHostname, networkInterfaces } from 'node:os';

import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { isLoopbackIp, normalizeIp } from './remoteAddress.js';

export interface GuardSettings {
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
}

export interface RequestGuardOptions {
  settings: () => GuardSettings;
  /** The host the TCP listener bound; ignored when a wildcard. */
  boundHost?: () => string | null;
  /** Names this machine answers to; default os.hostname() and `<hostname>.local`. */
  machineNames?: readonly string[];
  /** This machine's addresses; default every interface's, re-read at most every ADDRESS_TTL_MS. */
  machineAddresses?: () => Iterable<string>;
}

/** Interfaces come and go (DHCP, VPNs): their addresses are re-read at most this often. */
const ADDRESS_TTL_MS = 10_000;
/** Host header values already allowed, so a busy client costs one map lookup. */
const MAX_CACHED_HOSTS = 64;
const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '[::]']);

/** `host[:port]` or `[v6]:port` → lower-cased host without brackets, port or trailing dot; null when malformed. */
export function hostOf(hostHeader: string): string | null {
  const value = hostHeader.trim().toLowerCase();
  if (value.length === 0) return null;
  let host: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    host = value.slice(1, end);
    if (isIP(host) !== 6) return null;
    return host;
  }
  const colon = value.indexOf(':');
  if (colon >= 0 && !/^\d{1,5}$/.test(value.slice(colon + 1))) return null;
  host = (colon < 0 ? value : value.slice(0, colon)).replace(/\.$/, '');
  // A name of DNS labels or an IPv4 literal; anything else (spaces, slashes, @) is not a Host.
  return /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(host) ? host : null;
}

/** A refusal names the header; the server answers it as 403 JSON. */
export interface Refusal {
  header: 'Host' | 'Origin';
  message: string;
}

export class RequestGuard {
  private readonly names: Set<string>;
  private addresses = new Set<string>();
  private addressesReadAt = -Infinity;
  private readonly allowedHostHeaders = new Set<string>();
  private lastAllowedHost: string | undefined;
  private lastSettings: GuardSettings | undefined;
  private extraHosts = new Set<string>();
  private extraOrigins = new Set<string>();

  constructor(private readonly opts: RequestGuardOptions) {
    const machine = osHostname().toLowerCase();
    this.names = new Set((opts.machineNames ?? [machine, `${machine}.local`]).map((n) => n.toLowerCase()));
  }

  /** Null when the request may pass. `duplicateHost`: the request carried more than one Host header. */
  check(headers: Readonly<Record<string, string>>, duplicateHost = false): Refusal | null {
    this.refreshSettings();
    const hostHeader = headers['host'];
    if (hostHeader === undefined || hostHeader === '') return { header: 'Host', message: 'Host header is missing' };
    if (duplicateHost) return { header: 'Host', message: 'Host header is repeated' };
    // A client sends the same Host on every request, but as a fresh string each time, whose hash V8
    // computes afresh: comparing with the last one allowed first keeps the Set lookup off the common path.
    if (hostHeader !== this.lastAllowedHost && !this.allowedHostHeaders.has(hostHeader)) {
      const host = hostOf(hostHeader);
      if (host === null) return { header: 'Host', message: `Host header is malformed: ${quoteClientInput(hostHeader)}` };
      if (!this.allowsHost(host)) {
        return {
          header: 'Host',
          message: `Host not allowed: ${quoteClientInput(hostHeader)} (loopback, this machine's names and addresses, or services.server.allowed_hosts)`,
        };
      }
      if (this.allowedHostHeaders.size >= MAX_CACHED_HOSTS) this.allowedHostHeaders.clear();
      this.allowedHostHeaders.add(hostHeader);
    }
    this.lastAllowedHost = hostHeader;
    const origin = headers['origin'];
    if (origin === undefined) return null;
    if (this.allowsOrigin(origin, hostHeader)) return null;
    return {
      header: 'Origin',
      message: `Origin not allowed: ${quoteClientInput(origin)} (only the listener's own origin, http://${hostHeader.slice(0, 200)}, or services.server.allowed_origins)`,
    };
  }

  private refreshSettings(): void {
    const s = this.opts.settings();
    if (s === this.lastSettings) return;
    this.lastSettings = s;
    this.extraHosts = new Set(
      s.allowedHosts.map((h) =>
        h
          .trim()
          .toLowerCase()
          .replace(/^\[|\]$/g, '')
          .replace(/\.$/, ''),
      ),
    );
    this.extraOrigins = new Set(s.allowedOrigins.map(normalizeOrigin).filter((o): o is string => o !== null));
    this.allowedHostHeaders.clear();
    this.lastAllowedHost = undefined;
  }

  private allowsHost(host: string): boolean {
    if (host === 'localhost' || host.endsWith('.localhost')) return true;
    if (this.names.has(host) || this.extraHosts.has(host)) return true;
    const bound = this.opts.boundHost?.()?.toLowerCase();
    if (bound !== undefined && !WILDCARD_BINDS.has(bound) && host === bound.replace(/^\[|\]$/g, '')) return true;
    if (isIP(host) === 0) return false;
    const ip = normalizeIp(host);
    return isLoopbackIp(ip) || this.machineAddresses().has(ip);
  }

  private machineAddresses(): Set<string> {
    const now = Date.now();
    if (now - this.addressesReadAt > ADDRESS_TTL_MS) {
      this.addressesReadAt = now;
      const list = this.opts.machineAddresses?.() ?? interfaceAddresses();
      this.addresses = new Set([...list].map((a) => normalizeIp(a.replace(/%.*$/, ''))));
    }
    return this.addresses;
  }

  /** Same-origin with the request (scheme http or https, host:port equal to the validated Host), or listed. */
  private allowsOrigin(origin: string, hostHeader: string): boolean {
    const normalized = normalizeOrigin(origin);
    if (normalized === null) return false;
    if (this.extraOrigins.has(normalized)) return true;
    const authority = normalized.slice(normalized.indexOf('://') + 3);
    const host = hostHeader.trim().toLowerCase();
    const scheme = normalized.slice(0, normalized.indexOf(':'));
    return authority === host || authority === withDefaultPortRemoved(host, scheme);
  }
}

/** `scheme://host[:port]` lower-cased, default port dropped; null for "null", paths or other schemes. */
export function normalizeOrigin(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.pathname !== '/' || url.search !== '' || url.username !== '' || url.password !== '') return null;
  return `${url.protocol}//${url.host}`.toLowerCase();
}

/** A Host of `name:80` is the origin `http://name`: URL drops default ports, so compare without it. */
function withDefaultPortRemoved(host: string, scheme: string): string {
  const port = scheme === 'https' ? ':443' : ':80';
  return host.endsWith(port) ? host.slice(0, -port.length) : host;
}

function interfaceAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.push(a.address);
  return out;
}
