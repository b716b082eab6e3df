/** Turns uWS's textual peer address into a plain IP and says whether it is loopback. */

/** uWS prints IPv4 peers of a dual-stack socket as IPv4-mapped IPv6, sometimes fully expanded. */
export function normalizeIp(raw: string): string {
  const ip = raw.toLowerCase();
  // The mapped prefix `::ffff:` compressed or written out (`0:0:0:0:0:ffff:`, `0000:…:ffff:`).
  const mapped = /^(?:(?:0{1,4}:){5}|::)ffff:(?:([0-9a-f]{1,4}):([0-9a-f]{1,4})|(\d{1,3}(?:\.\d{1,3}){3}))$/.exec(ip);
  if (mapped) {
    if (mapped[3] !== undefined) return mapped[3];
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  if (/^(?:0{1,4}:){7}0{0,3}1$/.test(ip)) return '::1';
  return ip;
}

export function isLoopbackIp(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1';
}
