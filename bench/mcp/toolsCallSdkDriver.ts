/**
 * The SDK 1.x `Client` as the load driver (child process, prints one JSON line in the shape of
 * toolsCallLoadgen's): one session over `StreamableHTTPClientTransport`, N concurrent callers each
 * awaiting `callTool(session list)` in a loop. What an agent's MCP client costs and sees, as
 * opposed to the raw generator, which keeps the client out of the figure.
 */
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { summarize } from './toolsCallShared.js';

const OVERRUN_MS = 10_000;

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    header: { type: 'string', multiple: true, default: [] },
    callers: { type: 'string', default: '1' },
    'warmup-ms': { type: 'string', default: '500' },
    'duration-ms': { type: 'string', default: '2000' },
  },
});

async function main(): Promise<void> {
  if (!values.url) throw new Error('usage: toolsCallSdkDriver --url http://host:port/mcp [--header "Name: value"]... [--callers N]');
  const headers: Record<string, string> = {};
  for (const h of values.header) {
    const colon = h.indexOf(':');
    headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
  }
  const warmupMs = Number(values['warmup-ms']);
  const durationMs = Number(values['duration-ms']);
  setTimeout(() => process.exit(2), warmupMs + durationMs + OVERRUN_MS).unref();

  const client = new Client({ name: 'tuicd-bench', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(values.url), { requestInit: { headers } }));

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
        const r = await client.callTool({ name: 'session', arguments: { action: 'list' } });
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
  recording = true;
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  recording = false;
  stopping = true;
  const result = summarize({ responses, bad, errors, latenciesMs, firstProblem }, start, t0, cpu0);
  await Promise.all(callers);
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exit(1);
});
