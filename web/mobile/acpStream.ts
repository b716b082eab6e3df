/**
 * An ACP connection's stream (`/acp/connections/:id/stream?after=`) that survives a dropped link or
 * a phone asleep: it reconnects (backoff 0.5 s → 5 s) after the last `seq` it saw, so the
 * transcript gets every frame once. The server refuses a cursor its journal has dropped before the
 * upgrade (a browser sees only a failed socket): the snapshot's `firstSeq` tells that case apart,
 * and it ends like a `gap` frame, for which the cure is a session `load`.
 */
import { api, ApiError } from './api.js';

export interface AcpEventFrame {
  kind: 'event';
  seq: number;
  connectionId: string;
  generation: number;
  atMs: number;
  // biome-ignore lint/suspicious/noExplicitAny: the agent's updates are read field by field by the transcript
  event: { type: string; [k: string]: any };
}
export interface AcpEndFrame {
  kind: 'end';
  seq: number;
  reason: string;
}
export interface AcpGapFrame {
  kind: 'gap';
  after: number;
  firstAvailable: number;
  message: string;
}
export type AcpFrame = AcpEventFrame | AcpEndFrame | AcpGapFrame;

export type AcpLink = 'live' | 'reconnecting' | 'ended' | 'gap';

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 5000;

export class AcpStream {
  /** The last seq handed to `frame`: the next socket opens after it. */
  lastSeq: number;
  private ws: WebSocket | undefined;
  private stopped = false;
  private backoff = BACKOFF_MIN_MS;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly connectionId: string,
    private readonly handlers: { frame(frame: AcpFrame): void; status(link: AcpLink): void },
    after = 0,
  ) {
    this.lastSeq = after;
    this.open();
  }

  /** Closes the link as a network drop would (tests; a phone going to sleep does the same). */
  drop(): void {
    this.ws?.close(4000, 'link dropped');
  }

  /** Reopens at once (the page came back to the foreground). */
  resume(): void {
    if (this.stopped || (this.ws && this.ws.readyState <= WebSocket.OPEN)) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.open();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.ws?.close(1000, 'viewer left');
  }

  private url(): string {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}/acp/connections/${encodeURIComponent(this.connectionId)}/stream?after=${this.lastSeq}&client=mobile`;
  }

  private open(): void {
    this.timer = undefined;
    let opened = false;
    const ws = (this.ws = new WebSocket(this.url()));
    ws.onopen = () => {
      opened = true;
      this.backoff = BACKOFF_MIN_MS;
      this.handlers.status('live');
    };
    ws.onmessage = (e: MessageEvent<string>) => {
      if (ws !== this.ws || typeof e.data !== 'string') return;
      const frame = JSON.parse(e.data) as AcpFrame;
      if (frame.kind === 'gap') return this.end(frame);
      // A frame at or before the cursor was already shown (a resume that raced a late frame).
      if (frame.seq <= this.lastSeq) return;
      this.lastSeq = frame.seq;
      this.handlers.frame(frame);
      if (frame.kind === 'end') {
        this.stopped = true;
        this.handlers.status('ended');
      }
    };
    ws.onclose = () => {
      if (ws !== this.ws || this.stopped) return;
      this.handlers.status('reconnecting');
      if (opened) return this.retry();
      void this.whyRefused();
    };
  }

  /** The socket never opened: the connection is gone (404), the cursor fell out of the journal, or the link is down. */
  private async whyRefused(): Promise<void> {
    try {
      const snap = await api<{ firstSeq: number; lastSeq: number }>('GET', `/acp/connections/${encodeURIComponent(this.connectionId)}`);
      if (this.stopped) return;
      if (snap.firstSeq > this.lastSeq + 1) {
        return this.end({
          kind: 'gap',
          after: this.lastSeq,
          firstAvailable: snap.firstSeq,
          message: `updates ${this.lastSeq + 1}–${snap.firstSeq - 1} are no longer kept`,
        });
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.stopped = true;
        return this.handlers.status('ended');
      }
    }
    this.retry();
  }

  private retry(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.open(), this.backoff);
    this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2);
  }

  private end(gap: AcpGapFrame): void {
    this.stopped = true;
    this.handlers.frame(gap);
    this.handlers.status('gap');
    this.ws?.close(1000, 'gap');
  }
}
