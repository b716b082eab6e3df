/** Starts a real tuicd (the compiled binary) in a temporary config dir and talks to it over the socket or TCP. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { IncomingHttpHeaders, RequestOptions } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isHostOf } from '../../supervisor/hosts/ptyHostState.js';
import { makeTestHome, shellHomeEnv } from './testHome.js';

export const MAIN_JS = new URL('../../supervisor/main.js', import.meta.url).pathname;
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;

export interface StartOptions {
  config?: object;
  configDir?: string;
  /**
   * On top of the test's own environment, a HOME of its own (removed once tuicd exits) and HISTFILE=/dev/null,
   * so the sessions' shells leave nothing in the machine's home; HOME or HISTFILE set here is used instead.
   */
  env?: Record<string, string>;
  args?: string[];
  /** The Node binary to run tuicd on; default the one running the tests. */
  node?: string;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json<T = any>(): T;
}

export class Tuicd {
  stdout = '';
  stderr = '';
  socketPath = '';
  tcpPort: number | null = null;
  readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly configDir: string,
    private readonly ownsDir: boolean,
    /** tuicd's HOME: the default cwd of its sessions and their shells' home. */
    readonly home: string,
    /** Whether `home` was made for this tuicd (not given in `env`). */
    ownsHome: boolean,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    // A HOME made here goes once tuicd exited: after stop(), and also when a test killed it and never calls stop().
    if (ownsHome) void this.exited.then(() => rmSync(home, { recursive: true, force: true }));
  }

  static async start(opts: StartOptions = {}): Promise<Tuicd> {
    const ownsDir = !opts.configDir;
    const configDir = opts.configDir ?? mkdtempSync(join(tmpdir(), 'tuicd-test-'));
    if (opts.config) writeFileSync(join(configDir, 'config.json'), JSON.stringify(opts.config));
    const givenHome = opts.env?.['HOME'];
    const home = givenHome ?? makeTestHome();
    const env = { ...process.env, ...shellHomeEnv(home), TUIC_BIND_HOST: '127.0.0.1', TUIC_LOG_LEVEL: 'info', TUIC_CREDENTIAL_STORE: 'file', ...opts.env };
    const child = spawn(opts.node ?? process.execPath, [MAIN_JS, '--config-dir', configDir, ...(opts.args ?? [])], {
      // The file vault skips the keyring probe (a child process); the keyring has its own tests.
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const t = new Tuicd(child, configDir, ownsDir, home, givenHome === undefined);
    await t.waitForStartLine();
    return t;
  }

  /**
   * Runs tuicd expecting it to fail to start; resolves with its exit code and output. It gets a HOME of
   * its own (removed after) and HISTFILE=/dev/null, as in start(); `env` may override either.
   */
  static async runToExit(
    args: string[],
    env: Record<string, string> = {},
    node = process.execPath,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const home = makeTestHome();
    const child = spawn(node, [MAIN_JS, ...args], {
      env: { ...process.env, ...shellHomeEnv(home), TUIC_BIND_HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    clearTimeout(killer);
    rmSync(home, { recursive: true, force: true });
    return { code, stdout, stderr };
  }

  private async waitForStartLine(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let exitCode: number | null | undefined;
    void this.exited.then((c) => (exitCode = c));
    while (Date.now() < deadline) {
      const m = /serving on unix socket (\S+)(?: and tcp http:\/\/[^\s:]+:(\d+))?/.exec(this.stdout);
      if (m) {
        this.socketPath = m[1]!;
        this.tcpPort = m[2] ? Number(m[2]) : null;
        return;
      }
      if (exitCode !== undefined) throw new Error(`tuicd exited (${exitCode}) before serving: ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    this.child.kill('SIGKILL');
    throw new Error(`tuicd did not print its start line in ${START_TIMEOUT_MS} ms: ${this.stderr}`);
  }

  /** Logs reach stderr through pino's worker thread, a little after the fact: poll for them. */
  async waitForStderr(pattern: RegExp, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.stderr)) {
      if (Date.now() > deadline) throw new Error(`stderr never matched ${pattern}: ${this.stderr.slice(-1000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** HTTP over the unix socket. */
  socket(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    return httpRequest({ socketPath: this.socketPath, method, path, headers }, body);
  }

  /** Registers repositories (PUT /config/repositories): the root gate then lets the repository routes into them. */
  async registerRepos(...repos: string[]): Promise<void> {
    const r = await this.socket('PUT', '/config/repositories', JSON.stringify({ repos }), { 'content-type': 'application/json' });
    if (r.status !== 200) throw new Error(`PUT /config/repositories: ${r.status} ${r.text}`);
  }

  /** HTTP over TCP on 127.0.0.1. */
  tcp(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}, port = this.tcpPort): Promise<HttpAnswer> {
    if (port === null) throw new Error('TCP listener is not on');
    return httpRequest({ host: '127.0.0.1', port, method, path, headers }, body);
  }

  /**
   * The detached pty host outlives a tuicd that was killed or kept its sessions: a test that leaves
   * one (by failing, or on purpose) has it ended here with its sessions.
   */
  private async stopLeftPtyHost(): Promise<void> {
    const statePath = join(this.configDir, 'pty-host.json');
    let pid: number;
    try {
      pid = (JSON.parse(readFileSync(statePath, 'utf8')) as { pid: number }).pid;
    } catch {
      return;
    }
    // Only while the pid is still this dir's host: a pid from a file left behind may be another test's process by now.
    const alive = (): boolean => isHostOf(pid, statePath);
    if (!alive()) return;
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (alive()) process.kill(pid, 'SIGKILL');
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
    }
    await this.stopLeftPtyHost();
    if (this.ownsDir) rmSync(this.configDir, { recursive: true, force: true });
    return this.child.exitCode;
  }
}

/** `send`: node:http's request, or node:https's for a TLS listener. */
export function httpRequest(opts: RequestOptions, body?: string | Buffer, send: typeof request = request): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = send({ agent: false, ...opts }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: buf,
          text: buf.toString('utf8'),
          json: () => JSON.parse(buf.toString('utf8')),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/**
 * Sends a request over a raw socket and reads whatever answer comes back, even when the server
 * closes before reading the whole body (node:http may drop the response on EPIPE in that race).
 * Send `Connection: close` so the server ends the exchange.
 */
export function rawRequest(
  target: { path: string } | { host: string; port: number },
  head: string,
  body: Buffer,
): Promise<{ status: number; head: string; text: string }> {
  return new Promise((resolve, reject) => {
    const sock = 'path' in target ? connect({ path: target.path }) : connect({ host: target.host, port: target.port });
    let received = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (received += d));
    sock.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    sock.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(received.slice(0, 200))}`));
      const split = received.indexOf('\r\n\r\n');
      resolve({ status: Number(m[1]), head: split >= 0 ? received.slice(0, split + 2) : received, text: split >= 0 ? received.slice(split + 4) : '' });
    });
    // No end(): uWS treats a client's half-close as a hang-up and may drop the answer.
    sock.write(head);
    // No empty write: with it, about half of the answers to `Connection: close` requests came back
    // empty (70 of 150 GETs of /health), without it none did.
    if (body.length > 0) sock.write(body);
  });
}
