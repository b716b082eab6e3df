/**
 * Keeps the session list and the pending confirms current: GET /sessions and /api/mobile/confirms
 * once, then `/events` (SSE) applies each change as it comes. While the SSE link is down the page
 * polls GET /sessions every 3 s, and refetches everything when the link is back,
 * since events sent meanwhile are lost.
 */
import { api } from './api.js';
import type { Confirm, SessionRow, SessionState } from './model.js';
import type { UpstreamRow } from './upstreams.js';

const POLL_MS = 3000;
const TYPES = [
  'session-created',
  'session-closed',
  'session-state-changed',
  'pty-activity',
  'term-alias-assigned',
  'mcp-confirm',
  'mcp-confirm-resolved',
  'upstream-status-changed',
];

export class Feed {
  readonly sessions = new Map<string, SessionRow>();
  readonly confirms = new Map<string, Confirm>();
  upstreams: UpstreamRow[] = [];
  /** Bumped when the upstream rows changed (their cards keep typed input otherwise). */
  upstreamsRevision = 0;
  private source: EventSource | undefined;
  private poll: ReturnType<typeof setInterval> | undefined;
  private refetchQueued = false;

  constructor(private readonly onChange: () => void) {}

  async start(): Promise<void> {
    this.connect();
    await this.refetch();
  }

  get live(): boolean {
    return this.source?.readyState === EventSource.OPEN;
  }

  async refetch(): Promise<void> {
    const [rows, confirms] = await Promise.all([
      api<SessionRow[]>('GET', '/sessions'),
      api<{ confirms: Confirm[] }>('GET', '/api/mobile/confirms'),
      this.refetchUpstreams(false),
    ]);
    this.sessions.clear();
    for (const r of rows) this.sessions.set(r.session_id, r);
    this.confirms.clear();
    for (const c of confirms.confirms) this.confirms.set(c.request_id, c);
    this.onChange();
  }

  private connect(): void {
    const source = (this.source = new EventSource(`/events?types=${TYPES.join(',')}`, { withCredentials: true }));
    source.onopen = () => {
      this.stopPolling();
      void this.refetch().catch(() => undefined);
    };
    source.onerror = () => {
      // EventSource retries by itself (retry: 5000); until then the list is polled.
      this.startPolling();
      if (source.readyState === EventSource.CLOSED) setTimeout(() => this.connect(), POLL_MS);
      this.onChange();
    };
    const on = <T>(name: string, fn: (data: T) => void) => source.addEventListener(name, (e) => fn(JSON.parse((e as MessageEvent<string>).data) as T));
    on('session-state-changed', (d: { session_id: string; state: SessionState }) => {
      const row = this.sessions.get(d.session_id);
      if (!row) return this.queueRefetch();
      row.state = d.state;
      this.onChange();
    });
    on('pty-activity', (d: { session_id: string }) => {
      const row = this.sessions.get(d.session_id);
      if (row) row.state.last_activity_ms = Date.now();
    });
    on('session-created', () => this.queueRefetch());
    on('term-alias-assigned', () => this.queueRefetch());
    on('session-closed', () => this.queueRefetch());
    on('mcp-confirm', (d: Confirm) => {
      this.confirms.set(d.request_id, d);
      this.onChange();
    });
    on('upstream-status-changed', () => void this.refetchUpstreams().catch(() => undefined));
    on('mcp-confirm-resolved', (d: { request_id: string }) => {
      this.confirms.delete(d.request_id);
      this.onChange();
    });
  }

  /** The upstream rows (GET /mcp/upstream-status), kept only as the fields the page shows. */
  async refetchUpstreams(notify = true): Promise<void> {
    const answer = await api<{ upstreams: UpstreamRow[] }>('GET', '/mcp/upstream-status').catch(() => ({ upstreams: this.upstreams }));
    const rows = answer.upstreams.map(({ name, status, last_error, authorization_url }) => ({
      name,
      status,
      last_error,
      ...(authorization_url ? { authorization_url } : {}),
    }));
    if (JSON.stringify(rows) === JSON.stringify(this.upstreams)) return;
    this.upstreams = rows;
    this.upstreamsRevision++;
    if (notify) this.onChange();
  }

  /** Several lifecycle events in a burst cost one GET. */
  private queueRefetch(): void {
    if (this.refetchQueued) return;
    this.refetchQueued = true;
    setTimeout(() => {
      this.refetchQueued = false;
      void this.refetch().catch(() => undefined);
    }, 50);
  }

  private startPolling(): void {
    this.poll ??= setInterval(() => void this.refetch().catch(() => undefined), POLL_MS);
  }

  private stopPolling(): void {
    if (this.poll !== undefined) clearInterval(this.poll);
    this.poll = undefined;
  }
}
