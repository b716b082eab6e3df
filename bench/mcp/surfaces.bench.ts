/**
 * The MCP surfaces (issue #4 item 7): the bytes of every surface a
 * client receives — instructions, each tool's definition, tools/list classic and collapsed — and
 * how long tools/list takes over POST /mcp in each mode, against GET /health on the same connection.
 * Bytes are exact and do not depend on the regime, so they are reported in the idle regime only.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { type BenchContext, type BenchModule, type BenchRow, errorText, failedRow, median, row, withNote } from '../harness.js';
import { spawnTracked } from '../http/children.js';
import { parseReadyLine, READY_LINE_RE } from '../http/readyLine.js';
import { tuicdMainPath } from '../http/targets.js';
import { surfaceTexts } from '../../test/supervisor/mcp/surfaceFixtures.js';
import { PROTOCOL_VERSION } from './toolsCallShared.js';

/** Sequential requests per repetition and variant (one in flight: latency, not throughput). */
const REQUESTS = { full: 2_000, quick: 200 } as const;
const WARMUP_REQUESTS = 50;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One keep-alive connection to the unix socket, so the figures are per request, not per connect. */
class Connection {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  constructor(private readonly socketPath: string) {}

  send(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(body);
      const req = http.request(
        {
          socketPath: this.socketPath,
          agent: this.agent,
          method,
          path,
          headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The JSON-RPC message of a response body, whether it came as JSON or as one SSE event. */
function rpcBody(answer: Answer): { result?: unknown; error?: unknown } {
  const text = answer.body.trim();
  if (text.startsWith('{')) return JSON.parse(text) as { result?: unknown };
  const data = text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim());
  return JSON.parse(data.at(-1) ?? 'null') as { result?: unknown };
}

/** initialize + notifications/initialized; resolves with the headers every later request carries. */
async function openMcpSession(conn: Connection): Promise<Record<string, string>> {
  const accept = { accept: 'application/json, text/event-stream' };
  const init = await conn.send(
    'POST',
    '/mcp',
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'surfaces-bench', version: '0' } },
    }),
    accept,
  );
  if (init.status === 404) throw new Error('POST /mcp answered 404: the /mcp route is not registered yet');
  if (init.status !== 200) throw new Error(`initialize answered ${init.status}: ${init.body.slice(0, 200)}`);
  const sessionId = init.headers['mcp-session-id'];
  const headers: Record<string, string> = {
    ...accept,
    'mcp-protocol-version': PROTOCOL_VERSION,
    ...(typeof sessionId === 'string' ? { 'mcp-session-id': sessionId } : {}),
  };
  const initialized = await conn.send('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  if (initialized.status >= 300) throw new Error(`notifications/initialized answered ${initialized.status}`);
  return headers;
}

/** Per-request latencies (µs) of `count` sequential calls. */
async function latencies(count: number, call: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await call();
    out.push((performance.now() - t0) * 1000);
  }
  return out.sort((a, b) => a - b);
}

const percentile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** tuicd's start-up contract: the ready line within 10 s (bench/README.md). */
const READY_TIMEOUT_MS = 10_000;

interface Tuicd {
  socketPath: string;
  stop(): Promise<void>;
}

/** `node dist/supervisor/main.js` on a unix socket only, with `collapse_tools` set from the start. */
async function startTuicd(collapseTools: boolean): Promise<Tuicd> {
  const main = tuicdMainPath();
  if (!existsSync(main)) throw new Error(`${main} not found: tuicd is not built yet (npm run build)`);
  const dir = await mkdtemp(join(tmpdir(), 'tuicd-bench-surfaces-'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ services: { server: { enabled: false } }, collapse_tools: collapseTools }));
  const proc = spawnTracked(process.execPath, [main, '--config-dir', dir]);
  const stop = async (): Promise<void> => {
    await proc.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    return { socketPath: parseReadyLine(await proc.waitForLine(READY_LINE_RE, READY_TIMEOUT_MS)).socketPath, stop };
  } catch (err) {
    await stop();
    throw new Error(`tuicd did not start: ${errorText(err)}; ${proc.tail().slice(-300)}`);
  }
}

type Variant = 'health' | 'classic' | 'collapsed';

