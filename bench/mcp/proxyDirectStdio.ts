/**
 * The direct peer of the proxy benches (child process, prints one JSON line in the shape of
 * toolsCallLoadgen's): spawns a stdio MCP server (`--command`, `--arg`...), runs the handshake, then
 * keeps N requests in flight as newline JSON-RPC, each caller's bytes pre-built with its own id and
 * answers matched by id (notifications and other lines are skipped). Reports the server's CPU over
 * the measured window from /proc. No SDK: the client must not be what limits the figure.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

import { treeCpuDelta, treeCpuSeconds } from './proxyProcessTree.js';
import { IS_ERROR_MARK, PROTOCOL_VERSION, REQUEST_OPTIONS, requestBody, summarize } from './toolsCallShared.js';

const OVERRUN_MS = 10_000;
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** initialize's id; callers use 1..N. */
const INITIALIZE_ID = 0;

const { values } = parseArgs({
  options: {
    command: { type: 'string', default: process.execPath },
    arg: { type: 'string', multiple: true, default: [] },
    callers: { type: 'string', default: '1' },
    'warmup-ms': { type: 'string', default: '500' },
    'duration-ms': { type: 'string', default: '2000' },
    ...REQUEST_OPTIONS,
  },
});

interface RpcAnswer {
  id: number;
  ok: boolean;
  line: string;
}

/** Past this length a line is an answer to us (tools/list): read its id and marks without parsing, as the raw HTTP generator does. */
const PARSE_BELOW_BYTES = 1024;
const LONG_LINE_ID = /"id":(\d+)[,}]/;

/** Our answer on this line, or undefined for notifications, server requests and blank lines. */
function answerOf(line: string): RpcAnswer | undefined {
  if (line.length >= PARSE_BELOW_BYTES) {
    const id = LONG_LINE_ID.exec(line)?.[1];
    return id === undefined ? undefined : { id: Number(id), ok: line.includes('"result"') && !line.includes(IS_ERROR_MARK), line };
  }
  if (!line.trim()) return undefined;
  const m = JSON.parse(line) as { id?: unknown; method?: unknown; result?: { isError?: unknown } };
  if (typeof m.id !== 'number' || m.method !== undefined) return undefined;
  return { id: m.id, ok: m.result !== undefined && m.result.isError !== true, line };
}

async function main(): Promise<void> {
  if (values.arg.length === 0)
    throw new Error(
      'usage: proxyDirectStdio [--command CMD] --arg A... [--callers N] [--method tools/list | --tool NAME --arguments JSON | --method M --params JSON]',
    );
  const warmupMs = Number(values['warmup-ms']);
  const durationMs = Number(values['duration-ms']);
  setTimeout(() => process.exit(2), HANDSHAKE_TIMEOUT_MS + warmupMs + durationMs + OVERRUN_MS).unref();

  let responses = 0;
  let bad = 0;
  let recording = false;
  let stopping = false;
  let firstProblem: string | undefined;
  const latenciesMs: number[] = [];
  const fail = (text: string): never => {
    console.error(text);
    process.exit(1);
  };

  const server = spawn(values.command, values.arg, { stdio: ['pipe', 'pipe', 'ignore'] });
  process.on('exit', () => server.kill('SIGKILL'));
  server.on('exit', (code, signal) => {
    if (!stopping) fail(`the server exited (${signal ?? `code ${code}`})`);
  });

  const waiting = new Map<number, (answer: RpcAnswer) => void>();
  let partial = '';
  server.stdout.setEncoding('utf8').on('data', (text: string) => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const answer = answerOf(line);
      if (answer) waiting.get(answer.id)?.(answer);
    }
  });
  const send = (line: Buffer | string): boolean => server.stdin.write(line);

  const initialized = new Promise<RpcAnswer>((resolve) => waiting.set(INITIALIZE_ID, resolve));
  send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: INITIALIZE_ID,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'tuicd-bench-direct', version: '0.0.0' } },
    }) + '\n',
  );
  const init = await initialized;
  if (!init.ok) fail(`initialize failed: ${init.line.slice(0, 300)}`);
  send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');

  for (let id = 1; id <= Number(values.callers); id++) {
    const request = Buffer.from(requestBody(id, values) + '\n');
    let sentAt = 0;
    const next = (): void => {
      sentAt = performance.now();
      send(request);
    };
    waiting.set(id, (answer) => {
      responses++;
      if (recording) latenciesMs.push(performance.now() - sentAt);
      if (!answer.ok) {
        bad++;
        firstProblem ??= `bad answer: ${answer.line.slice(0, 300)}`;
      }
      if (!stopping) next();
    });
    next();
  }

  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  const start = { responses, bad, errors: 0 };
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const server0 = treeCpuSeconds(server.pid!);
  recording = true;
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  recording = false;
  stopping = true;
  const result = summarize({ responses, bad, errors: 0, latenciesMs, firstProblem }, start, t0, cpu0);
  const serverCpu = treeCpuDelta(server0, treeCpuSeconds(server.pid!));
  if (serverCpu) result.serverCpu = serverCpu;
  server.stdin.end();
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exit(1);
});
