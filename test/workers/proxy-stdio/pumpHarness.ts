/**
 * A thread hosting real proxy-stdio pumps (pumpThreadEntry.ts), and pumps attached to it, a
 * MessageChannel port each, with a channel client whose events are recorded, for the pump tests.
 * A thread of its own so a test can give the pumps their own environment, and crash it.
 */

import { existsSync, readFileSync } from 'node:fs';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { TestContext } from 'node:test';

import { type Client, connect } from '../../../shared/channel.js';
import type { EventOf, ParamsOf } from '../../../shared/protocol/defineProtocol.js';
import { ProxyStdioProtocol, type ProxyStdioProtocolT } from '../../../shared/protocol/proxyStdio.js';
import { messagePortTransport } from '../../../shared/transports/messagePort.js';

type P = ProxyStdioProtocolT;
export type StartParams = ParamsOf<P, 'start'>;

export const PUMP_ENTRY = new URL('./pumpThreadEntry.js', import.meta.url);
export const MOCK_UPSTREAM = new URL('../../fixtures/upstreams/mockUpstream.js', import.meta.url).pathname;
const NODE_MODULES = new URL('../../../../node_modules/', import.meta.url).pathname;
export const EVERYTHING_SERVER = `${NODE_MODULES}@modelcontextprotocol/server-everything/dist/index.js`;
export const FILESYSTEM_SERVER = `${NODE_MODULES}@modelcontextprotocol/server-filesystem/dist/index.js`;

export interface PumpHarness {
  client: Client<P>;
  exited: Array<EventOf<P, 'exited'>>;
  stderr: string[];
  logs: Array<EventOf<P, 'log'>>;
  /** `message` events, with their payload parsed as `params`. */
  messages: Array<EventOf<P, 'message'> & { params?: unknown }>;
  /** start → the result and the tools array parsed from the payload. */
  start(params: StartParams): Promise<{ pid: number; server_name: string | null; capabilities: Record<string, unknown>; tools: Array<{ name: string }> }>;
  /** rpc → parsed result, or `{rpcError}` for a JSON-RPC error answer. */
  rpc(method: string, params?: unknown, options?: { timeout_ms?: number; signal?: AbortSignal }): Promise<unknown>;
  /** tools/call's structuredContent (or the whole result when it has none). */
  callTool(name: string, args?: Record<string, unknown>): Promise<any>;
  /** Resolves once `predicate` holds (checked every 20 ms); rejects after `ms`. */
  until(predicate: () => boolean, ms?: number, what?: string): Promise<void>;
  /** Asks the pump to shut its child down, then closes the channel. */
  stop(): Promise<void>;
}

export interface PumpThreadHarness {
  worker: Worker;
  /** A new pump in this thread, on its own channel. */
  attach(): Promise<PumpHarness>;
  /** Stops every attached pump, then terminates the thread. */
  stop(): Promise<void>;
}

/** Starts a pump thread (stopped after the test); `env` is the environment the thread (and so its pumps) sees. */
export function startPumpThread(t: TestContext, env: NodeJS.ProcessEnv = process.env): PumpThreadHarness {
  const worker = new Worker(PUMP_ENTRY, { env });
  worker.on('error', () => {}); // Tests that crash the thread look at its exit code.
  const pumps: PumpHarness[] = [];
  let stopping: Promise<void> | undefined;
  const thread: PumpThreadHarness = {
    worker,
    async attach() {
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ attach: port2 }, [port2]);
      const pump = attachClient(port1);
      pumps.push(pump);
      await pump.client.ready;
      return pump;
    },
    stop() {
      stopping ??= Promise.all(pumps.map((pump) => pump.stop())).then(async () => {
        await worker.terminate();
      });
      return stopping;
    },
  };
  t.after(() => thread.stop());
  return thread;
}

/** A pump in a thread of its own; `env` is the environment the thread (and so the pump) sees. */
export function startPump(t: TestContext, env: NodeJS.ProcessEnv = process.env): Promise<PumpHarness> {
  return startPumpThread(t, env).attach();
}

function attachClient(port: MessagePort): PumpHarness {
  // A loaded CI box can take seconds to boot a thread; the default 10 s hello wait is for production.
  const client = connect(messagePortTransport(port), ProxyStdioProtocol, { handshakeTimeout: 30_000 });
  const h: PumpHarness = {
    client,
    exited: [],
    stderr: [],
    logs: [],
    messages: [],
    async start(params) {
      const reply = await client.requestWithPayload('start', params, { timeout: 30_000 });
      return { ...reply.result, tools: JSON.parse(Buffer.from(reply.payload!).toString('utf8')) };
    },
    async rpc(method, params, options = {}) {
      const reply = await client.requestWithPayload('rpc', options.timeout_ms === undefined ? { method } : { method, timeout_ms: options.timeout_ms }, {
        timeout: 30_000,
        ...(params === undefined ? {} : { payload: Buffer.from(JSON.stringify(params)) }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (reply.result.error !== undefined) return { rpcError: reply.result.error };
      return JSON.parse(Buffer.from(reply.payload!).toString('utf8'));
    },
    async callTool(name, args = {}) {
      const result = (await h.rpc('tools/call', { name, arguments: args })) as { structuredContent?: unknown };
      return result.structuredContent ?? result;
    },
    until(predicate, ms = 10_000, what = 'condition') {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const check = (): void => {
          if (predicate()) {
            clearInterval(timer);
            resolve();
          } else if (Date.now() - started > ms) {
            clearInterval(timer);
            reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
          }
        };
        const timer = setInterval(check, 20);
        check();
      });
    },
    async stop() {
      if (!client.closed) await client.request('shutdown', {}, { timeout: 10_000 }).catch(() => {});
      client.dispose();
    },
  };
  client.on('exited', (e) => h.exited.push(e));
  client.on('stderr', (e) => h.stderr.push(e.line));
  client.on('log', (e) => h.logs.push(e));
  client.on('message', (e, payload) => h.messages.push(payload === undefined ? e : { ...e, params: JSON.parse(Buffer.from(payload).toString('utf8')) }));
  return h;
}

/** Start params for the mock upstream in `mode`. */
export function mockParams(mode: string, extra: Partial<StartParams> = {}): StartParams {
  return {
    name: 'mock',
    command: process.execPath,
    args: [MOCK_UPSTREAM, mode],
    env: {},
    timeout_ms: 10_000,
    protocol_version: '2025-11-25',
    client_name: 'tuicommander',
    client_version: '0.0.0-test',
    ...extra,
  };
}

/** A process that exists and is not a zombie (an unreaped dead child still answers kill 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  try {
    // Field 3, after the parenthesised command (which may itself hold spaces or parentheses).
    const text = readFileSync(stat, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until MIN_RESPAWN_INTERVAL_MS (plus a little) has passed since `since`. */
export async function waitForRespawnWindow(since: number): Promise<void> {
  const wait = since + 5_000 + 100 - Date.now();
  if (wait > 0) await sleep(wait);
}

/** The session default deadline in the misbehaviour tests; failing well before it proves a shorter deadline (or an exit) governed. */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const FAIL_WELL_BEFORE_DEFAULT_MS = 20_000;

/** The text of a tools/call result's first content block. */
export const echoText = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]!.text;
