/** A small SSE reader for tests: opens GET /events and collects parsed events as they arrive. */
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
  private buffer = '';
  private req: ClientRequest | null = null;
  private waiters: Array<() => void> = [];

  static open(opts: RequestOptions): Promise<SseClient> {
    const c = new SseClient();
    return new Promise((resolve, reject) => {
      c.req = request({ agent: false, method: 'GET', ...opts }, (res) => {
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (d: string) => c.feed(d));
        resolve(c);
      });
      c.req.on('error', reject);
      c.req.end();
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
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) ev.event = line.slice(7);
        else if (line.startsWith('id: ')) ev.id = line.slice(4);
        else if (line.startsWith('data: ')) {
          ev.data = line.slice(6);
          hasData = true;
        }
      }
      if (hasData) this.events.push(ev);
    }
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves when an event matching `pred` has arrived (or rejects after timeoutMs). */
  async waitFor(pred: (e: SseEvent) => boolean, timeoutMs = 5000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(pred);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`SSE event not seen within ${timeoutMs} ms; got: ${this.raw.slice(-500)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.req?.destroy();
  }
}
