/** Starts a worker as a child process with a duplex socket on fd 3 for the channel; stdout/stderr stay for logs. */
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';

import { streamTransport } from '../../shared/transports/stream.js';
import type { Transport } from '../../shared/transports/transport.js';

export interface StartedWorker {
  pid: number;
  transport: Transport;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
  /** A detached host that was running already (its sessions are adopted), not one started now. */
  adopted?: boolean;
  /** The supervisor leaves this host running (it stops watching whether it exits). */
  release?(): void;
  /**
   * Resolves once the link to the host is closed on both sides: after a close, every frame sent
   * before it has been written (or the link failed). A detached host's link; absent for a child's.
   */
  linkClosed?: Promise<void>;
}

/** The seam the host's restart logic is written against; tests can hand in an object literal. */
export interface WorkerStarter {
  start(): StartedWorker | Promise<StartedWorker>;
}

export interface ProcessStarterOptions {
  /** Path of the worker's compiled entry file. */
  entry: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Receives each line the worker writes to stdout/stderr. */
  onOutput?: (line: string, stream: 'stdout' | 'stderr') => void;
}

export class ProcessStarter implements WorkerStarter {
  constructor(private readonly opts: ProcessStarterOptions) {}

  start(): StartedWorker {
    const child = spawn(process.execPath, [this.opts.entry, ...(this.opts.args ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: this.opts.env ?? process.env,
    });
    for (const [stream, name] of [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ] as const) {
      let pending = '';
      stream?.setEncoding('utf8').on('data', (d: string) => {
        pending += d;
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          this.opts.onOutput?.(pending.slice(0, nl), name);
          pending = pending.slice(nl + 1);
        }
      });
    }
    const sock = child.stdio[3] as Socket;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    return {
      pid: child.pid ?? -1,
      transport: streamTransport(sock, sock),
      exited,
      kill: (signal = 'SIGTERM') => {
        try {
          child.kill(signal);
        } catch {
          // Already gone.
        }
      },
    };
  }
}
