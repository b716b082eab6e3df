/**
 * The hub-primitives bench's check before timing: each measured request is asked once through
 * tuicd (an SDK Client over Streamable HTTP, declaring sampling) and once straight to the upstream
 * (an SDK Client over stdio), and both must answer the same text. The raw generator and the light
 * stdio driver only see that an answer carries a result; this is where its content is checked.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { errorText } from '../harness.js';
import type { McpTarget } from './toolsCallTargets.js';

/** One request of the bench, asked through an SDK Client; answers the text a client would use. */
export type Ask = (client: Client) => Promise<string>;

/** A checked request: how to ask it through the hub and directly, and which upstream answers it directly. */
export interface CheckedRequest {
  name: string;
  viaHub: Ask;
  direct: Ask;
  /** The stdio server the direct client starts: `node <args>`. */
  directServer: string[];
}

/** Every request's outcome through the hub: undefined when it answered as the upstream does directly. */
export type HubProblems = Map<string, string | undefined>;

const REQUEST_TIMEOUT_MS = 15_000;
export const REQUEST_OPTIONS = { timeout: REQUEST_TIMEOUT_MS };

/** Answers every sampling request at once, as the drivers' clients do. */
function samplingClient(): Client {
  const client = new Client({ name: 'tuicd-bench-check', version: '0.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'bench-check', role: 'assistant', content: { type: 'text', text: 'checked' } }));
  return client;
}

async function withClient<T>(client: Client, connect: () => Promise<void>, work: () => Promise<T>): Promise<T> {
  try {
    await connect();
    return await work();
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The text each request answers directly (one client per server); throws when one fails (the direct rows would measure nothing useful). */
async function directAnswers(requests: CheckedRequest[]): Promise<Map<string, string>> {
  const byServer = new Map<string, CheckedRequest[]>();
  for (const r of requests) byServer.set(JSON.stringify(r.directServer), [...(byServer.get(JSON.stringify(r.directServer)) ?? []), r]);
  const out = new Map<string, string>();
  for (const group of byServer.values()) {
    const client = samplingClient();
    const transport = new StdioClientTransport({ command: process.execPath, args: group[0]!.directServer, stderr: 'ignore' });
    await withClient(
      client,
      () => client.connect(transport),
      async () => {
        for (const r of group) {
          const text = await r.direct(client).catch((err: unknown) => {
            throw new Error(`${r.name} directly: ${errorText(err)}`);
          });
          out.set(r.name, text);
        }
      },
    );
  }
  return out;
}

/**
 * Asks every request directly (must work) and through `hub` (a problem per request, so that one
 * method the hub does not serve yet leaves the others measured).
 */
export async function checkRequests(hub: McpTarget | undefined, requests: CheckedRequest[]): Promise<HubProblems> {
  const expected = await directAnswers(requests);
  const problems: HubProblems = new Map();
  if (!hub) return problems;
  const headers = Object.fromEntries(
    hub.authHeaders.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    }),
  );
  const client = samplingClient();
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${hub.port}/mcp`), { requestInit: { headers } });
  const connect = async (): Promise<void> => {
    try {
      await client.connect(transport);
    } catch (err) {
      for (const r of requests) problems.set(r.name, `an SDK Client could not connect: ${errorText(err)}`);
      throw err;
    }
  };
  await withClient(client, connect, async () => {
    for (const r of requests) {
      try {
        const text = await r.viaHub(client);
        const want = expected.get(r.name);
        problems.set(r.name, text === want ? undefined : `answers ${JSON.stringify(text.slice(0, 120))}, directly ${JSON.stringify(want?.slice(0, 120))}`);
      } catch (err) {
        problems.set(r.name, errorText(err));
      }
    }
  }).catch(() => undefined);
  return problems;
}

/** The first text content of a tools/call result. */
export function toolText(result: unknown): string {
  const content = (result as { content?: Array<{ text?: string }> }).content;
  return content?.[0]?.text ?? JSON.stringify(result).slice(0, 200);
}
