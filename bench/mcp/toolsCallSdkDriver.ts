/**
 * The SDK 1.x `Client` as the load driver (child process, prints one JSON line in the shape of
 * toolsCallLoadgen's): one session over `StreamableHTTPClientTransport` (`--url`), or over
 * `StdioClientTransport` to a server it spawns (`--command`, `--arg`...; the server's CPU over the
 * window is then in the line), N concurrent callers each awaiting `callTool` (default `session
 * list`; `--tool`, `--arguments`) in a loop. What an agent's MCP client costs and sees, as opposed
 * to the raw generator, which keeps the client out of the figure. With `--sampling` the client
 * declares sampling and answers every sampling/createMessage at once (a tool that asks the client).
 */
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, type CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';

import { treeCpuDelta, treeCpuSeconds } from './proxyProcessTree.js';
import { REQUEST_OPTIONS, summarize } from './toolsCallShared.js';

const OVERRUN_MS = 10_000;
/** The model's reply with --sampling: no model runs, so the round trip is all that is timed. */
const SAMPLED: CreateMessageResult = { model: 'bench-model', role: 'assistant', content: { type: 'text', text: 'sampled' } };

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    command: { type: 'string' },
    arg: { type: 'string', multiple: true, default: [] },
    header: { type: 'string', multiple: true, default: [] },
    callers: { type: 'string', default: '1' },
    sampling: { type: 'boolean', default: false },
    'warmup-ms': { type: 'string', default: '500' },
    'duration-ms': { type: 'string', default: '2000' },
    ...REQUEST_OPTIONS,
  },
});

async function main(): Promise<void> {
  if (!values.url === !values.command) {
    throw new Error(
      'usage: toolsCallSdkDriver --url http://host:port/mcp [--header "Name: value"]... | --command CMD [--arg A]... ; [--callers N] [--tool NAME --arguments JSON] [--sampling]',
    );
  }
  if (values.method !== 'tools/call') throw new Error(`the SDK driver only calls tools (--method tools/call), got ${values.method}`);
  const call = { name: values.tool, arguments: JSON.parse(values.arguments) as Record<string, unknown> };
  const headers: Record<string, string> = {};
  for (const h of values.header) {
    const colon = h.indexOf(':');
    headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
  }
  const warmupMs = Number(values['warmup-ms']);
  const durationMs = Number(values['duration-ms']);
  setTimeout(() => process.exit(2), warmupMs + durationMs + OVERRUN_MS).unref();

  const client = new Client({ name: 'tuicd-bench', version: '0.0.0' }, values.sampling ? { capabilities: { sampling: {} } } : undefined);
  if (values.sampling) client.setRequestHandler(CreateMessageRequestSchema, async () => SAMPLED);
  const stdio = values.command ? new StdioClientTransport({ command: values.command, args: values.arg, stderr: 'ignore' }) : undefined;
  await client.connect(stdio ?? new StreamableHTTPClientTransport(new URL(values.url!), { requestInit: { headers } }));
  const serverCpu = (): ReturnType<typeof treeCpuSeconds> => (stdio?.pid ? treeCpuSeconds(stdio.pid) : undefined);

  let responses = 0;
  let bad = 0;
  let errors = 0;
  let firstProblem: string | undefined;
  let recording = false;
  let stopping = false;
  const latenciesMs: number[] = [];
  const caller = async (): Promise<void> => {
    while (!stopping) {
      const t0 = performance.now();
      try {
        const r = await client.callTool(call);
        responses++;
        if (recording) latenciesMs.push(performance.now() - t0);
        if (r.isError) {
          bad++;
          firstProblem ??= `isError: ${JSON.stringify(r.content).slice(0, 200)}`;
        }
      } catch (err) {
        errors++;
        firstProblem ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  const callers = Array.from({ length: Number(values.callers) }, () => caller());

  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  const start = { responses, bad, errors };
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const server0 = serverCpu();
  recording = true;
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  recording = false;
  stopping = true;
  const result = summarize({ responses, bad, errors, latenciesMs, firstProblem }, start, t0, cpu0);
  const server = treeCpuDelta(server0, serverCpu());
  if (server) result.serverCpu = server;
  await Promise.all(callers);
  if (stdio) await client.close();
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exit(1);
});
