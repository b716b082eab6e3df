/**
 * The tuicd under fuzz: a real process (dist/supervisor/main.js) in a temporary config dir with a
 * temporary HOME, the unix socket and a TCP listener on 127.0.0.1 with Basic Auth. The harness owns
 * a few cheap sessions (two /bin/sh, two /bin/cat), an MCP session, a long-lived /events stream and a
 * mock upstream MCP server; its maintenance loop keeps them alive, deletes sessions the fuzz
 * created, and puts back config and upstreams a fuzzed save changed. Every process it started (tuicd
 * and whatever tuicd left behind) is stopped, by pid.
 */
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Tuicd } from '../helpers/tuicdProcess.js';
import { baselineUpstreams } from './cases.js';
import { LINK_OUT, SECRET_FILE } from './containment.js';
import type { FuzzCtx, Slot } from './cases.js';
import { send } from './client.js';
import type { Answer, Target } from './client.js';
import { fromPlain } from './values.js';

const MOCK_UPSTREAM = new URL('../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;
const USERNAME = 'u';
const SLOT_KINDS: ReadonlyArray<Slot['kind']> = ['sh', 'sh', 'cat', 'cat'];
/** The config keys a fuzzed save may change that the harness puts back (so later cases still reach /mcp, the session tool, …). */
const CONFIG_BASELINE = {
  mcp_server_enabled: true,
  collapse_tools: false,
  progress_tracking: true,
  disabled_native_tools: ['config', 'debug'],
  shell: null,
} as const;
/** Slots are replaced by fresh sessions this often, so a clogged input line never lasts. */
const SLOT_RECYCLE_MS = 30_000;

export interface ProcInfo {
  pid: number;
  startTime: string;
  cmd: string;
}

/** VmRSS and VmHWM (peak) of a process, in KiB; null when it is gone. */
export function readRss(pid: number): { rssKb: number; peakKb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+)/.exec(status);
    const hwm = /VmHWM:\s+(\d+)/.exec(status);
    return rss ? { rssKb: Number(rss[1]), peakKb: hwm ? Number(hwm[1]) : Number(rss[1]) } : null;
  } catch {
    return null;
  }
}

function statOf(pid: number): { ppid: number; startTime: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(rest[1]), startTime: rest[19] ?? '' };
  } catch {
    return null;
  }
}

function cmdOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 200);
  } catch {
    return '';
  }
}

