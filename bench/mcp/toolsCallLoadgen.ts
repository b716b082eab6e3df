/**
 * Raw-HTTP load generator for `POST /mcp` tools/call (child process, prints one JSON line): N
 * keep-alive TCP connections, one request in flight on each, every request pre-built as bytes
 * (its own JSON-RPC id per connection, so concurrent calls in one MCP session never share an id).
 * With one connection it measures sequential latency; with many, throughput.
 */
import net from 'node:net';
import { parseArgs } from 'node:util';

import { percentile, toolsCallBody } from './toolsCallShared.js';

/** Give up on a run that has not finished this long after its planned end. */
const OVERRUN_MS = 10_000;
const CRLFCRLF = Buffer.from('\r\n\r\n');
/** A tools/call answer that worked carries a JSON-RPC result; an error answer does not. */
const RESULT_MARK = Buffer.from('"result"');

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    path: { type: 'string', default: '/mcp' },
    header: { type: 'string', multiple: true, default: [] },
    connections: { type: 'string', default: '1' },
    'warmup-ms': { type: 'string', default: '500' },
    'duration-ms': { type: 'string', default: '2000' },
  },
});

/** What the parent reads: counts and latencies over the measured window. */
export interface ToolsCallLoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses since the first request, warm-up included (to pair with server CPU time). */
  totalRequests: number;
  /** Non-2xx answers, or 2xx answers without a JSON-RPC result (the figure would measure an error path). */
  bad: number;
  errors: number;
  /** This process's CPU time over the window / wall time: near 1 means the client was the limit. */
  clientCpu: number;
  firstProblem?: string;
}

function requestBytes(id: number): Buffer {
  const body = toolsCallBody(id);
  const head = [
    `POST ${values.path} HTTP/1.1`,
    `Host: ${values.host}:${values.port}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...values.header,
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/** Length of the complete response at the start of `buf`, or 0 while more bytes are needed (same framing rules as bench/http/loadgen.ts). */
function responseLength(buf: Buffer): number {
  const headerEnd = buf.indexOf(CRLFCRLF);
  if (headerEnd < 0) return 0;
  const bodyStart = headerEnd + 4;
  const head = buf.toString('latin1', 0, headerEnd).toLowerCase();
  const cl = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (cl) return buf.length >= bodyStart + Number(cl[1]) ? bodyStart + Number(cl[1]) : 0;
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) return chunkedLength(buf, bodyStart);
  return bodyStart;
}

function chunkedLength(buf: Buffer, start: number): number {
  let at = start;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return 0;
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size');
    at = lineEnd + 2 + size + 2;
    if (size === 0) return buf.length >= at ? at : 0;
    if (buf.length < at) return 0;
  }
}

let responses = 0;
let bad = 0;
let errors = 0;
let firstProblem: string | undefined;
let stopping = false;
let recording = false;
const latenciesMs: number[] = [];

function problem(text: string): void {
  firstProblem ??= text;
}

function connect(id: number): void {
  const request = requestBytes(id);
  const sock = net.connect(Number(values.port), values.host);
  let pending: Buffer | undefined;
  let sentAt = 0n;
  const send = (): void => {
    sentAt = process.hrtime.bigint();
    sock.write(request);
  };
  sock.setNoDelay(true);
  sock.on('connect', send);
  sock.on('data', (chunk: Buffer) => {
    const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
    let len: number;
    try {
      len = responseLength(buf);
    } catch (err) {
      errors++;
      problem(String(err));
      sock.destroy();
      return;
    }
    if (len === 0) {
      pending = buf;
      return;
    }
    pending = undefined;
    const elapsedMs = Number(process.hrtime.bigint() - sentAt) / 1e6;
    responses++;
    if (recording) latenciesMs.push(elapsedMs);
    const ok = buf[9] === 0x32 && buf.subarray(0, len).includes(RESULT_MARK);
    if (!ok) {
      bad++;
      problem(`bad answer: ${buf.toString('utf8', 0, Math.min(len, 300)).replace(/\r\n/g, ' | ')}`);
    }
    if (len !== buf.length) {
      errors++;
      problem('bytes after a response with no request in flight');
    }
    if (!stopping) send();
  });
  sock.on('error', (err) => {
    errors++;
    problem(err.message);
  });
  sock.on('close', () => {
    // A closed keep-alive connection is replaced; the request in flight is lost (counted as an error).
    if (!stopping) setTimeout(() => connect(id), 50);
  });
}

function main(): void {
  if (!values.port) throw new Error('usage: toolsCallLoadgen --port N [--header "Name: value"]... [--connections N] [--warmup-ms N] [--duration-ms N]');
  const warmupMs = Number(values['warmup-ms']);
  const durationMs = Number(values['duration-ms']);
  for (let i = 0; i < Number(values.connections); i++) connect(i + 1);
  setTimeout(() => process.exit(2), warmupMs + durationMs + OVERRUN_MS).unref();
  setTimeout(() => {
    const start = { responses, bad, errors };
    const t0 = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    recording = true;
    setTimeout(() => {
      recording = false;
      stopping = true;
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      const requests = responses - start.responses;
      const sorted = latenciesMs.sort((a, b) => a - b);
      const result: ToolsCallLoadResult = {
        requests,
        seconds,
        rps: requests / seconds,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        totalRequests: responses,
        bad: bad - start.bad,
        errors: errors - start.errors,
        clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
        ...(firstProblem ? { firstProblem } : {}),
      };
      process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
    }, durationMs);
  }, warmupMs);
}

main();
