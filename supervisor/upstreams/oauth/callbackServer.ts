/**
 * A flow's own loopback callback server: 127.0.0.1 on a port the OS picks, one path (`/callback`).
 * It outlives its flow by a grace period, so a redirect that comes back after the flow expired (MFA,
 * an account picker, a long password-manager detour) reaches a page saying so, not the browser's
 * "can't connect". A callback that authorized closes it shortly after the page is served.
 */
import { createServer, type Server } from 'node:http';

export const CALLBACK_PATH = '/callback';

export interface CallbackAnswer {
  status: number;
  html: string;
  /** Close the server soon after this answer (the flow is done). */
  done: boolean;
}

export class CallbackServer {
  private server: Server | null = null;
  private closeTimer: NodeJS.Timeout | null = null;
  port = 0;

  constructor(
    private readonly handle: (query: URLSearchParams) => Promise<CallbackAnswer>,
    private readonly onClosed: () => void = () => undefined,
  ) {}

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      void this.handle(url.searchParams).then(
        (answer) => {
          res.writeHead(answer.status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' }).end(answer.html);
          if (answer.done) this.closeIn(2_000);
        },
        () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n'),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Never what keeps a process alive: tuicd's own listeners do that.
    server.unref();
    const address = server.address();
    this.port = typeof address === 'object' && address !== null ? address.port : 0;
  }

  get redirectUri(): string {
    return `http://127.0.0.1:${this.port}${CALLBACK_PATH}`;
  }

  /** Closes after `ms` (an earlier close wins); the timer does not keep the process alive. */
  closeIn(ms: number): void {
    if (this.server === null) return;
    if (this.closeTimer !== null) clearTimeout(this.closeTimer);
    this.closeTimer = setTimeout(() => this.close(), ms);
    this.closeTimer.unref();
  }

  close(): void {
    if (this.closeTimer !== null) clearTimeout(this.closeTimer);
    this.closeTimer = null;
    const server = this.server;
    this.server = null;
    if (server === null) return;
    server.close();
    server.closeAllConnections();
    this.onClosed();
  }
}
