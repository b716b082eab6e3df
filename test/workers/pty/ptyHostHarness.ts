/**
 * Drives the compiled pty host the way the supervisor does: by default a detached-style host on a
 * unix socket of its own (`--listen`, the mode tuicd runs), or with `mode: 'attached'` a child with a
 * duplex socket on fd 3; a PtyProtocol client over it, and a recorder of every event per session.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { type Socket, connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Client, connect } from '../../../shared/channel.js';
import { PtyProtocol, type PtyProtocolT } from '../../../shared/protocol/pty.js';
import { streamTransport } from '../../../shared/transports/stream.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

export const HOST_MAIN = new URL('../../../workers/pty/main.js', import.meta.url).pathname;

/** A host that ignores its socket closing gets this long before SIGKILL. */
const HOST_STOP_MS = 3_000;

export interface ExitEvent {
  exit_code: number | null;
  signal: number | null;
  total_written: number;
}

/** Everything one session sent, in arrival order. */
export class SessionRecord {
  readonly chunks: Buffer[] = [];
  readonly offsets: number[] = [];
  readonly states: string[] = [];
  exit: ExitEvent | undefined;
  /** Number of data events that arrived after the exit event (must stay 0). */
  lateData = 0;
  private cached: Buffer | undefined;

  get bytes(): Buffer {
    this.cached ??= Buffer.concat(this.chunks);
    return this.cached;
  }

  get text(): string {
    return this.bytes.toString('utf8');
  }

  addData(offset: number, payload: Uint8Array | undefined): void {
    if (this.exit !== undefined) this.lateData++;
    // Received payloads may be views into the transport's buffer: keep a copy.
    this.chunks.push(Buffer.from(payload ?? new Uint8Array(0)));
    this.offsets.push(offset);
    this.cached = undefined;
  }

  /** Asserts the data events tile [0, n) without gap or overlap; returns n. */
  contiguousLength(): number {
    let expected = 0;
    for (let i = 0; i < this.chunks.length; i++) {
      if (this.offsets[i] !== expected) throw new Error(`data event ${i} starts at ${this.offsets[i]}, expected ${expected}`);
      expected += this.chunks[i]!.length;
    }
    return expected;
  }
}

export interface SpawnOverrides {
  shell?: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  rows?: number;
  cols?: number;
}

export interface PtyHostHandle {
  client: Client<PtyProtocolT>;
  /** Listening mode: the host's socket and state file (in a temp dir removed by stop()). */
  socketPath: string | null;
  statePath: string | null;
  /**
   * Acknowledge output as the supervisor does (on by default); off, the host holds a session once
   * PtyConstants.UNACKED_OUTPUT_BYTES are outstanding. Turning it on acknowledges the backlog.
   */
  setAcking(on: boolean): void;
  child: ChildProcess;
  exited: Promise<unknown[]>;
  record(id: string): SessionRecord;
  /** Sessions whose tombstone the host dropped (`tombstoneDropped`), in order. */
  dropped: string[];
  /** Spawns a session with test defaults (a quiet env, a fixed prompt); returns its id and pid. */
  spawnSession(overrides?: SpawnOverrides): Promise<{ id: string; pid: number; shell: string }>;
  waitForText(id: string, pattern: string | RegExp, timeoutMs?: number): Promise<string>;
  waitForExit(id: string, timeoutMs?: number): Promise<ExitEvent>;
  stop(): Promise<void>;
}

/**
 * The child env every test session starts from: predictable prompt, UTF-8 locale, no rc files, and a
 * HOME of the test's own with HISTFILE=/dev/null (HOME was tmpdir(): bash wrote /tmp/.bash_history).
 */
export function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv(), LANG: 'C.UTF-8', PS1: '$ ', TERM: 'xterm-256color' };
}

export interface StartOptions {
  /** Added to the host's environment (e.g. TUIC_PTY_TOMBSTONE_BUDGET_BYTES). */
  env?: Record<string, string>;
  /** 'listening' (default): the host tuicd runs, on its own unix socket; 'attached': the fd 3 link. */
  mode?: 'listening' | 'attached';
  /** Listening mode: how long sessions wait for a supervisor once none is attached. */
  orphanTimeoutMs?: number;
}

/** Connects to a listening host's socket, retrying until it listens (or `timeoutMs`). */
export async function connectSocket(path: string, timeoutMs = 10_000): Promise<Socket> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const sock = netConnect({ path });
        sock.once('connect', () => {
          sock.removeListener('error', reject);
          resolve(sock);
        });
        sock.once('error', reject);
      });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(20);
    }
  }
}

/**
 * A second client on a listening host, as the next supervisor connects: retried while the host still
 * holds the previous link (it closes a connection it cannot take before the hello).
 */
