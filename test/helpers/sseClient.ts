/** A small SSE reader for tests: opens a GET stream (/events, /mcp), or a POST answered as one, and collects parsed events as they arrive. */
import { request } from 'node:http';
import type { ClientRequest, RequestOptions } from 'node:http';

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

export class SseClient {
  readonly events: SseEvent[] = [];
  raw = '';
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  /** Set once the server ended the response (or the connection closed). */
  ended = false;
  private buffer = '';
  private req: ClientRequest | null = null;
  private waiters: Array<() => void> = [];

  /** `send`: node:http's request, or node:https's for a TLS listener; `body` goes with a POST (`opts.method`). */
  static open<T extends SseClient>(this: new () => T, opts: RequestOptions, send: typeof request = request, body?: string): Promise<T> {
    const c = new this();
    return new Promise((resolve, reject) => {
      c.req = send({ agent: false, method: 'GET', ...opts }, (res) => {
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (d: string) => c.feed(d));
        const end = () => {
          c.ended = true;
          c.wake();
        };
        res.on('end', end);
        res.on('close', end);
        resolve(c);
      });
      c.req.on('error', (err) => (c.status === 0 ? reject(err) : undefined));
      c.req.end(body);
    });
  }

  private feed(chunk: string): void {
    this.raw += chunk;
    this.buffer += chunk;
    let idx: number;
    while ((idx = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, idx);
      this.buffer = this.buffer.slice(idx + 2);
      const ev: SseEvent = { event: 'message', data: '' };
      // Several data lines make one payload, joined by newlines (the SSE rule).
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) ev.event = line.slice(7);
        else if (line.startsWith('id: ')) ev.id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) {
        ev.data = data.join('\n');
        this.events.push(ev);
      }
    }
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once `pred` holds, re-checked on every chunk and at the end of the stream. */
  async until(pred: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what} not seen within ${timeoutMs} ms; stream got: ${JSON.stringify(this.raw.slice(-500))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Resolves with the first event matching `pred` (or rejects after timeoutMs). */
  async waitFor(pred: (e: SseEvent) => boolean, timeoutMs = 5000): Promise<SseEvent> {
    await this.until(() => this.events.some(pred), 'SSE event', timeoutMs);
    return this.events.find(pred)!;
  }

  close(): void {
    this.req?.destroy();
  }
}
