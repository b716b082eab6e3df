/**
 * `tuicd stop`, `tuicd restart` and the pty host part of `tuicd status`: they reach the running
 * supervisor through its socket (its pid from GET /process/stats) and signal it, and reach a pty
 * host left without a supervisor through its own state file and socket.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { request } from 'node:http';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';

import { connect } from '../shared/channel.js';
import type { Paths } from '../shared/paths.js';
import { PtyProtocol } from '../shared/protocol/pty.js';
import { streamTransport } from '../shared/transports/stream.js';
import { hostStatePath, isAlive, isHostOf, ownerOnlyProblem, readHostState } from './hosts/ptyHostState.js';
import { probeStatus } from './status.js';

const STOP_WAIT_MS = 15_000;
const START_WAIT_MS = 60_000;

export interface OrphanHost {
  pid: number;
  /** Live sessions and their pids; null when the host did not answer. */
  sessions: Array<{ session_id: string; pid: number }> | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits while `running(pid)` holds (default: the pid exists), up to `ms`. */
async function waitGone(pid: number, ms: number, running: (pid: number) => boolean = isAlive): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (running(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** The running supervisor's pid, asked on its socket. */
function supervisorPid(socketPath: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/process/stats', method: 'GET', timeout: 3_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          const rows = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{ kind: string; pid: number }>;
          resolve(rows.find((r) => r.kind === 'tuicd')?.pid ?? null);
        } catch {
          resolve(null);
        }
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

/**
 * A pty host of this config dir and instance, running, and the sessions it holds: asked with the
 * read-only `processes`, which does not make this connection the host's supervisor (a tuicd starting
 * meanwhile still adopts it).
 */
export async function probeOrphanHost(paths: Paths): Promise<OrphanHost | null> {
  let state;
  const statePath = hostStatePath(paths.configDir, paths.instance);
  try {
    state = readHostState(statePath);
  } catch {
    return null;
  }
  if (state === null || !isHostOf(state.pid, statePath)) return null;
  if (ownerOnlyProblem(state.socket, 'socket') !== null) return { pid: state.pid, sessions: null };
  const sessions = await new Promise<OrphanHost['sessions']>((resolve) => {
    const sock = netConnect({ path: state.socket });
    sock.once('error', () => resolve(null));
    sock.once('connect', () => {
      const client = connect(streamTransport(sock, sock), PtyProtocol, { handshakeTimeout: 3_000 });
      client
        .request('processes', {}, { timeout: 3_000 })
        .then(
          (r) => resolve(r.sessions),
          () => resolve(null),
        )
        .finally(() => client.dispose());
    });
  });
  return { pid: state.pid, sessions };
}

export function describeOrphan(orphan: OrphanHost): string {
  if (orphan.sessions === null) return `a pty host (pid ${orphan.pid}) is running but did not answer; \`tuicd stop\` ends it\n`;
  const lines = [`a pty host (pid ${orphan.pid}) is running without a supervisor, holding ${orphan.sessions.length} session(s):`];
  for (const s of orphan.sessions) lines.push(`  ${s.session_id} (pid ${s.pid})`);
  lines.push('starting tuicd adopts them; `tuicd stop` ends them');
  return `${lines.join('\n')}\n`;
}

/** Stops the supervisor (ending every session) and any pty host of this config dir left without one. */
export async function stopCommand(paths: Paths, say: (line: string) => void): Promise<number> {
  let stopped = false;
  const pid = await supervisorPid(paths.socketPath);
  if (pid !== null) {
    process.kill(pid, 'SIGINT');
    if (!(await waitGone(pid, STOP_WAIT_MS))) {
      say(`tuicd (pid ${pid}) did not stop within ${STOP_WAIT_MS / 1000} s`);
      return 1;
    }
    say(`tuicd (pid ${pid}) stopped`);
    stopped = true;
  }
  let state = null;
  const statePath = hostStatePath(paths.configDir, paths.instance);
  try {
    state = readHostState(statePath);
  } catch (err) {
    say(String((err as Error).message));
  }
  if (state !== null && isHostOf(state.pid, statePath)) {
    const host = (pid: number): boolean => isHostOf(pid, statePath);
    process.kill(state.pid, 'SIGTERM');
    if (!(await waitGone(state.pid, STOP_WAIT_MS, host)) && host(state.pid)) process.kill(state.pid, 'SIGKILL');
    say(`pty host (pid ${state.pid}) stopped with its sessions`);
    stopped = true;
  }
  if (!stopped) say('tuicd is not running');
  return 0;
}

/**
 * Restarts keeping the sessions: the running supervisor leaves (SIGUSR2) with its pty host running,
 * and a new one starts in the background with the options given to `restart` (the config dir,
 * instance, flags), adopting them. Its output goes to <log dir>/tuicd.out.
 */
export async function restartCommand(paths: Paths, argv: string[], say: (line: string) => void): Promise<number> {
  const pid = await supervisorPid(paths.socketPath);
  if (pid !== null) {
    process.kill(pid, 'SIGUSR2');
    if (!(await waitGone(pid, STOP_WAIT_MS))) {
      say(`tuicd (pid ${pid}) did not stop within ${STOP_WAIT_MS / 1000} s`);
      return 1;
    }
    say(`tuicd (pid ${pid}) stopped; its sessions keep running`);
  }
  mkdirSync(paths.logDir, { recursive: true, mode: 0o700 });
  const out = join(paths.logDir, 'tuicd.out');
  const fd = openSync(out, 'a', 0o600);
  const args = argv.filter((a) => a !== 'restart');
  const child = spawn(process.execPath, [process.argv[1]!, ...args], { detached: true, stdio: ['ignore', fd, fd], env: process.env });
  closeSync(fd);
  child.unref();
  const deadline = Date.now() + START_WAIT_MS;
  while (Date.now() < deadline) {
    const status = await probeStatus(paths.socketPath);
    if (status.alive) {
      say(`tuicd restarted (pid ${child.pid}), serving on ${paths.socketPath}; output in ${out}`);
      return 0;
    }
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  say(`tuicd did not come back (see ${out})`);
  return 1;
}
