/**
 * Load generator for the bridge bench, in its own process: `tools/call session list` from N callers
 * (each waits for its answer before the next call), for a fixed time after a warm-up, either straight
 * to tuicd's unix socket (one keep-alive connection per caller, as an MCP HTTP client holds, with
 * the bridge's own framing) or
 * through a tuic-bridge child over stdio. Prints one JSON line: calls/s and latency p50/p99.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

import { HttpConnection } from '../../bridge/httpConnection.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string' },
    socket: { type: 'string' },
    bridge: { type: 'string' },
    callers: { type: 'string', default: '1' },
    'warmup-ms': { type: 'string', default: '500' },
    'duration-ms': { type: 'string', default: '3000' },
  },
});
const socketPath = values.socket!;
const callers = Number(values.callers);
const warmupMs = Number(values['warmup-ms']);
const durationMs = Number(values['duration-ms']);

const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
};
const callBody = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'session', arguments: { action: 'list' } } });

type Call = (id: number) => Promise<string>;

/**
 * The direct path uses the bridge's own HTTP framing (bridge/httpConnection.ts) on one kept-alive
 * connection per caller, so the comparison measures the bridge's hop, not two HTTP clients' costs.
 */
async function directCaller(sessionId: string): Promise<Call> {
  const conn = await HttpConnection.open(socketPath, 3000);
  const headers = `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\nMCP-Protocol-Version: 2025-11-25\r\n`;
  return async (id) => {
    const body = callBody(id);
    const answer = await conn.request(`POST /mcp HTTP/1.1\r\nHost: localhost\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`, body);
    return answer.body;
  };
}

async function openDirect(): Promise<Call[]> {
  const conn = await HttpConnection.open(socketPath, 3000);
  const body = JSON.stringify(INIT);
  const answer = await conn.request(
    `POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    body,
  );
  conn.destroy(new Error('done'));
  const sessionId = answer.headers['mcp-session-id'];
  if (sessionId === undefined) throw new Error(`initialize gave no session id: ${answer.body.slice(0, 200)}`);
  return Promise.all(Array.from({ length: callers }, () => directCaller(sessionId)));
}

async function openBridge(): Promise<{ calls: Call[]; stop(): void }> {
  const child = spawn(process.execPath, [values.bridge!], { env: { ...process.env, TUIC_SOCKET: socketPath }, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map<number, (line: string) => void>();
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const id = (JSON.parse(line) as { id?: number }).id;
      if (typeof id === 'number') waiting.get(id)?.(line);
      if (typeof id === 'number') waiting.delete(id);
    }
  });
  const send = (id: number, line: string) =>
    new Promise<string>((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(`${line}\n`);
    });
  await send(0, JSON.stringify(INIT));
  const call: Call = (id) => send(id, callBody(id));
  return { calls: Array.from({ length: callers }, () => call), stop: () => child.kill() };
}

async function main(): Promise<void> {
  let stop = () => {};
  let calls: Call[];
  if (values.mode === 'bridge') {
    const b = await openBridge();
    calls = b.calls;
    stop = b.stop;
  } else calls = await openDirect();
  let nextId = 1;
  const latencies: number[] = [];
  let counted = 0;
  const start = performance.now();
  const measureFrom = start + warmupMs;
  const end = measureFrom + durationMs;
  let problem: string | undefined;
  await Promise.all(
    calls.map(async (call) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const answer = await call(nextId++);
        const t1 = performance.now();
        if (!answer.includes('"result"')) problem ??= answer.slice(0, 200);
        if (t0 >= measureFrom && t1 <= end) {
          latencies.push(t1 - t0);
          counted++;
        }
      }
    }),
  );
  stop();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  process.stdout.write(`${JSON.stringify({ callsPerS: counted / (durationMs / 1000), p50Ms: at(0.5), p99Ms: at(0.99), calls: counted, problem })}\n`);
  process.exit(0);
}

void main();
