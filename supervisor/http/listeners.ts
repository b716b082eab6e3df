/** Binding policy for the two listeners: the unix socket (stale files reclaimed, live ones never stolen) and TCP (port walk). */
import { chmodSync, existsSync, lstatSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { withFileLock } from '../config/fileLock.js';
import type { EngineApp, EngineListenSocket } from './engine/types.js';

export const ListenerConstants = {
  /** Binding the socket is retried: a crashed run leaves a dead socket file; each try clears it. */
  UNIX_BIND_ATTEMPTS: 3,
  UNIX_BIND_RETRY_MS: 100,
  /** A live server answers connect() at once; anything slower than this is treated as not answering. */
  LIVENESS_CONNECT_TIMEOUT_MS: 1000,
  /** base, base+1, base+2: the port walk when the configured port is taken. */
  TCP_PORT_ATTEMPTS: 3,
  /** Rounds of the port walk and the pause between them (a previous run may still hold the port). */
  TCP_ROUNDS: 6,
  TCP_ROUND_BACKOFF_MS: 500,
} as const;

/** Bytes allowed in sun_path on macOS (Linux allows 108); paths longer than this cannot bind everywhere. */
export const MAX_UNIX_PATH_BYTES = 104;

/**
 * False only when the socket is provably dead (ECONNREFUSED: a file with no listener; ENOENT: gone).
 * A full backlog (EAGAIN) or a slow answer means a busy live server, whose socket must not be taken.
 */
export function isSocketLive(path: string, timeoutMs: number = ListenerConstants.LIVENESS_CONNECT_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ path });
    const done = (live: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(live);
    };
    const timer = setTimeout(() => done(true), timeoutMs);
    sock.once('connect', () => done(true));
    sock.once('error', (err: NodeJS.ErrnoException) => done(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT' && err.code !== 'ENOTSOCK'));
  });
}

export interface UnixBinding {
  listenSocket: EngineListenSocket;
  path: string;
  /** Inode of the file we created, so shutdown never unlinks a successor's socket. */
  ino: number;
}

export async function bindUnix(app: EngineApp, path: string, onStale?: (path: string) => void): Promise<UnixBinding> {
  if (Buffer.byteLength(path) >= MAX_UNIX_PATH_BYTES) {
    throw new SupervisorError(
      ErrorCode.BIND_FAILED,
      `unix socket path is ${Buffer.byteLength(path)} bytes, over the ${MAX_UNIX_PATH_BYTES}-byte limit: ${path}`,
    );
  }
  // uWS unlinks whatever sits at the path before bind(2) (Node's http refuses an existing file), so check-then-bind is only safe when no other
  // starter runs the same steps at once: two that both saw a stale file (or none) would each bind, the
  // later one unlinking the earlier one's live socket. `<path>.lock` makes the whole step exclusive.
  return withFileLock(path, () => bindUnixLocked(app, path, onStale));
}

async function bindUnixLocked(app: EngineApp, path: string, onStale?: (path: string) => void): Promise<UnixBinding> {
  for (let attempt = 1; attempt <= ListenerConstants.UNIX_BIND_ATTEMPTS; attempt++) {
    if (existsSync(path)) {
      if (!lstatSync(path).isSocket()) {
        throw new SupervisorError(ErrorCode.BIND_FAILED, `${path} exists and is not a socket; refusing to remove it`);
      }
      if (await isSocketLive(path)) {
        throw new SupervisorError(ErrorCode.SOCKET_IN_USE, `another server is already answering on ${path}; refusing to take its socket`);
      }
      onStale?.(path);
      try {
        unlinkSync(path);
      } catch {
        // Already gone (another starter reclaimed it): bind decides.
      }
    }
    // Owner-only from the first instant: the socket has no auth of its own.
    // Both engines bind(2) synchronously inside the listen call, so the umask covers the creation.
    const previousUmask = process.umask(0o177);
    let listening: Promise<EngineListenSocket | null>;
    try {
      listening = app.listenUnix(path);
    } finally {
      process.umask(previousUmask);
    }
    const listenSocket = await listening;
    if (listenSocket) {
      chmodSync(path, 0o600);
      return { listenSocket, path, ino: lstatSync(path).ino };
    }
    await sleep(ListenerConstants.UNIX_BIND_RETRY_MS);
  }
  throw new SupervisorError(ErrorCode.BIND_FAILED, `could not bind unix socket ${path} after ${ListenerConstants.UNIX_BIND_ATTEMPTS} attempts`);
}

export function closeUnix(binding: UnixBinding): void {
  binding.listenSocket.close();
  try {
    if (lstatSync(binding.path).ino === binding.ino) unlinkSync(binding.path);
  } catch {
    // Already removed.
  }
}

export interface TcpBinding {
  listenSocket: EngineListenSocket;
  host: string;
  port: number;
}

/** Tries port, port+1, port+2 (just the one when 0 = any), in rounds with a pause between. */
export async function bindTcp(app: EngineApp, host: string, port: number): Promise<TcpBinding> {
  const candidates = port === 0 ? [0] : Array.from({ length: ListenerConstants.TCP_PORT_ATTEMPTS }, (_, i) => port + i).filter((p) => p <= 65535);
  for (let round = 1; round <= ListenerConstants.TCP_ROUNDS; round++) {
    for (const candidate of candidates) {
      // Exclusive on both engines: a port another process holds (tuicd or not) is never shared.
      const ls = await app.listenTcp(host, candidate);
      if (ls) return { listenSocket: ls, host, port: ls.port };
    }
    if (round < ListenerConstants.TCP_ROUNDS) await sleep(ListenerConstants.TCP_ROUND_BACKOFF_MS);
  }
  throw new SupervisorError(ErrorCode.BIND_FAILED, `could not bind TCP ${host} on ports ${candidates.join(', ')}`);
}

export function closeTcp(binding: TcpBinding): void {
  binding.listenSocket.close();
}
