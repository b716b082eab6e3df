/**
 * What the bare baseline servers share: a /health body built per request in the shape and size of
 * tuicd's (~350 bytes: build info, instance id, listeners), and their exit rules.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { formatReadyLine } from './readyLine.js';

const startedMs = Date.now();
const instanceId = randomUUID();

export function healthBody(socketPath: string, tcpPort: number): string {
  return JSON.stringify({
    ok: true,
    version: '0.0.0-bench',
    build: { version: '0.0.0-bench', node: process.version },
    protocol_version: 1,
    instance_id: instanceId,
    uptime_secs: Math.floor((Date.now() - startedMs) / 1000),
    session_count: 0,
    socket_path: socketPath,
    listeners: { socket: { path: socketPath }, tcp: { host: '127.0.0.1', port: tcpPort } },
    credential_store: { backend: 'none' },
  });
}

/** Children exit when the bench process goes away (stdin closes), on SIGTERM, or after a hard bound. */
export function exitWithParent(maxSeconds: number, onExit: () => void): void {
  const quit = (): void => {
    onExit();
    process.exit(0);
  };
  process.stdin.on('end', quit).on('close', quit).resume();
  process.on('SIGTERM', quit);
  setTimeout(quit, maxSeconds * 1000).unref();
}

/**
 * Serves one node:http handler on a random 127.0.0.1 port and on `socketPath` (one server cannot
 * listen twice), exits with the parent, and prints the ready line once both listen. `onPort` runs
 * before the unix listener starts, so handlers that need the port have it from the first request.
 */
export function serveNodeHttpOnBoth(name: string, handler: http.RequestListener, socketPath: string, maxSeconds: number, onPort: (port: number) => void): void {
  const tcp = http.createServer(handler);
  const unix = http.createServer(handler);
  tcp.listen(0, '127.0.0.1', () => {
    const port = (tcp.address() as AddressInfo).port;
    onPort(port);
    unix.listen(socketPath, () => {
      exitWithParent(maxSeconds, () => {
        tcp.close();
        unix.close();
      });
      console.log(formatReadyLine(name, socketPath, '127.0.0.1', port));
    });
  });
}