/** Every live descendant of `root` (pty host, shells, upstream servers and their children). */
export function descendants(root: number): ProcInfo[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = statOf(Number(name));
    if (!s) continue;
    const list = children.get(s.ppid) ?? [];
    list.push(Number(name));
    children.set(s.ppid, list);
  }
  const out: ProcInfo[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const s = statOf(pid);
    if (!s) continue;
    out.push({ pid, startTime: s.startTime, cmd: cmdOf(pid) });
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** A long-lived SSE reader that just drains the stream and notes when it ends. */
class HeldStream {
  closed = false;
  bytes = 0;
  private readonly sock: Socket;

  constructor(target: Target, path: string) {
    this.sock = 'socketPath' in target ? connect({ path: target.socketPath }) : connect({ host: '127.0.0.1', port: target.port });
    this.sock.on('connect', () => this.sock.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n`));
    this.sock.on('data', (d: Buffer) => (this.bytes += d.length));
    this.sock.on('error', () => undefined);
    this.sock.on('close', () => (this.closed = true));
  }

  close(): void {
    this.sock.destroy();
  }
}

export interface TargetOptions {
  seed: number;
  engine?: string;
  tcp: boolean;
}

export class FuzzTarget {
  readonly root: string;
  readonly ctx: FuzzCtx;
  tuicd!: Tuicd;
  /** Set when tuicd exited on its own. */
  exit: { code: number | null; signal: string | null; atMs: number } | null = null;
  harnessRequests = 0;
  private stream: HeldStream | null = null;
  private known = new Map<number, ProcInfo>();
  private slotGen = 0;
  private lastRecycle = Date.now();
  private tick = 0;
  private stopping = false;

  /** Times a fuzzed save turned the TCP listener off (or moved it) and the harness put it back. */
  tcpRestores = 0;

  private constructor(
    private readonly opts: TargetOptions,
    root: string,
    ctx: FuzzCtx,
    private readonly servicesBaseline: object,
  ) {
    this.root = root;
    this.ctx = ctx;
  }

  get pid(): number {
    return this.tuicd.child.pid!;
  }

  get socket(): Target {
    return { socketPath: this.tuicd.socketPath };
  }

  static async start(opts: TargetOptions): Promise<FuzzTarget> {
    const root = mkdtempSync(join(tmpdir(), 'tuicd-fuzz-'));
    const home = join(root, 'home');
    const configDir = join(root, 'config');
    const workDir = join(root, 'work');
    const outsideDir = join(root, 'outside');
    for (const d of [home, configDir, workDir, outsideDir]) mkdirSync(d, { recursive: true });
    makeContainmentFixture(workDir, outsideDir);
    const password = `fuzz-password-${opts.seed}`;
    // Cost 4: the server verifies whatever cost the hash says, and wrong-password cases stay cheap.
    const passwordHash = await bcryptHash(password, { cost: 4 });
    const services = {
      server: { enabled: opts.tcp, port: 0 },
      // No lockout: bad-credential cases must not shut the fuzzer out of its own TCP listener.
      auth: { username: USERNAME, password_hash: passwordHash, auth_rate_limit_max: 0 },
    };
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ services }));
    const upstreamId = randomUUID();
    const ctx: FuzzCtx = {
      seed: opts.seed,
      tcpPort: null,
      authHeader: `Basic ${Buffer.from(`${USERNAME}:${password}`).toString('base64')}`,
      username: USERNAME,
      slots: SLOT_KINDS.map((kind, i) => ({ kind, id: `fz${opts.seed}-${kind}${i}-g0` })),
      mcpSessionId: '',
      eventStreamId: `fz-events-${opts.seed}`,
      upstreamBase: null,
      upstreamName: 'mock',
      upstreamId,
      nodePath: process.execPath,
      mockScript: MOCK_UPSTREAM,
      workDir,
      outsideDir,
      home,
    };
    writeFileSync(join(configDir, 'mcp-upstreams.json'), JSON.stringify(baselineUpstreams(ctx), null, 2), { mode: 0o600 });
    const t = new FuzzTarget(opts, root, ctx, services);
    try {
      t.tuicd = await Tuicd.start({
        configDir,
        env: {
          HOME: home,
          HISTFILE: '/dev/null',
          // The default shell of sessions created without one: dash, never the caller's login shell.
          SHELL: '/bin/sh',
          // info: tcpStoppedDuring() reads the 'TCP listener stopped' line (a fuzzed save turning remote access off).
          TUIC_LOG_LEVEL: 'info',
          ...(opts.engine ? { TUIC_HTTP_ENGINE: opts.engine } : {}),
        },
      });
    } catch (err) {
      rmSync(root, { recursive: true, force: true });
      throw err;
    }
    void t.tuicd.exited.then((code) => {
      if (!t.stopping) t.exit = { code, signal: t.tuicd.child.signalCode, atMs: Date.now() };
    });
    // If the fuzzer itself dies (an exception, EPIPE on a closed stdout), tuicd must not outlive it.
    process.once('exit', t.killOnExit);
    try {
      ctx.tcpPort = t.tuicd.tcpPort;
      if (opts.tcp && ctx.tcpPort === null) throw new Error(`tuicd did not open its TCP listener: ${t.tuicd.stdout}`);
      await t.setup();
    } catch (err) {
      await t.stop();
      throw err;
    }
    return t;
  }

  /** A harness request over the socket (not counted as a fuzz case). */
  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    this.harnessRequests++;
    const payload = body === undefined ? null : Buffer.from(JSON.stringify(body), 'utf8');
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    if (payload) lines.push('Content-Type: application/json', `Content-Length: ${payload.length}`);
    const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
    return send(this.socket, payload ? [head, payload] : [head], { timeoutMs: 15_000, head: false });
  }

  private async json(method: string, path: string, body?: unknown): Promise<any> {
    const a = await this.call(method, path, body);
    if (a.kind !== 'answer' || a.status >= 400) throw new Error(`${method} ${path}: ${a.kind} ${a.status} ${a.body.toString('utf8').slice(0, 300)}`);
    return a.body.length > 0 ? JSON.parse(a.body.toString('utf8')) : null;
  }

  private async setup(): Promise<void> {
    if (this.ctx.tcpPort !== null) {
      const a = await send(
        { port: this.ctx.tcpPort },
        [Buffer.from(`GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${this.ctx.tcpPort}\r\nAuthorization: ${this.ctx.authHeader}\r\nConnection: close\r\n\r\n`)],
        { timeoutMs: 15_000, head: false },
      );
      if (a.status !== 200) throw new Error(`TCP listener refused the fuzzer's own credentials: ${a.status} ${a.body.toString('utf8').slice(0, 200)}`);
    }
    await this.ensureSlots(true);
    const init = await this.call(
      'POST',
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tuicd-fuzz', version: '1' } },
      },
      { Accept: 'application/json, text/event-stream' },
    );
    this.ctx.mcpSessionId = init.headers['mcp-session-id'] ?? '';
    if (!this.ctx.mcpSessionId) throw new Error(`initialize minted no Mcp-Session-Id: ${init.status} ${init.body.toString('utf8').slice(0, 200)}`);
    this.stream = new HeldStream(this.socket, `/events?stream_id=${this.ctx.eventStreamId}`);
    this.ctx.upstreamBase = fromPlain(await this.json('GET', '/mcp/upstreams'));
    this.scanProcesses();
  }

  private async createSlot(i: number): Promise<void> {
    const kind = SLOT_KINDS[i]!;
    const id = `fz${this.opts.seed}-${kind}${i}-g${this.slotGen}`;
    await this.json('POST', '/sessions', { session_id: id, shell: kind === 'sh' ? '/bin/sh' : '/bin/cat', cwd: this.ctx.workDir, rows: 24, cols: 80 });
    this.ctx.slots[i] = { kind, id };
  }

  /** Recreates dead slots (or all, to recycle) and deletes every other live session. */
  private async ensureSlots(all: boolean): Promise<void> {
    const live: Array<{ session_id: string }> = await this.json('GET', '/sessions');
    const liveIds = new Set(live.map((s) => s.session_id));
    const slotIds = new Set(this.ctx.slots.map((s) => s.id));
    for (const s of live) if (!slotIds.has(s.session_id) || all) await this.call('DELETE', `/sessions/${encodeURIComponent(s.session_id)}`);
    const missing = this.ctx.slots.map((s, i) => (all || !liveIds.has(s.id) ? i : -1)).filter((i) => i >= 0);
    if (missing.length > 0) {
      this.slotGen++;
      for (const i of missing) await this.createSlot(i);
    }
  }

  /** Record descendants so they can be stopped even if tuicd dies without stopping them. */
  scanProcesses(): void {
    if (this.exit) return;
    for (const p of descendants(this.pid)) this.known.set(p.pid, p);
  }

  /** One maintenance pass; errors are swallowed (a dead tuicd is noticed by the exit watch). */
  async maintain(): Promise<void> {
    if (this.exit || this.stopping) return;
    this.tick++;
    try {
      const recycle = Date.now() - this.lastRecycle > SLOT_RECYCLE_MS;
      if (recycle) this.lastRecycle = Date.now();
      await this.ensureSlots(recycle);
      if (this.stream?.closed) this.stream = new HeldStream(this.socket, `/events?stream_id=${this.ctx.eventStreamId}`);
      if (this.tick % 2 === 0) await this.restoreConfig();
      if (this.tick % 3 === 1) await this.restoreUpstreams();
      this.scanProcesses();
    } catch {
      // Next tick tries again.
    }
  }

  private async restoreConfig(): Promise<void> {
    const cfg = await this.json('GET', '/config');
    const drift = Object.entries(CONFIG_BASELINE).some(([k, v]) => JSON.stringify(cfg?.[k]) !== JSON.stringify(v));
    if (drift) await this.json('PUT', '/config', CONFIG_BASELINE);
    if (!this.opts.tcp) return;
    // A merge-patch null (or anything else) that reset services: TCP off or moved, auth gone. Put it back.
    const tcpOk = this.ctx.tcpPort !== null && (await this.probeTcp(this.ctx.tcpPort));
    if (!tcpOk) {
      this.tcpRestores++;
      await this.json('PUT', '/config', { services: this.servicesBaseline });
      for (let i = 0; i < 50; i++) {
        const health = await this.json('GET', '/health');
        const port = health?.listeners?.tcp?.port;
        if (typeof port === 'number' && (await this.probeTcp(port))) {
          this.ctx.tcpPort = port;
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  private async probeTcp(port: number): Promise<boolean> {
    this.harnessRequests++;
    const a = await send(
      { port },
      [Buffer.from(`GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${this.ctx.authHeader}\r\nConnection: close\r\n\r\n`)],
      { timeoutMs: 5_000, head: false },
    );
    return a.status === 200;
  }

  private async restoreUpstreams(): Promise<void> {
    const current = await this.json('GET', '/mcp/upstreams');
    const want = baselineUpstreams(this.ctx);
    const norm = (v: unknown) => JSON.stringify((v as { servers?: unknown[] })?.servers ?? null);
    if (norm(current) !== norm(want)) {
      const a = await this.call('PUT', '/mcp/upstreams', { base: current, config: want });
      if (a.status < 400) this.ctx.upstreamBase = fromPlain(want);
      else this.ctx.upstreamBase = fromPlain(current);
    } else this.ctx.upstreamBase = fromPlain(current);
  }

  rss(): { rssKb: number; peakKb: number } | null {
    return readRss(this.pid);
  }

  /** RSS of the pty host (a direct child running workers/pty/main.js), if running. */
  ptyHostRss(): number | null {
    const host = descendants(this.pid).find((p) => p.cmd.includes('workers/pty/main.js'));
    return host ? (readRss(host.pid)?.rssKb ?? null) : null;
  }

  /**
   * Whether tuicd stopped its TCP listener (a fuzzed config save turned remote access off or moved
   * it) between `fromMs` and `toMs`: connections it had accepted but not yet read a request from are
   * closed then, with no answer. Logs arrive a little late (pino's thread): polled for up to 1 s.
   */
  async tcpStoppedDuring(fromMs: number, toMs: number): Promise<boolean> {
    for (let i = 0; i < 10; i++) {
      for (const line of this.tuicd.stderr.split('\n')) {
        if (!line.includes('TCP listener stopped')) continue;
        try {
          const time = (JSON.parse(line) as { time?: number }).time;
          if (typeof time === 'number' && time >= fromMs - 100 && time <= toMs + 100) return true;
        } catch {
          // not a log record
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  /** Error-level (≥ 50) lines tuicd logged, as {msg, count}. */
  loggedErrors(): { total: number; warnings: number; distinct: Array<{ msg: string; count: number }> } {
    const counts = new Map<string, number>();
    let total = 0;
    let warnings = 0;
    for (const line of this.tuicd.stderr.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const rec = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string }; path?: string; method?: string };
        if ((rec.level ?? 0) === 40) warnings++;
        if ((rec.level ?? 0) < 50) continue;
        total++;
        const msg = `${rec.msg ?? ''}${rec.method ? ` ${rec.method}` : ''}${rec.path ? ` ${rec.path}` : ''}${rec.err?.message ? `: ${rec.err.message}` : ''}`
          .slice(0, 200)
          .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/gi, '<uuid>')
          .replace(/fz\d*-[a-z]+\d-g\d+/g, '<slot>');
        counts.set(msg, (counts.get(msg) ?? 0) + 1);
      } catch {
        // not a log record
      }
    }
    return { total, warnings, distinct: [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([msg, count]) => ({ msg, count })) };
  }

  /** Synchronous last resort at process exit: SIGKILL tuicd and every descendant seen, remove the temp dir. */
  private readonly killOnExit = (): void => {
    for (const p of [{ pid: this.tuicd.child.pid ?? 0, startTime: '' }, ...this.known.values()]) {
      if (p.pid <= 0 || (p.startTime !== '' && statOf(p.pid)?.startTime !== p.startTime)) continue;
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(this.root, { recursive: true, force: true });
  };

  /** Stops tuicd, then any process it left behind (by pid, checked against its start time), and removes the temp dir. */
  async stop(): Promise<{ exitCode: number | null; leftovers: ProcInfo[] }> {
    this.scanProcesses();
    this.stopping = true;
    process.off('exit', this.killOnExit);
    this.stream?.close();
    const exitCode = await this.tuicd.stop();
    // Helpers that exit on their own once tuicd is gone (the upstream group reaper reads EOF) get a moment.
    const alive = () => [...this.known.values()].filter((p) => statOf(p.pid)?.startTime === p.startTime);
    for (let i = 0; i < 30 && alive().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const leftovers: ProcInfo[] = [];
    for (const p of alive()) {
      leftovers.push(p);
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    rmSync(this.root, { recursive: true, force: true });
    return { exitCode, leftovers };
  }
}

/**
 * The work tree is a git repository with one commit (a root while the fuzzer's sessions run in it);
 * the outside directory beside it holds a secret and is reachable from the work tree only through
 * a symlink and `..`, which the root gate must see through.
 */
function makeContainmentFixture(workDir: string, outsideDir: string): void {
  writeFileSync(join(outsideDir, SECRET_FILE), 'outside every root\n');
  writeFileSync(join(workDir, 'README.md'), 'hello from the fuzz work tree\n');
  symlinkSync(outsideDir, join(workDir, LINK_OUT));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=fuzz', '-c', 'user.email=fuzz@localhost', '-c', 'init.defaultBranch=main', ...args], {
      cwd: workDir,
      stdio: 'ignore',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
  git('init', '-q');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'fuzz fixture');
}
