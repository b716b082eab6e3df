/**
 * A small HTTP/1.1 load generator (child process) for where wrk cannot go: unix sockets.
 * N keep-alive connections, one request in flight on each (no pipelining); prints one JSON line.
 */
import net from 'node:net';
import { parseArgs } from 'node:util';

import { responseLength } from './responseFraming.js';

/** Give up on a run that has not finished this long after its planned end. */
const OVERRUN_MS = 10_000;
/** Pause before reconnecting a connection that never got a response (server down or refusing). */
const RETRY_MS = 100;

const { values } = parseArgs({
  options: {
    socket: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    path: { type: 'string', default: '/health' },
    method: { type: 'string', default: 'GET' },
    /** A JSON body sent with every request (POST routes). */
    body: { type: 'string' },
    connections: { type: 'string', default: '64' },
    'warmup-ms': { type: 'string', default: '500' },
    'duration-ms': { type: 'string', default: '2000' },
  },
});

/** What the parent reads: counts over the measured window, plus totals since the first request. */
export interface LoadgenResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Responses since the first connection, warm-up included (to pair with server CPU time). */
  totalRequests: number;
  non2xx: number;
  errors: number;
  /** This process's CPU time over the window / wall time: near 1 means the client was the limit. */
  clientCpu: number;
  firstError?: string;
}

const request =
  values.body === undefined
    ? Buffer.from(`${values.method} ${values.path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
    : Buffer.from(
        `${values.method} ${values.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(values.body)}\r\n\r\n${values.body}`,
      );
let responses = 0;
let non2xx = 0;
let errors = 0;
let firstError: string | undefined;
let stopping = false;

function fail(err: unknown): void {
  errors++;
  firstError ??= err instanceof Error ? err.message : String(err);
}

function connect(): void {
  const sock = values.socket ? net.connect(values.socket) : net.connect(Number(values.port), values.host);
  let pending: Buffer | undefined;
  let answered = false;
  sock.setNoDelay(true);
  sock.on('connect', () => sock.write(request));
  sock.on('data', (chunk: Buffer) => {
    const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
    let len: number;
    try {
      len = responseLength(buf);
    } catch (err) {
      fail(err);
      sock.destroy();
      return;
    }
    if (len === 0) {
      pending = buf;
      return;
    }
    pending = undefined;
    responses++;
    answered = true;
    const status = buf[9]! - 48;
    if (status !== 2) non2xx++;
    if (len !== buf.length) fail(new Error('bytes after a response with no request in flight'));
    if (!stopping) sock.write(request);
  });
  sock.on('error', fail);
  sock.on('close', () => {
    // The server closed a keep-alive connection: replace it; back off if it never answered.
    if (!stopping) setTimeout(connect, answered ? 0 : RETRY_MS);
  });
}

function main(): void {
  if (!values.socket && !values.port) throw new Error('usage: loadgen (--socket <path> | --port N) [--connections N] [--warmup-ms N] [--duration-ms N]');
  const warmupMs = Number(values['warmup-ms']);
  const durationMs = Number(values['duration-ms']);
  for (let i = 0; i < Number(values.connections); i++) connect();
  setTimeout(() => process.exit(2), warmupMs + durationMs + OVERRUN_MS).unref();
  setTimeout(() => {
    const startCount = responses;
    const startErrors = errors;
    const startNon2xx = non2xx;
    const t0 = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    setTimeout(() => {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      stopping = true;
      const requests = responses - startCount;
      const result: LoadgenResult = {
        requests,
        seconds,
        rps: requests / seconds,
        totalRequests: responses,
        non2xx: non2xx - startNon2xx,
        errors: errors - startErrors,
        clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
        ...(firstError ? { firstError } : {}),
      };
      process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
    }, durationMs);
  }, warmupMs);
}

main();
