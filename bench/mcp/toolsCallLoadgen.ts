/**
 * Raw-HTTP load generator for `POST /mcp` tools/call, tools/list or another request (child process, prints one JSON
 * line): N keep-alive connections (TCP, or a unix socket with `--socket`), one request in flight on each, every request pre-built as bytes
 * (its own JSON-RPC id per connection, so concurrent calls in one MCP session never share an id).
 * With one connection it measures sequential latency; with many, throughput.
 */
import net from 'node:net';
import { parseArgs } from 'node:util';

import { responseLength } from '../http/responseFraming.js';
import { IS_ERROR_MARK, REQUEST_OPTIONS, requestBody, summarize } from './toolsCallShared.js';

/** Give up on a run that has not finished this long after its planned end. */
const OVERRUN_MS = 10_000;
/** An answer that worked carries a JSON-RPC result; an error answer does not, a tool error says so. */
const RESULT_MARK = Buffer.from('"result"');
const TOOL_ERROR_MARK = Buffer.from(IS_ERROR_MARK);

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    socket: { type: 'string' },
    path: { type: 'string', default: '/mcp' },
    header: { type: 'string', multiple: true, default: [] },
    connections: { type: 'string', default: '1' },
    'warmup-ms': { type: 'string', default: '500' },
    'duration-ms': { type: 'string', default: '2000' },
    ...REQUEST_OPTIONS,
  },
});

function requestBytes(id: number): Buffer {
  const body = requestBody(id, values);
  const head = [
    `POST ${values.path} HTTP/1.1`,
    values.socket ? 'Host: localhost' : `Host: ${values.host}:${values.port}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...values.header,
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);
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
  const sock = values.socket ? net.connect(values.socket) : net.connect(Number(values.port), values.host);
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
    const answer = buf.subarray(0, len);
    const ok = buf[9] === 0x32 && answer.includes(RESULT_MARK) && !answer.includes(TOOL_ERROR_MARK);
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
  if (!values.port && !values.socket) {
    throw new Error(
      'usage: toolsCallLoadgen --port N | --socket PATH [--header "Name: value"]... [--connections N] [--warmup-ms N] [--duration-ms N] [--method tools/list | --tool NAME --arguments JSON | --method M --params JSON]',
    );
  }
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
      const result = summarize({ responses, bad, errors, latenciesMs, firstProblem }, start, t0, cpu0);
      process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
    }, durationMs);
  }, warmupMs);
}

main();
