/**
 * The session benches' load generator, in its own process (never in tuicd's, never in the runner's):
 * WebSocket viewers, keystroke timing, a /health prober, and the bare node-pty baselines. Reads one
 * JSON command per stdin line (protocol.ts) and prints one `RESULT {...}` line per answer. Exits
 * when stdin closes (the bench went away) or after a hard bound.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';

import { spawn as spawnPty, type IPty } from '@lydell/node-pty';
import WebSocket from 'ws';

import {
  RESULT_PREFIX,
  type BareHoldResult,
  type ClientAnswer,
  type ClientCommand,
  type EchoResult,
  type EchoSpec,
  type HealthResult,
  type OutputCheck,
  type StreamResult,
  type StreamSpec,
  type ViewerCloseResult,
  type ViewerOpenResult,
  type ViewerStreamResult,
} from './protocol.js';
import { READY_MARKER, SHELL } from './scripts.js';

const ClientConstants = {
  /** Whatever happens, this process is gone after this long. */
  MAX_LIFETIME_MS: 60 * 60_000,
  /** The ready marker must arrive within this long of attaching. */
  READY_TIMEOUT_MS: 15_000,
  /** One keystroke's echo must come back within this long. */
  ECHO_TIMEOUT_MS: 5_000,
  /** After the expected byte count arrived, listen this much longer for bytes that should not exist. */
  EXTRA_BYTES_GRACE_MS: 150,
  /** GET /health answers slower than this count as errors. */
  HEALTH_TIMEOUT_MS: 5_000,
} as const;

const MARKER_BYTE = READY_MARKER.charCodeAt(0);

// ---------------------------------------------------------------------------------------------
// Reading a stream: counts payload bytes after the marker, keeps them for the check after timing.

class StreamReader {
  markerSeen = false;
  bytes = 0;
  firstAt = 0;
  lastAt = 0;
  /** Kept whole and checked only once timing is over, so checking never slows the read. */
  private readonly chunks: Buffer[] = [];
  private extraBeforeMarker = 0;
  /** Set when the transport ended early (socket error or close): why no more bytes will come. */
  private endedBy: string | undefined;
  private onMarker: (() => void) | undefined;
  private onProgress: (() => void) | undefined;

  constructor(private readonly expected: number) {}

  push(chunk: Buffer): void {
    if (!this.markerSeen) {
      const at = chunk.indexOf(MARKER_BYTE);
      if (at < 0) {
        this.extraBeforeMarker += chunk.length;
        return;
      }
      this.extraBeforeMarker += at;
      this.markerSeen = true;
      chunk = chunk.subarray(at + 1);
      this.onMarker?.();
      if (chunk.length === 0) return;
    }
    const now = performance.now();
    if (this.bytes === 0) this.firstAt = now;
    this.lastAt = now;
    this.bytes += chunk.length;
    this.chunks.push(chunk);
    if (this.bytes >= this.expected) this.onProgress?.();
  }

  /** The transport is gone: stop waiting for bytes. */
  end(reason: string): void {
    this.endedBy ??= reason;
    this.onProgress?.();
  }

  marker(timeoutMs: number, what: string): Promise<void> {
    if (this.markerSeen) return Promise.resolve();
    return withTimeout(new Promise<void>((resolve) => (this.onMarker = resolve)), timeoutMs, `${what}: no ready marker within ${timeoutMs} ms`);
  }

  /** Resolves once `expected` bytes came, or when no byte came for `idleMs`. */
  complete(idleMs: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.bytes >= this.expected || this.endedBy) return resolve();
      let seen = this.bytes;
      const poll = setInterval(() => {
        if (this.bytes === seen) finish();
        seen = this.bytes;
      }, idleMs);
      const finish = (): void => {
        clearInterval(poll);
        this.onProgress = undefined;
        resolve();
      };
      this.onProgress = finish;
    });
  }

  result(check: OutputCheck): ViewerStreamResult {
    let problem = this.bytes !== this.expected ? `${this.bytes} bytes instead of ${this.expected}` : checkOutput(this.chunks, check);
    if (!problem && this.extraBeforeMarker > 0) problem = `${this.extraBeforeMarker} unexpected bytes before the ready marker`;
    if (this.endedBy && this.bytes < this.expected) problem = `${problem} (${this.endedBy})`;
    this.chunks.length = 0;
    return { bytes: this.bytes, firstAt: this.firstAt, lastAt: this.lastAt, problem };
  }
}