/** tools/list on two tuicds, one per mode, and GET /health as the floor; variants rotate per repetition. */
async function latencyRows(ctx: BenchContext): Promise<BenchRow[]> {
  const group = 'tools/list over POST /mcp (unix, 1 in flight)';
  const count = ctx.quick ? REQUESTS.quick : REQUESTS.full;
  const servers: Tuicd[] = [];
  const conns: Connection[] = [];
  try {
    const calls = new Map<Variant, () => Promise<Answer>>();
    const bodyBytes: Partial<Record<Variant, number>> = {};
    let id = 10;
    for (const mode of ['classic', 'collapsed'] as const) {
      const server = await startTuicd(mode === 'collapsed');
      servers.push(server);
      const conn = new Connection(server.socketPath);
      conns.push(conn);
      const headers = await openMcpSession(conn);
      const list = async (): Promise<Answer> => {
        const answer = await conn.send('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/list' }), headers);
        if (answer.status !== 200) throw new Error(`tools/list (${mode}) answered ${answer.status}: ${answer.body.slice(0, 200)}`);
        return answer;
      };
      // Check once, untimed, that each server shows its mode's surface.
      const first = await list();
      const names = ((rpcBody(first).result as { tools?: Array<{ name: string }> } | undefined)?.tools ?? []).map((t) => t.name);
      if ((mode === 'collapsed') !== names.includes('search_tools')) throw new Error(`${mode} tools/list lists ${names.join(', ') || 'nothing'}`);
      bodyBytes[mode] = Buffer.byteLength(first.body);
      calls.set(mode, list);
      if (mode === 'classic') calls.set('health', () => conn.send('GET', '/health'));
    }

    const values: Record<Variant, number[]> = { health: [], classic: [], collapsed: [] };
    const p99: Record<Variant, number[]> = { health: [], classic: [], collapsed: [] };
    const order: Variant[] = ['health', 'classic', 'collapsed'];
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      for (let k = 0; k < order.length; k++) {
        const name = order[(rep + k) % order.length]!;
        const call = calls.get(name)!;
        await latencies(WARMUP_REQUESTS, call);
        const sorted = await latencies(count, call);
        values[name].push(1e6 / median(sorted));
        p99[name].push(percentile(sorted, 0.99));
      }
    }
    const note = (name: Variant): string =>
      `p50 ${(1e6 / median(values[name])).toFixed(0)} µs, p99 ${median(p99[name]).toFixed(0)} µs${bodyBytes[name] === undefined ? '' : `, ${bodyBytes[name]} B body`}`;
    const floor = { name: 'GET /health', median: median(values.health) };
    return [
      withNote(row(group, 'GET /health', ctx, 'req/s', values.health), note('health')),
      withNote(row(group, 'classic', ctx, 'req/s', values.classic, floor), note('classic')),
      withNote(row(group, 'collapsed', ctx, 'req/s', values.collapsed, floor), note('collapsed')),
    ];
  } catch (err) {
    return [failedRow(group, 'classic and collapsed', ctx, 'req/s', errorText(err))];
  } finally {
    for (const c of conns) c.close();
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** Every surface's exact size; one "repetition" because bytes do not vary. */
function byteRows(ctx: BenchContext): BenchRow[] {
  const surfaces = surfaceTexts();
  const rows: BenchRow[] = [];
  for (const [key, text] of Object.entries(surfaces)) {
    const dot = key.indexOf('.');
    rows.push(row(`MCP surface bytes: ${key.slice(0, dot)}`, key.slice(dot + 1), ctx, 'B', [Buffer.byteLength(text, 'utf8')]));
  }
  for (const mode of ['classic', 'collapsed'] as const) {
    const total = Buffer.byteLength(surfaces[`instructions.${mode}.loaded`]!) + Buffer.byteLength(surfaces[`tools/list.${mode}`]!);
    rows.push(withNote(row('MCP surface bytes: one connection', mode, ctx, 'B', [total]), 'instructions (loaded) + tools/list; lower is better'));
  }
  return rows;
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  return [...(ctx.regime === 'idle' ? byteRows(ctx) : []), ...(await latencyRows(ctx))];
};
