/** Test helpers for /mcp: JSON-RPC posts and GET /mcp streams that report when the server ends them. */
import { request } from 'node:http';
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';

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
  const answer = await rpc(t, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test-client', version: '1' }, ...params }, headers);
  const id = answer.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error(`initialize returned no Mcp-Session-Id: ${answer.status} ${answer.text}`);
  return { id, answer };
}

export interface StreamMessage {
  event: string;
  data: string;
}

/** A GET /mcp stream: parsed `event:`/`data:` frames, the raw text, and whether the server ended it. */
export class McpStream {
  readonly messages: StreamMessage[] = [];
  raw = '';
  status = 0;
  headers: IncomingMessage['headers'] = {};
  ended = false;
  private buffer = '';
  private waiters: Array<() => void> = [];
  private req: ClientRequest | null = null;

  static open(opts: RequestOptions): Promise<McpStream> {
    const s = new McpStream();
    return new Promise((resolve, reject) => {
      s.req = request({ agent: false, method: 'GET', path: '/mcp', ...opts }, (res) => {
        s.status = res.statusCode ?? 0;
        s.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (d: string) => s.feed(d));
        const end = () => {
          s.ended = true;
          s.wake();
        };
        res.on('end', end);
        res.on('close', end);
        resolve(s);
      });
      s.req.on('error', (err) => (s.status === 0 ? reject(err) : undefined));
      s.req.end();
    });
  }

  private feed(chunk: string): void {
    this.raw += chunk;
    this.buffer += chunk;
    let idx: number;
    while ((idx = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, idx);
      this.buffer = this.buffer.slice(idx + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) this.messages.push({ event, data: data.join('\n') });
    }
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  async until(pred: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what} not seen within ${timeoutMs} ms; stream got: ${JSON.stringify(this.raw.slice(-400))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once a message whose JSON has `method` arrived. */
  waitForMethod(method: string, count = 1): Promise<void> {
    return this.until(() => this.messages.filter((m) => JSON.parse(m.data).method === method).length >= count, `${count}× ${method}`);
  }

  close(): void {
    this.req?.destroy();
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
