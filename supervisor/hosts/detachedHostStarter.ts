/**
 * Starts the pty host detached (its own session and process group, so it outlives the supervisor),
 * or adopts the one already running for this config dir and instance: the state file says where it
 * listens and which protocol it speaks. A host of another protocol version is told to end (SIGUSR2:
 * its sessions end, its log says why) and a fresh one is started; a host another live supervisor
 * holds refuses the `adopt`, and is left alone.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import { PTY_PROTOCOL_VERSION } from '../../shared/protocol/pty.js';
import { streamTransport } from '../../shared/transports/stream.js';
import type { StartedWorker, WorkerStarter } from './processStarter.js';
import { type PtyHostState, hostStatePath, isHostOf, ownerOnlyProblem, readHostState } from './ptyHostState.js';

/** sun_path holds 104-108 bytes; a longer config dir puts the socket in the temp dir. */
const MAX_SOCKET_PATH = 100;
/** A fresh host has this long to listen. */
const LISTEN_TIMEOUT_MS = 10_000;
/** A replaced host has this long to end its sessions before SIGKILL. */
const REPLACE_GRACE_MS = 5_000;
/** How often a host that is not our child is checked for life once its channel closed. */
const EXIT_POLL_MS = 200;

export interface DetachedHostOptions {
  entry: string;
  env: NodeJS.ProcessEnv;
  /** Node flags before the entry (the pty host's GC settings, ptyHostEnv.ts). */
  nodeArgs?: readonly string[];
  configDir: string;
  logDir: string;
  instance: string | null;
  /** Read at each start: the host keeps the value it was started with. */
  orphanTimeoutMs: () => number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `sock` closed: the channel's close ends our side after the queued frames are written. */
function closedPromise(sock: Socket): Promise<void> {
  return new Promise((resolve) => sock.once('close', () => resolve()));
}

function connectSocket(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path });
    sock.once('connect', () => {
      sock.removeListener('error', reject);
      resolve(sock);
    });
    sock.once('error', reject);
  });
}

export class DetachedHostStarter implements WorkerStarter {
  readonly statePath: string;

  constructor(private readonly opts: DetachedHostOptions) {
    this.statePath = hostStatePath(opts.configDir, opts.instance);
  }

  /**
   * A host may be running for this config dir and instance: whether it can be adopted is for start()
   * to find out (a state file that cannot be trusted counts, so the refusal is reported at once).
   */
  hasLiveHost(): boolean {
    try {
      const state = readHostState(this.statePath);
      return state !== null && isHostOf(state.pid, this.statePath);
    } catch {
      return true;
    }
  }

  async start(): Promise<StartedWorker> {
    const state = readHostState(this.statePath);
    if (state !== null && isHostOf(state.pid, this.statePath)) {
      if (state.protocol_version === PTY_PROTOCOL_VERSION) {
        const adopted = await this.adopt(state);
        if (adopted !== null) return adopted;
      } else {
        await this.replace(state);
      }
    }
    // A host killed outright (SIGKILL) left its socket file: ours to remove, if it is one.
    if (state !== null && !isHostOf(state.pid, this.statePath) && basename(state.socket).startsWith('pty-') && state.socket.endsWith('.sock')) {
      rmSync(state.socket, { force: true });
    }
    return this.spawnFresh();
  }

  /** Connects to a running host; null when it no longer listens (a stale state file). */
  private async adopt(state: PtyHostState): Promise<StartedWorker | null> {
    let problem: string | null;
    try {
      problem = ownerOnlyProblem(state.socket, 'socket');
    } catch {
      return null; // no socket: the pid is another process now
    }
    if (problem !== null) throw new Error(`refusing to adopt pty host ${state.pid}: ${problem}`);
    let sock: Socket;
    try {
      sock = await connectSocket(state.socket);
    } catch {
      return null;
    }
    this.opts.log.info({ host_pid: state.pid, socket: state.socket }, 'adopting the running pty host');
    let released = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      sock.once('close', () => {
        const poll = (): void => {
          if (released) return;
          if (!isHostOf(state.pid, this.statePath)) resolve({ code: null, signal: null });
          else setTimeout(poll, EXIT_POLL_MS).unref();
        };
        poll();
      });
    });
    return {
      pid: state.pid,
      transport: streamTransport(sock, sock),
      linkClosed: closedPromise(sock),
      exited,
      adopted: true,
      kill: (signal = 'SIGTERM') => {
        // Not our child: its pid may belong to another process by the time a late SIGKILL comes.
        if (!isHostOf(state.pid, this.statePath)) return;
        try {
          process.kill(state.pid, signal);
        } catch {
          // Already gone.
        }
      },
      release: () => {
        released = true;
      },
    };
  }

  /** A host this supervisor cannot speak to: told to end its sessions, SIGKILLed if it lingers. */
  private async replace(state: PtyHostState): Promise<void> {
    if (!isHostOf(state.pid, this.statePath)) return;
    this.opts.log.warn(
      { host_pid: state.pid, host_protocol: state.protocol_version, protocol: PTY_PROTOCOL_VERSION },
      'the running pty host speaks another pty protocol version (an upgrade): its sessions end and a fresh host starts',
    );
    try {
      process.kill(state.pid, 'SIGUSR2');
    } catch {
      return;
    }
    const deadline = Date.now() + REPLACE_GRACE_MS;
    while (isHostOf(state.pid, this.statePath) && Date.now() < deadline) await sleep(25);
    if (isHostOf(state.pid, this.statePath)) process.kill(state.pid, 'SIGKILL');
  }

  private socketPath(): string {
    const name = `pty-${randomBytes(8).toString('hex')}.sock`;
    const inDir = join(this.opts.configDir, name);
    return Buffer.byteLength(inDir) <= MAX_SOCKET_PATH ? inDir : join(tmpdir(), name);
  }

  private async spawnFresh(): Promise<StartedWorker> {
    rmSync(this.statePath, { force: true });
    mkdirSync(this.opts.logDir, { recursive: true, mode: 0o700 });
    const logFd = openSync(join(this.opts.logDir, 'pty-host.log'), 'a', 0o600);
    const socketPath = this.socketPath();
    const args = [this.opts.entry, '--listen', socketPath, '--state', this.statePath, '--orphan-timeout-ms', String(this.opts.orphanTimeoutMs())];
    if (this.opts.instance !== null) args.push('--instance', this.opts.instance);
    // detached: setsid, so the host has no controlling terminal and no signal meant for the
    // supervisor's group (Ctrl-C, a service manager's kill) reaches it.
    const child = spawn(process.execPath, [...(this.opts.nodeArgs ?? []), ...args], { detached: true, stdio: ['ignore', logFd, logFd], env: this.opts.env });
    closeSync(logFd);
    child.unref();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    let gone = false;
    void exited.then(() => (gone = true));
    const kill = (signal: NodeJS.Signals = 'SIGTERM'): void => {
      try {
        child.kill(signal);
      } catch {
        // Already gone.
      }
    };
    const deadline = Date.now() + LISTEN_TIMEOUT_MS;
    for (;;) {
      if (gone) throw new Error(`the pty host exited before listening (see ${join(this.opts.logDir, 'pty-host.log')})`);
      try {
        const sock = await connectSocket(socketPath);
        return { pid: child.pid ?? -1, transport: streamTransport(sock, sock), linkClosed: closedPromise(sock), exited, kill };
      } catch {
        if (Date.now() > deadline) {
          kill('SIGKILL');
          throw new Error(`the pty host did not listen on ${socketPath} within ${LISTEN_TIMEOUT_MS} ms`);
        }
        await sleep(20);
      }
    }
  }
}