/** Null when the bytes are what the script prints; else the first difference. */
function checkOutput(chunks: Buffer[], check: OutputCheck): string | null {
  let pos = 0;
  if (check.kind === 'sha256') {
    const hash = createHash('sha256');
    for (const c of chunks) hash.update(c);
    const hex = hash.digest('hex');
    return hex === check.hex ? null : `sha256 ${hex.slice(0, 12)}… instead of ${check.hex.slice(0, 12)}…`;
  }
  if (check.kind === 'repeated') {
    let fill = Buffer.alloc(0);
    for (const c of chunks) {
      if (fill.length < c.length) fill = Buffer.alloc(c.length, check.byte);
      if (!c.equals(fill.subarray(0, c.length))) {
        const i = c.findIndex((b) => b !== check.byte);
        return `byte ${pos + i} is 0x${c[i]!.toString(16)}, not 0x${check.byte.toString(16)}`;
      }
      pos += c.length;
    }
    return null;
  }
  // base64 lines: a '\n' after every `lineChars` characters and at the very end, nowhere else; no '\r'.
  const period = check.lineChars + 1;
  let total = 0;
  for (const c of chunks) total += c.length;
  for (const c of chunks) {
    if (c.indexOf(0x0d) >= 0) return `a \\r near byte ${pos + c.indexOf(0x0d)} (onlcr was not off?)`;
    let from = 0;
    for (let nl = c.indexOf(0x0a); nl >= 0; nl = c.indexOf(0x0a, from)) {
      const at = pos + nl;
      if ((at + 1) % period !== 0 && at !== total - 1) return `a newline at byte ${at}, not on a ${check.lineChars}-character line end`;
      from = nl + 1;
    }
    pos += c.length;
  }
  // Every line end present: count them (the last line may be short, so there are ceil(total / period)).
  let newlines = 0;
  for (const c of chunks) for (let nl = c.indexOf(0x0a); nl >= 0; nl = c.indexOf(0x0a, nl + 1)) newlines++;
  const expectedLines = Math.ceil(total / period);
  return newlines === expectedLines ? null : `${newlines} line ends instead of ${expectedLines}`;
}

// ---------------------------------------------------------------------------------------------
// Viewers and bare PTYs.

function streamUrl(socket: string, sessionId: string, json: boolean): string {
  return `ws+unix://${socket}:/sessions/${encodeURIComponent(sessionId)}/stream${json ? '' : '?encoding=binary'}`;
}

/**
 * A viewer: raw bytes to `onBytes` (binary frames, or with `json` the default `output` frames' text as
 * the UTF-8 it was decoded from), other JSON frames counted by type.
 */
class Viewer {
  readonly frames: Record<string, number> = {};
  bytes = 0;
  /** First socket error, or how the socket closed, once it has. */
  ended: string | undefined;
  private closedWaiter: (() => void) | undefined;
  private endWaiter: ((reason: string) => void) | undefined;

