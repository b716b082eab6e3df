/**
 * The headless substitute for the desktop confirm dialog: a `ui action=confirm`
 * broadcasts `mcp-confirm` to every client, the first `POST /mcp/confirm-response` wins, and every
 * way out — answer, timeout, caller gone, shutdown — removes the entry and publishes
 * `mcp-confirm-resolved` so every client drops its dialog.
 */
import { randomUUID } from 'node:crypto';

import type { Disposable } from '../../shared/disposable.js';
import type { EventBus } from '../events/eventBus.js';
import type { EventPayload } from '../events/eventMap.js';
import { CONFIRM_TIMEOUT_MS } from './deadlines.js';

export const ConfirmConstants = {
  /** Answered ids remembered so a late second answer hears "already answered" (409), not "unknown" (404). */
  RECENT_ANSWERED_MAX: 256,
} as const;

export interface ConfirmRequest {
  title: string;
  message?: string;
  /** The caller's tuic_session, only when it is bound to a PTY (so a client can focus that terminal). */
  originSessionId?: string;
  /** The tool call's signal: an aborted call resolves and cleans up at once. */
  signal: AbortSignal;
}

/** What the tool returns: `reason` only when nobody answered. */
export interface ConfirmOutcome {
  confirmed: boolean;
  reason?: string;
}

export type AnswerResult = 'accepted' | 'already_answered' | 'unknown';

export interface ConfirmBrokerOptions {
  bus: EventBus;
  /** The answer window; CONFIRM_TIMEOUT_MS unless a test shortens it. */
  timeoutMs?: number;
}

interface Pending {
  settle(outcome: ConfirmOutcome): void;
  /** The `mcp-confirm` payload, for clients that arrive after it was broadcast (GET /api/mobile/confirms). */
  event: Record<string, unknown>;
}

/** `300s` for whole seconds (the production wording), else milliseconds so a short test window stays exact. */
function formatWindow(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

export class ConfirmBroker implements Disposable {
  readonly timeoutMs: number;
  private readonly bus: EventBus;
  private readonly pending = new Map<string, Pending>();
  private readonly recentlyAnswered = new Set<string>();

  constructor(options: ConfirmBrokerOptions) {
    this.bus = options.bus;
    this.timeoutMs = options.timeoutMs ?? CONFIRM_TIMEOUT_MS;
  }

  /** Confirms still waiting for an answer; 0 whenever nobody is asking (nothing leaks). */
  get size(): number {
    return this.pending.size;
  }

  /** Asks every client; resolves on the first answer, after the window, or when the caller goes away. */
  request(req: ConfirmRequest): Promise<ConfirmOutcome> {
    if (req.signal.aborted) return Promise.resolve({ confirmed: false, reason: 'the request ended before an answer' });
    const requestId = randomUUID();
    return new Promise<ConfirmOutcome>((resolve) => {
      const onAbort = () => settle({ confirmed: false, reason: 'the request ended before an answer' });
      const timer = setTimeout(() => settle({ confirmed: false, reason: `no answer within ${formatWindow(this.timeoutMs)}` }), this.timeoutMs);
      const settle = (outcome: ConfirmOutcome) => {
        if (!this.pending.delete(requestId)) return;
        clearTimeout(timer);
        req.signal.removeEventListener('abort', onAbort);
        this.remember(requestId);
        const resolved: EventPayload<'mcp-confirm-resolved'> = { request_id: requestId, confirmed: outcome.confirmed };
        if (outcome.reason !== undefined) resolved['reason'] = outcome.reason;
        this.bus.publish('mcp-confirm-resolved', resolved);
        resolve(outcome);
      };
      const event: EventPayload<'mcp-confirm'> = { request_id: requestId, title: req.title };
      if (req.message !== undefined) event['message'] = req.message;
      if (req.originSessionId !== undefined) event['origin_session_id'] = req.originSessionId;
      this.pending.set(requestId, { settle, event });
      req.signal.addEventListener('abort', onAbort, { once: true });
      this.bus.publish('mcp-confirm', event);
    });
  }

  /** The confirms still open, oldest first, each as its `mcp-confirm` payload. */
  list(): Array<Record<string, unknown>> {
    return [...this.pending.values()].map((p) => ({ ...p.event }));
  }

  /** The first answer for an id settles it; any later one is refused. */
  answer(requestId: string, confirmed: boolean): AnswerResult {
    const entry = this.pending.get(requestId);
    if (entry) {
      entry.settle({ confirmed });
      return 'accepted';
    }
    return this.recentlyAnswered.has(requestId) ? 'already_answered' : 'unknown';
  }

  /** Shutdown: every waiting confirm resolves as not confirmed, so no tool call hangs on a dead server. */
  dispose(): void {
    for (const entry of [...this.pending.values()]) entry.settle({ confirmed: false, reason: 'the server is shutting down' });
  }

  private remember(requestId: string): void {
    this.recentlyAnswered.add(requestId);
    if (this.recentlyAnswered.size > ConfirmConstants.RECENT_ANSWERED_MAX) {
      const oldest = this.recentlyAnswered.values().next();
      if (!oldest.done) this.recentlyAnswered.delete(oldest.value);
    }
  }
}
