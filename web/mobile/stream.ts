/**
 * One session's WebSocket (`/sessions/:id/stream`) that survives a dropped link: on close it
 * reconnects (backoff 0.5 s → 5 s) from where it stopped, `?offset=` being the next raw byte (raw
 * mode) or the next log line (log mode), so a reconnect shows nothing twice and nothing missing.
 * `client=mobile` marks it as the page's own viewer: no push for a session on screen.
 */

export interface StreamHandlers {
  /** Raw mode: output bytes, in order. */
  bytes?(data: Uint8Array): void;
  /** A JSON frame (log, state, parsed, resync, exit, closed…). */
  // biome-ignore lint/suspicious/noExplicitAny: viewer frames are read field by field by each view, which checks what it uses
  frame(frame: Record<string, any>): void;
  /** Link state, for the status line. */
  status(state: 'live' | 'reconnecting' | 'ended'): void;
}

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 5000;

export class SessionStream {
  /** Raw: absolute offset of the next byte; log: the next line (total_lines). Undefined until known. */
  offset: number | undefined;
  private ws: WebSocket | undefined;
  private stopped = false;
  private backoff = BACKOFF_MIN_MS;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly mode: 'raw' | 'log',
    private readonly handlers: StreamHandlers,
    startOffset?: number,
  ) {
    this.offset = startOffset;
    this.open();
  }

  /** Closes the link as a network drop would (tests, and the page going to the background). */
  drop(): void {
    this.ws?.close(4000, 'link dropped');
  }

  /** Sends keystrokes over the socket (text frames reach the PTY as typed input). */
  send(text: string): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(text);
    return true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.ws?.close(1000, 'viewer left');
  }

  /** Reopens at once (the page came back to the foreground). */
  resume(): void {
    if (this.stopped || (this.ws && this.ws.readyState <= WebSocket.OPEN)) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.open();
  }

  private url(): string {
    const q = new URLSearchParams({ client: 'mobile' });
    if (this.mode === 'raw') q.set('encoding', 'binary');
    else q.set('format', 'log');
    if (this.offset !== undefined) q.set('offset', String(this.offset));
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}/sessions/${encodeURIComponent(this.sessionId)}/stream?${q}`;
  }

  private open(): void {
    this.timer = undefined;
    const ws = (this.ws = new WebSocket(this.url()));
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      this.backoff = BACKOFF_MIN_MS;
      this.handlers.status('live');
    };
    ws.onmessage = (e: MessageEvent<ArrayBuffer | string>) => {
      if (ws !== this.ws) return;
      if (typeof e.data !== 'string') {
        const bytes = new Uint8Array(e.data);
        this.offset = (this.offset ?? 0) + bytes.length;
        this.handlers.bytes?.(bytes);
        return;
      }
      // biome-ignore lint/suspicious/noExplicitAny: as in StreamHandlers.frame
      const frame = JSON.parse(e.data) as Record<string, any>;
      // The ring no longer held [from, to): go on from `to` (the handler shows the gap).
      if (frame['type'] === 'resync') this.offset = frame['to'];
      if (frame['type'] === 'log' && typeof frame['total_lines'] === 'number') this.offset = frame['total_lines'];
      this.handlers.frame(frame);
      if (frame['type'] === 'closed') this.stopped = true;
    };
    ws.onclose = () => {
      if (ws !== this.ws) return;
      if (this.stopped) return this.handlers.status('ended');
      this.handlers.status('reconnecting');
      this.timer = setTimeout(() => this.open(), this.backoff);
      this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2);
    };
  }
}
