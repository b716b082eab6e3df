/** Test helpers for /mcp: JSON-RPC posts and GET /mcp streams that report when the server ends them. */
import type { RequestOptions } from 'node:http';

import { SseClient } from '../../../helpers/sseClient.js';
import type { SseEvent } from '../../../helpers/sseClient.js';

import type { HttpAnswer, Tuicd } from '../../../helpers/tuicdProcess.js';

export const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

let nextId = 1;

/** POSTs one JSON-RPC request over the socket; `body` may be a raw string for malformed input. */
export function rpc(t: Tuicd, method: string, params?: object, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const msg: Record<string, unknown> = { jsonrpc: '2.0', id: nextId++, method };
  if (params !== undefined) msg['params'] = params;
  return t.socket('POST', '/mcp', JSON.stringify(msg), { ...JSON_HEADERS, ...headers });
}

export async function initialize(t: Tuicd, params: object = {}, headers: Record<string, string> = {}): Promise<{ id: string; answer: HttpAnswer }> {
  const answer = await rpc(
    t,
    'initialize',
    { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test-client', version: '1' }, ...params },
    headers,
  );
  const id = answer.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error(`initialize returned no Mcp-Session-Id: ${answer.status} ${answer.text}`);
  return { id, answer };
}

/** A GET /mcp stream: the shared SSE test reader, aimed at /mcp, that can wait for JSON-RPC methods. */
export class McpStream extends SseClient {
  static override open<T extends SseClient>(this: new () => T, opts: RequestOptions): Promise<T> {
    return SseClient.open.call(McpStream, { path: '/mcp', ...opts }) as Promise<T>;
  }

  get messages(): SseEvent[] {
    return this.events;
  }

  /** Resolves once `count` messages whose JSON has `method` arrived. */
  waitForMethod(method: string, count = 1): Promise<void> {
    return this.until(() => this.events.filter((m) => JSON.parse(m.data).method === method).length >= count, `${count}× ${method}`);
  }
}

/** Polls GET /mcp/status until `pred` holds (the server's view of its streams and sessions). */
export async function waitForStatus(t: Tuicd, pred: (s: { sse_streams: number; mcp_clients: number }) => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = (await t.socket('GET', '/mcp/status')).json();
    if (pred(s)) return;
    if (Date.now() > deadline) throw new Error(`/mcp/status never matched: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