export async function connectAgain(socketPath: string, timeoutMs = 10_000): Promise<Client<PtyProtocolT>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sock = await connectSocket(socketPath, timeoutMs);
    const client = connect(streamTransport(sock, sock), PtyProtocol, { handshakeTimeout: 3_000 });
    try {
      await client.ready;
      return client;
    } catch (err) {
      client.dispose();
      if (Date.now() > deadline) throw err;
      await sleep(20);
    }
  }
}

export async function startPtyHost(options: StartOptions = {}): Promise<PtyHostHandle> {
  const env = options.env === undefined ? {} : { env: { ...process.env, ...options.env } };
  let child: ChildProcess;
  let exited: Promise<unknown[]>;
  let sock: Socket;
  let dir: string | null = null;
  let socketPath: string | null = null;
  let statePath: string | null = null;
  if (options.mode === 'attached') {
    child = spawn(process.execPath, [HOST_MAIN], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'], ...env });
    exited = once(child, 'exit');
    sock = child.stdio[3] as Socket;
  } else {
    dir = mkdtempSync(join(tmpdir(), 'pty-host-test-'));
    socketPath = join(dir, 'pty-test.sock');
    statePath = join(dir, 'pty-host.json');
    const args = [HOST_MAIN, '--listen', socketPath, '--state', statePath, '--orphan-timeout-ms', String(options.orphanTimeoutMs ?? 60_000)];
    child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], ...env });
    exited = once(child, 'exit');
    const state = statePath;
    // The state file is written once the socket listens.
    await waitFor(
      () => existsSync(state) || child.exitCode !== null,
      10_000,
      () => 'the pty host never wrote its state file',
    );
    sock = await connectSocket(socketPath);
  }
  const client = connect(streamTransport(sock, sock), PtyProtocol);
  const records = new Map<string, SessionRecord>();
  const record = (id: string): SessionRecord => {
    let r = records.get(id);
    if (r === undefined) records.set(id, (r = new SessionRecord()));
    return r;
  };
  let acking = true;
  const unacked = new Map<string, number>();
  client.on('data', (e, payload) => {
    record(e.session_id).addData(e.offset, payload);
    const bytes = payload?.length ?? 0;
    if (acking) client.emit('ack', { session_id: e.session_id, bytes });
    else unacked.set(e.session_id, (unacked.get(e.session_id) ?? 0) + bytes);
  });
  client.on('state', (e) => record(e.session_id).states.push(e.shell_state));
  client.on('exit', (e) => {
    record(e.session_id).exit = { exit_code: e.exit_code, signal: e.signal, total_written: e.total_written };
  });
  const dropped: string[] = [];
  client.on('tombstoneDropped', (e) => dropped.push(e.session_id));
  await client.ready;

  const handle: PtyHostHandle = {
    client,
    socketPath,
    statePath,
    setAcking(on) {
      acking = on;
      if (!on) return;
      for (const [session_id, bytes] of unacked) client.emit('ack', { session_id, bytes });
      unacked.clear();
    },
    child,
    exited,
    record,
    dropped,
    async spawnSession(overrides = {}) {
      const id = randomUUID();
      record(id);
      const { pid, shell } = await client.request('spawn', {
        session_id: id,
        shell: overrides.shell ?? '/bin/sh',
        args: overrides.args ?? [],
        cwd: overrides.cwd ?? tmpdir(),
        env: overrides.env ?? baseEnv(),
        rows: overrides.rows ?? 24,
        cols: overrides.cols ?? 80,
      });
      return { id, pid, shell };
    },
    async waitForText(id, pattern, timeoutMs = 10_000) {
      const r = record(id);
      const ok = () => (typeof pattern === 'string' ? r.text.includes(pattern) : pattern.test(r.text));
      await waitFor(ok, timeoutMs, () => `output of ${id} never matched ${String(pattern)}; got ${JSON.stringify(r.text.slice(-500))}`);
      return r.text;
    },
    async waitForExit(id, timeoutMs = 10_000) {
      const r = record(id);
      await waitFor(
        () => r.exit !== undefined,
        timeoutMs,
        () => `session ${id} did not exit`,
      );
      return r.exit!;
    },
    async stop() {
      client.dispose();
      if (child.exitCode === null && child.signalCode === null) {
        // A listening host outlives its supervisor's link: told to end, as `tuicd stop` does.
        if (dir !== null) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), HOST_STOP_MS);
        await exited;
        clearTimeout(timer);
      }
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

/** Polls `ok` every 10 ms; throws with `describe()` after `timeoutMs`. */
export async function waitFor(ok: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(describe());
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Pids whose process group is `pgid` and that are not zombies (read from /proc). */
export function liveGroupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const pid of readProcPids()) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // Exited while we looked.
    }
    // Fields after the ")" that closes the command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && Number(fields[2]) === pgid) found.push(pid);
  }
  return found;
}

function readProcPids(): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
}