  private constructor(
    readonly ws: WebSocket,
    private readonly onBytes: (chunk: Buffer) => void,
  ) {
    // After `open`, an error (e.g. a malformed frame from the server) ends the viewer; it never throws.
    ws.on('error', (err: Error) => this.markEnded(`socket error after ${this.bytes} bytes: ${err.message}`));
    ws.on('close', (code: number) => {
      this.markEnded(`socket closed (${code}) after ${this.bytes} bytes`);
      this.closedWaiter?.();
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        this.bytes += data.length;
        this.onBytes(data);
        return;
      }
      let type = 'unparsable';
      try {
        const frame = JSON.parse(data.toString('utf8')) as { type?: unknown; data?: unknown };
        type = String(frame.type);
        if (type === 'output' && typeof frame.data === 'string') {
          const bytes = Buffer.from(frame.data, 'utf8');
          this.bytes += bytes.length;
          this.onBytes(bytes);
          return;
        }
      } catch {
        // counted as unparsable
      }
      this.frames[type] = (this.frames[type] ?? 0) + 1;
      if (type === 'closed') this.closedWaiter?.();
    });
  }

  private markEnded(reason: string): void {
    if (this.ended) return;
    this.ended = reason;
    this.endWaiter?.(reason);
  }

  /** Called once if the socket errors or closes. */
  onEnd(fn: (reason: string) => void): void {
    this.endWaiter = fn;
    if (this.ended) fn(this.ended);
  }

  static open(socket: string, sessionId: string, onBytes: (chunk: Buffer) => void, json = false): Promise<Viewer> {
    return new Promise((resolve, reject) => {
      // No permessage-deflate: the viewer wants the bytes as tuicd sends them.
      const ws = new WebSocket(streamUrl(socket, sessionId, json), { perMessageDeflate: false });
      const viewer = new Viewer(ws, onBytes);
      ws.once('open', () => resolve(viewer));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** Resolves on the `closed` frame, the socket closing, or after `ms`. */
  closedOrAfter(ms: number): Promise<void> {
    if (this.frames['closed'] || this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.closedWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  close(): void {
    this.ws.terminate();
  }
}

function openBarePty(script: string): IPty {
  return spawnPty(SHELL, ['-c', script], {
    name: 'xterm-256color',
    cols: 80,
    rows: 24,
    cwd: '/tmp',
    env: { ...process.env, TERM: 'xterm-256color' } as Record<string, string>,
    // Buffers, as tuicd's pty host reads them (1.27× the throughput of strings when CPU-bound).
    encoding: null,
  });
}

/** node-pty's typings only know strings; with `encoding: null` it hands out Buffers. */
function onPtyBuffers(pty: IPty, fn: (chunk: Buffer) => void): void {
  pty.onData(fn as unknown as (data: string) => void);
}

async function killPty(pty: IPty): Promise<void> {
  const exited = new Promise<void>((resolve) => pty.onExit(() => resolve()));
  try {
    pty.kill('SIGKILL');
  } catch {
    return; // already gone
  }
  await withTimeout(exited, 5_000, 'bare pty did not exit').catch(() => undefined);
}

async function stream(cmd: Extract<ClientCommand, { op: 'stream' }>): Promise<StreamResult> {
  const readers = Array.from({ length: cmd.viewers }, () => new StreamReader(cmd.expected));
  const viewers: Viewer[] = [];
  try {
    for (const reader of readers) {
      const viewer = await Viewer.open(cmd.socket, cmd.sessionId, (c) => reader.push(c), cmd.json === true);
      viewer.onEnd((reason) => reader.end(reason));
      viewers.push(viewer);
    }
    await Promise.all(readers.map((r, i) => r.marker(ClientConstants.READY_TIMEOUT_MS, `viewer ${i}`)));
    // A text frame is typed into the PTY: the go-newline.
    viewers[0]!.ws.send('\n');
    const results = await finishStreams(readers, cmd);
    return { viewers: results.map((r, i) => ({ ...r, frames: { ...viewers[i]!.frames } })) };
  } finally {
    for (const v of viewers) v.close();
  }
}

async function bareStream(cmd: Extract<ClientCommand, { op: 'bareStream' }>): Promise<StreamResult> {
  const reader = new StreamReader(cmd.expected);
  const pty = openBarePty(cmd.script);
  try {
    onPtyBuffers(pty, (c) => reader.push(c));
    await reader.marker(ClientConstants.READY_TIMEOUT_MS, 'bare pty');
    pty.write('\n');
    return { viewers: await finishStreams([reader], cmd) };
  } finally {
    await killPty(pty);
  }
}

async function finishStreams(readers: StreamReader[], spec: StreamSpec): Promise<ViewerStreamResult[]> {
  await Promise.all(readers.map((r) => r.complete(spec.idleTimeoutMs)));
  await sleep(ClientConstants.EXTRA_BYTES_GRACE_MS);
  return readers.map((r) => r.result(spec.check));
}

// ---------------------------------------------------------------------------------------------
// Keystroke echo.

/** Types one byte at a time and times each echo; `send` types, `echoes` resolves on the next echoed byte. */
async function timeEchoes(spec: EchoSpec, send: (key: string) => void, echoes: { next(): Promise<void> }): Promise<EchoResult> {
  const samples: number[] = [];
  const span = spec.gapMaxMs - spec.gapMinMs + 1;
  for (let i = 0; i < spec.warmup + spec.keystrokes; i++) {
    const echoed = echoes.next();
    const t0 = performance.now();
    send('x');
    await withTimeout(echoed, ClientConstants.ECHO_TIMEOUT_MS, `keystroke ${i}: no echo within ${ClientConstants.ECHO_TIMEOUT_MS} ms`);
    const ms = performance.now() - t0;
    if (i >= spec.warmup) samples.push(ms);
    await sleep(spec.gapMinMs + (i % span));
  }
  return { samples };
}

/** Byte counter that resolves a waiter per echoed byte. */
class EchoWaiter {
  private waiter: (() => void) | undefined;
  private pending = 0;

  push(chunk: Buffer): void {
    this.pending += chunk.length;
    if (this.waiter && this.pending > 0) {
      this.pending--;
      const w = this.waiter;
      this.waiter = undefined;
      w();
    }
  }

  next(): Promise<void> {
    if (this.pending > 0) {
      this.pending--;
      return Promise.resolve();
    }
    return new Promise((resolve) => (this.waiter = resolve));
  }
}

async function echo(cmd: Extract<ClientCommand, { op: 'echo' }>): Promise<EchoResult> {
  const ready = new StreamReader(Number.MAX_SAFE_INTEGER);
  const echoes = new EchoWaiter();
  const viewer = await Viewer.open(cmd.socket, cmd.sessionId, (c) => (ready.markerSeen ? echoes.push(c) : ready.push(c)));
  try {
    await ready.marker(ClientConstants.READY_TIMEOUT_MS, 'echo viewer');
    return await timeEchoes(cmd, (k) => viewer.ws.send(k), echoes);
  } finally {
    viewer.close();
  }
}

async function bareEcho(cmd: Extract<ClientCommand, { op: 'bareEcho' }>): Promise<EchoResult> {
  const ready = new StreamReader(Number.MAX_SAFE_INTEGER);
  const echoes = new EchoWaiter();
  const pty = openBarePty(cmd.script);
  try {
    onPtyBuffers(pty, (c) => (ready.markerSeen ? echoes.push(c) : ready.push(c)));
    await ready.marker(ClientConstants.READY_TIMEOUT_MS, 'bare echo pty');
    return await timeEchoes(cmd, (k) => pty.write(k), echoes);
  } finally {
    await killPty(pty);
  }
}

// ---------------------------------------------------------------------------------------------
// /health prober and the bare memory baseline.

async function health(cmd: Extract<ClientCommand, { op: 'health' }>): Promise<HealthResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const end = performance.now() + cmd.durationMs;
  try {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const status = await getOnce(agent, cmd.socket, '/health');
        if (status < 200 || status >= 300) non2xx++;
        else samples.push(performance.now() - t0);
      } catch {
        errors++;
      }
      // One request every intervalMs; a slow answer delays the next one (one in flight).
      const wait = t0 + cmd.intervalMs - performance.now();
      if (wait > 0) await sleep(wait);
    }
  } finally {
    loop.disable();
    agent.destroy();
  }
  return { samples, non2xx, errors, clientLoopP99Ms: loop.percentile(99) / 1e6 };
}

function getOnce(agent: http.Agent, socketPath: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path, agent, timeout: ClientConstants.HEALTH_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

function ownRssKiB(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : Math.round(process.memoryUsage.rss() / 1024);
}

async function bareHold(cmd: Extract<ClientCommand, { op: 'bareHold' }>): Promise<BareHoldResult> {
  const spawnOne = (): IPty =>
    spawnPty(cmd.command, cmd.args, { name: 'xterm-256color', cols: 80, rows: 24, cwd: '/tmp', env: process.env as Record<string, string>, encoding: null });
  // One pty first, so node-pty's own start-up memory is not charged to the sessions.
  const warm = spawnOne();
  onPtyBuffers(warm, () => undefined);
  await sleep(300);
  await killPty(warm);
  await sleep(300);
  const rssBeforeKiB = ownRssKiB();
  const ptys: IPty[] = [];
  let bytes = 0;
  let counting = false;
  try {
    for (let i = 0; i < cmd.sessions; i++) {
      const pty = spawnOne();
      onPtyBuffers(pty, (c) => {
        if (counting) bytes += c.length;
      });
      ptys.push(pty);
    }
    await sleep(cmd.settleMs);
    counting = true;
    let rssMaxKiB = ownRssKiB();
    const t0 = performance.now();
    while (performance.now() - t0 < cmd.durationMs) {
      await sleep(cmd.sampleMs);
      rssMaxKiB = Math.max(rssMaxKiB, ownRssKiB());
    }
    return { rssBeforeKiB, rssMaxKiB, bytes, windowMs: performance.now() - t0 };
  } finally {
    await Promise.all(ptys.map(killPty));
  }
}

// ---------------------------------------------------------------------------------------------
// Viewers that outlive one command (the stalled-viewer test).

const held = new Map<number, { viewer: Viewer; reader: StreamReader }>();
let nextHandle = 1;

async function viewerOpen(cmd: Extract<ClientCommand, { op: 'viewerOpen' }>): Promise<ViewerOpenResult> {
  const reader = new StreamReader(Number.MAX_SAFE_INTEGER);
  const viewer = await Viewer.open(cmd.socket, cmd.sessionId, (c) => {
    if (!reader.markerSeen) reader.push(c);
  });
  await reader.marker(ClientConstants.READY_TIMEOUT_MS, 'viewer');
  const handle = nextHandle++;
  held.set(handle, { viewer, reader });
  return { handle };
}

function heldViewer(handle: number): Viewer {
  const h = held.get(handle);
  if (!h) throw new Error(`no viewer ${handle}`);
  return h.viewer;
}

function viewerGo(cmd: Extract<ClientCommand, { op: 'viewerGo' }>): Record<string, never> {
  const viewer = heldViewer(cmd.handle);
  // Stop reading the socket: the kernel buffers fill, then tuicd's send queue.
  if (cmd.pause) viewer.ws.pause();
  viewer.ws.send('\n');
  return {};
}

async function viewerClose(cmd: Extract<ClientCommand, { op: 'viewerClose' }>): Promise<ViewerCloseResult> {
  const viewer = heldViewer(cmd.handle);
  viewer.ws.resume();
  await viewer.closedOrAfter(cmd.waitMs);
  const ended = viewer.ended;
  viewer.close();
  held.delete(cmd.handle);
  return { bytes: viewer.bytes, frames: { ...viewer.frames }, ...(ended ? { ended } : {}) };
}

// ---------------------------------------------------------------------------------------------

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer));
}

async function handle(cmd: ClientCommand): Promise<unknown> {
  switch (cmd.op) {
    case 'stream':
      return stream(cmd);
    case 'bareStream':
      return bareStream(cmd);
    case 'echo':
      return echo(cmd);
    case 'bareEcho':
      return bareEcho(cmd);
    case 'health':
      return health(cmd);
    case 'bareHold':
      return bareHold(cmd);
    case 'viewerOpen':
      return viewerOpen(cmd);
    case 'viewerGo':
      return viewerGo(cmd);
    case 'viewerClose':
      return viewerClose(cmd);
  }
}

function main(): void {
  const quit = (): never => {
    for (const { viewer } of held.values()) viewer.close();
    process.exit(0);
  };
  setTimeout(quit, ClientConstants.MAX_LIFETIME_MS).unref();
  process.on('SIGTERM', quit);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const cmd = JSON.parse(line) as ClientCommand & { id: number };
    const answer = (a: ClientAnswer): void => void process.stdout.write(RESULT_PREFIX + JSON.stringify(a) + '\n');
    handle(cmd).then(
      (result) => answer({ id: cmd.id, ok: true, result }),
      (err: unknown) => answer({ id: cmd.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  lines.on('close', quit);
}

main();
