/** Circular-proxy detection, used by save validation (supervisor) and by connect (hub worker). */

/** Hosts that reach this machine: an upstream there on our own port is this server proxying itself. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0']);

/** True when `url` points at this instance (a circular proxy); an unparseable URL is not. */
export function isSelfReferential(url: string, ownPort: number): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (!LOOPBACK_HOSTS.has(parsed.hostname.toLowerCase())) return false;
  const port = parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  return port === ownPort;
}
