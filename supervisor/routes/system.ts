/**
 * GET /system/local-ips, /system/local-ip, /system/home-directory: what a client shows to reach this
 * machine (its addresses, for a QR code or a URL) and where paths start. Read at each request: an
 * interface can come and go.
 */
import { homedir, networkInterfaces } from 'node:os';

import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { bareJson, json } from '../http/types.js';
import type { Route } from '../http/types.js';

const TAG = 'system';

const LocalIp = Type.Object({
  interface: Type.String({ description: 'The network interface (`eth0`, `en0`, `wlan0`…).' }),
  address: Type.String(),
  family: Type.Union([Type.Literal('IPv4'), Type.Literal('IPv6')]),
});

interface LocalAddress {
  interface: string;
  address: string;
  family: 'IPv4' | 'IPv6';
}

/** Every non-loopback address, IPv4 first; IPv6 link-local ones (fe80::) left out, they need a zone to be used. */
function localAddresses(): LocalAddress[] {
  const out: LocalAddress[] = [];
  for (const [name, infos] of Object.entries(networkInterfaces())) {
    for (const info of infos ?? []) {
      if (info.internal || (info.family === 'IPv6' && /^fe80:/i.test(info.address))) continue;
      out.push({ interface: name, address: info.address, family: info.family });
    }
  }
  return out.sort((a, b) => (a.family === b.family ? 0 : a.family === 'IPv4' ? -1 : 1));
}

export function systemRoutes(): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/system/local-ips',
      tag: TAG,
      summary: "This machine's network addresses (loopback and link-local left out), IPv4 first",
      answers: { 200: Type.Array(LocalIp) },
      handler: () => json(localAddresses()),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/system/local-ip',
      tag: TAG,
      summary: 'The primary address (the first of local-ips): a bare JSON string, or null without a network',
      answers: { 200: Type.Union([Type.String(), Type.Null()]) },
      handler: () => bareJson(localAddresses()[0]?.address ?? null),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/system/home-directory',
      tag: TAG,
      summary: "tuicd's home directory (new sessions start there): a bare JSON string",
      answers: { 200: Type.String() },
      handler: () => bareJson(homedir()),
    }),
  ];
}
