/** A WebSocket viewer for tests: connects to /sessions/:id/stream over the socket or TCP and records frames. */
import WebSocket from 'ws';

export interface Frame {
  type: string;
  [k: string]: unknown;
}

export class WsViewer {
  readonly frames: Frame[] = [];
  /** For each entry of `frames`: how many output bytes had arrived before it. */
  readonly frameAt: number[] = [];
  /** Raw output bytes received (binary frames or decoded `output` data). */
  bytes: Buffer[] = [];
  private byteCount = 0;
  private waiters: Array<() => void> = [];
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.push(Buffer.from(data));
      else {
        const frame = JSON.parse(data.toString('utf8')) as Frame;
        this.frames.push(frame);
        this.frameAt.push(this.byteCount);
        if (frame.type === 'output' && typeof frame['data'] === 'string') this.push(Buffer.from(frame['data'], 'utf8'));
      }
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static open(url: string, opts: WebSocket.ClientOptions = {}): Promise<WsViewer> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, opts);
      const v = new WsViewer(ws);
      ws.once('open', () => resolve(v));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  private push(bytes: Buffer): void {
    this.bytes.push(bytes);
    this.byteCount += bytes.length;
  }

  /** ws+unix URL for a unix socket path. */
  static socketUrl(socketPath: string, path: string): string {
    return `ws+unix://${socketPath}:${path}`;
  }

  text(): string {
    return Buffer.concat(this.bytes).toString('utf8');
  }

  async waitFor(pred: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`viewer: ${what} not met within ${timeoutMs} ms; got ${this.text().slice(-300)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.ws.close();
  }
}
