/**
 * How a message reaches its recipient, once. The inbox always gets it first; then the most
 * immediate route the recipient's state allows:
 * - a waiting `agent wait` (woken by the inbox itself): `waiter_and_inbox`;
 * - a Claude Code recipient working a turn, holding its GET /mcp stream: a
 *   `notifications/claude/channel` push, `sse_channel_and_inbox`;
 * - a managed agent in one of our PTYs: a `[TUIC] …` line typed into it when it is idle with an
 *   empty composer and no confident question, else queued and typed at its next idle, one per
 *   idle: `terminal_or_queued_and_inbox`;
 * - an idle orchestrator: one payload-free wake (or, when its unread mail is all lifecycle, a
 *   typed summary of it) that covers every later message until it is typed (wakeBudget.ts);
 * - otherwise `inbox_only`, re-evaluated at the recipient's next idle.
 * Lines wait in the PTY's one typed FIFO with the user's queued commands (typedQueue.ts).
 */
import { randomUUID } from 'node:crypto';

import type { Disposable } from '../../shared/disposable.js';
import type { EventBus } from '../events/eventBus.js';
import type { Logger } from '../log.js';
import { agentState, type SessionRecord } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';
import { submitCommand } from '../sessions/submission.js';
import type { AgentMessage, Peer, PeerRegistry } from './peerRegistry.js';
import type { MailChannel } from './ports.js';
import { TypedQueue, type TypedEntry } from './typedQueue.js';
import { WakeBudget, WakeConstants, type WakeOutcome } from './wakeBudget.js';

export const DeliveryConstants = {
  /** Bodies over this many bytes are not typed; a pointer to the inbox is. */
  INJECT_MAX_BYTES: 2048,
  /** The submit's acknowledgement deadline for an injected line. */
  INJECT_ACK_MS: 3_000,
  ORCHESTRATOR_WAKE: '[TUIC] message available — read it with: agent action=inbox',
  /** An orchestrator's lifecycle summary longer than this falls back to the generic wake. */
  SUMMARY_MAX_CHARS: 240,
} as const;

export type DeliveryPath =
  | 'waiter_and_inbox'
  | 'sse_channel_and_inbox'
  | 'terminal_or_queued_and_inbox'
  | 'orchestrator_wake_and_inbox'
  /** An orchestrator wake already waits to be typed: it covers this message too. */
  | 'orchestrator_wake_coalesced_and_inbox'
  | 'lifecycle_summary_and_inbox'
  | 'inbox_only';

/** Server-authored lifecycle mail: its ids start with this. */
export const LIFECYCLE_ID_PREFIX = 'tuic-auto-';

export interface DeliveryReceipt {
  path: DeliveryPath;
  /** The message reached the recipient now (not only its inbox or a queue). */
  delivered: boolean;
  recipient_has_terminal: boolean;
  recipient_state?: { shell_state?: string; agent_state?: string };
}

export interface MailDeliveryOptions {
  registry: PeerRegistry;
  sessions: SessionService;
  bus: EventBus;
  /** The recipient's GET /mcp stream, for a Claude Code recipient working a turn. */
  channel: MailChannel;
  log: Logger;
}

/** The PTY line for a message: one line, or a pointer to the inbox for a long body. */
export function injectionText(message: AgentMessage): string {
  const from = `${message.from_name} (${message.from_tuic_session.slice(0, 8)})`;
  const body = message.content.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  const kind = message.urgency === 'urgent' ? 'Urgent message' : 'Message';
  if (Buffer.byteLength(body) > DeliveryConstants.INJECT_MAX_BYTES) {
    return `[TUIC] ${kind} from ${from}, ${Buffer.byteLength(message.content)} bytes — read it with: agent action=inbox`;
  }
  return `[TUIC] ${kind} from ${from}: ${body}`;
}

const READY: ReadonlySet<string | null> = new Set(['idle', 'completed']);

/** What POST /sessions/:id/queue answers. */
export interface QueueReceipt {
  accepted: boolean;
  typed: boolean;
  queued: boolean;
  id?: string;
  duplicate?: boolean;
}

export class MailDelivery implements Disposable {
  /** Per PTY session: what waits to be typed into it, in acceptance order. */
  private readonly queues = new Map<string, TypedQueue>();
  private readonly injecting = new Set<string>();
  /** Per orchestrator identity: its wake's budget. */
  private readonly wakes = new Map<string, WakeBudget>();
  /** Per PTY session: the agent_state last published, to see busy→idle edges. */
  private readonly lastState = new Map<string, string | null>();
  private readonly subscriptions: Disposable[];
  private readonly now: () => number = Date.now;

  constructor(private readonly opts: MailDeliveryOptions) {
    this.subscriptions = [
      // Readiness changed (a shell-state change, or a submit claim ended): the head may go now.
      opts.sessions.onShellState((record) => void this.flush(record)),
      // Idle is published before the flush it allows; an edge into idle/completed re-arms an orchestrator's wake.
      opts.bus.on('session-state-changed', (_name, payload) => {
        const { session_id, state } = payload as { session_id: string; state: { agent_state?: string } };
        this.onAgentState(session_id, state.agent_state ?? null);
      }),
      opts.sessions.onLifecycle((event, record) => {
        if (event === 'closed' || event === 'exit') {
          this.queues.delete(record.session_id);
          this.lastState.delete(record.session_id);
          this.syncQueuedCount(record);
        }
      }),
    ];
  }

  send(
    from: Peer | { tuic_session: string; name: string },
    to: Peer,
    content: string,
    urgent: boolean,
    id?: string,
  ): { message: AgentMessage; receipt: DeliveryReceipt } {
    const waiting = this.opts.registry.hasWaiter(to.tuic_session);
    const message = this.opts.registry.deliver(to, from, content, { ...(urgent ? { urgent } : {}), ...(id !== undefined ? { id } : {}) });
    const terminal = this.terminalOf(to);
    const receipt: DeliveryReceipt = { path: 'inbox_only', delivered: false, recipient_has_terminal: terminal !== null };
    if (terminal !== null) {
      const state = agentState(terminal);
      receipt.recipient_state = {};
      if (terminal.shell_state) receipt.recipient_state.shell_state = terminal.shell_state;
      if (state !== null) receipt.recipient_state.agent_state = state;
    }
    if (waiting) {
      // The inbox woke it: `agent wait` owns delivery and the terminal is left alone.
      receipt.path = 'waiter_and_inbox';
      receipt.delivered = true;
      return { message, receipt };
    }
    if (terminal === null || terminal.agent_type === null) return { message, receipt };
    const state = agentState(terminal);
    if (to.orchestrator) {
      // Orchestrators never get peer payloads typed or pushed: a wake, only when idle; else the next idle re-evaluates.
      if (!READY.has(state)) return { message, receipt };
      const budget = this.budgetOf(to);
      if (budget.pending) {
        receipt.path = 'orchestrator_wake_coalesced_and_inbox';
        receipt.delivered = true;
      } else if (this.requestWake(to, terminal)) {
        receipt.path = this.lifecycleSummary(this.unread(to)) !== null ? 'lifecycle_summary_and_inbox' : 'orchestrator_wake_and_inbox';
        receipt.delivered = true;
      }
      return { message, receipt };
    }
    const owner = to.routes[0];
    if (state === 'working' && terminal.agent_type === 'claude' && owner !== undefined && this.opts.channel.channelCapable(owner)) {
      const pushed = this.opts.channel.push(owner, {
        jsonrpc: '2.0',
        method: 'notifications/claude/channel',
        params: {
          content: `Message from ${from.name}: ${content}`,
          meta: { from_tuic_session: from.tuic_session, from_name: from.name, message_id: message.id, ...(urgent ? { urgency: 'urgent' } : {}) },
        },
      });
      if (pushed) {
        receipt.path = 'sse_channel_and_inbox';
        receipt.delivered = true;
        return { message, receipt };
      }
    }
    receipt.path = 'terminal_or_queued_and_inbox';
    receipt.delivered = READY.has(state);
    this.enqueue(terminal, { kind: 'peer', id: message.id, text: injectionText(message) });
    return { message, receipt };
  }

  /** An inbox read or a successful wait acknowledged the identity's unread group: its wake budget starts over. */
  acknowledged(peer: Peer): void {
    const budget = this.wakes.get(peer.tuic_session);
    if (!budget) return;
    budget.acknowledge();
    budget.dispose();
  }

  /** POST /sessions/:id/queue: a user command joins the FIFO; typed now when the agent can take it. */
  async queueCommand(record: SessionRecord, text: string, idempotencyKey?: string): Promise<QueueReceipt> {
    const queue = this.queueOf(record.session_id);
    const entry = queue.pushCommand(text, idempotencyKey);
    if (entry === null) return { accepted: false, typed: false, queued: false, duplicate: true };
    this.syncQueuedCount(record);
    await this.flush(record);
    const queued = queue.includes(entry);
    return { accepted: true, typed: !queued, queued, id: entry.id };
  }

  /** The user's queued commands for a session (peer lines and wakes are not listed). */
  queuedCommands(sessionId: string): { id: string; text: string }[] {
    return this.queues.get(sessionId)?.commands() ?? [];
  }

  clearCommands(record: SessionRecord): number {
    const removed = this.queues.get(record.session_id)?.clearCommands() ?? 0;
    if (removed > 0) this.syncQueuedCount(record);
    return removed;
  }

  removeCommand(record: SessionRecord, commandId: string): boolean {
    const removed = this.queues.get(record.session_id)?.removeCommand(commandId) ?? false;
    if (removed) this.syncQueuedCount(record);
    return removed;
  }

  /** Lines still waiting for a session's idle (tests, diagnostics); a wake shows as its generic text. */
  queuedFor(sessionId: string): readonly string[] {
    const q = this.queues.get(sessionId);
    return q ? q.all().map((e) => (e.kind === 'wake' ? DeliveryConstants.ORCHESTRATOR_WAKE : e.text)) : [];
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    for (const b of this.wakes.values()) b.dispose();
    this.wakes.clear();
    this.queues.clear();
  }

  private onAgentState(sessionId: string, state: string | null): void {
    const before = this.lastState.get(sessionId) ?? null;
    this.lastState.set(sessionId, state);
    if (!READY.has(state) || READY.has(before)) return;
    const record = this.opts.sessions.resolve(sessionId);
    if (!record || record.exit) return;
    const peer = this.opts.registry.get(record.tuic_session);
    if (peer?.orchestrator) {
      // The lifecycle that refused is not this one: re-arm before chasing the outstanding mail.
      this.budgetOf(peer).rearm();
      this.reevaluate(peer);
    }
    void this.flush(record);
  }

  /** Queues a wake for unread mail no wake announced yet, when the budget allows. */
  private reevaluate(peer: Peer): void {
    const terminal = this.terminalOf(peer);
    if (terminal === null || terminal.agent_type === null || !peer.orchestrator || !READY.has(agentState(terminal))) return;
    if (this.opts.registry.hasWaiter(peer.tuic_session)) return;
    this.requestWake(peer, terminal);
  }

  private requestWake(peer: Peer, terminal: SessionRecord): boolean {
    const budget = this.budgetOf(peer);
    if (!budget.canWake(this.now())) return false;
    const newest = peer.inbox.at(-1)?.timestamp ?? 0;
    if (newest <= Math.max(peer.cursor, budget.announcedThrough)) return false;
    budget.pending = true;
    this.enqueue(terminal, { kind: 'wake', id: randomUUID(), recipient: peer.tuic_session });
    return true;
  }

  private budgetOf(peer: Peer): WakeBudget {
    let b = this.wakes.get(peer.tuic_session);
    if (!b) this.wakes.set(peer.tuic_session, (b = new WakeBudget()));
    return b;
  }

  private unread(peer: Peer): AgentMessage[] {
    return peer.inbox.filter((m) => m.timestamp > peer.cursor);
  }

  /**
   * `[TUIC] child agent 8c261794 is now idle; child agent 8c261794 exited (exit 0)` when every
   * message of the window is server-authored lifecycle mail; null when a peer's message is among
   * them or the summary would be too long (the generic wake then).
   */
  private lifecycleSummary(window: readonly AgentMessage[]): string | null {
    if (window.length === 0 || window.some((m) => !m.id.startsWith(LIFECYCLE_ID_PREFIX))) return null;
    const parts: string[] = [];
    for (const m of window) {
      let event: { state?: unknown; type?: unknown; session_id?: unknown; exit_code?: unknown };
      try {
        event = JSON.parse(m.content) as typeof event;
      } catch {
        return null;
      }
      const who = `child agent ${String(event.session_id ?? m.from_tuic_session).slice(0, 8)}`;
      if (event.type === 'prompt_delivery_failed') parts.push(`${who} never took its prompt`);
      else if (event.state === 'exited') parts.push(`${who} exited${typeof event.exit_code === 'number' ? ` (exit ${event.exit_code})` : ''}`);
      else parts.push(`${who} is now ${String(event.state).replace('_', ' ')}`);
    }
    const text = `[TUIC] ${parts.join('; ')}`;
    return text.length <= DeliveryConstants.SUMMARY_MAX_CHARS ? text : null;
  }

  private terminalOf(peer: Peer): SessionRecord | null {
    const record = this.opts.sessions.resolve(peer.tuic_session);
    return record && !record.exit ? record : null;
  }

  private queueOf(sessionId: string): TypedQueue {
    let q = this.queues.get(sessionId);
    if (!q) this.queues.set(sessionId, (q = new TypedQueue()));
    return q;
  }

  private enqueue(record: SessionRecord, entry: TypedEntry): void {
    this.queueOf(record.session_id).push(entry);
    void this.flush(record);
  }

  private syncQueuedCount(record: SessionRecord): void {
    const count = this.queues.get(record.session_id)?.commands().length ?? 0;
    if (record.queued_commands === count) return;
    record.queued_commands = count;
    this.opts.sessions.republish(record);
  }

  /**
   * Types the FIFO's head if the recipient can take it now; submit's own checks (idle, empty
   * composer, no confident dialog, no claim) decide, under the writer lock, so nothing races it.
   * A wake is rendered here, from the mail unread at this moment.
   */
  private async flush(record: SessionRecord): Promise<void> {
    const id = record.session_id;
    const q = this.queues.get(id);
    const head = q?.head();
    if (!q || head === undefined || this.injecting.has(id)) return;
    if (record.exit) {
      this.queues.delete(id);
      return;
    }
    if (!READY.has(agentState(record))) return;
    let text: string;
    let wake: { peer: Peer; budget: WakeBudget; through: number; summary: string | null } | null = null;
    if (head.kind === 'wake') {
      const peer = this.opts.registry.get(head.recipient);
      const budget = peer ? this.budgetOf(peer) : null;
      const window = peer ? this.unread(peer) : [];
      const through = window.at(-1)?.timestamp ?? 0;
      if (!peer || !budget || through <= budget.announcedThrough) {
        // Read (or announced) meanwhile: nothing left to wake it for.
        q.shift(head);
        if (budget) budget.pending = false;
        return this.flush(record);
      }
      const summary = this.lifecycleSummary(window);
      wake = { peer, budget, through, summary };
      text = summary ?? DeliveryConstants.ORCHESTRATOR_WAKE;
    } else {
      text = head.text;
    }
    this.injecting.add(id);
    let written = false;
    try {
      const receipt = await submitCommand(this.opts.sessions, id, text, { timeoutMs: DeliveryConstants.INJECT_ACK_MS, queueHead: true });
      written = receipt.write_state !== 'not_started';
      if (wake !== null) {
        // A wake is never re-queued on a refusal: the next busy→idle edge re-arms it.
        q.shift(head);
        const outcome: WakeOutcome = !written ? 'not_started' : receipt.acknowledged ? 'acknowledged' : 'uncertain';
        this.settleWake(wake, outcome);
      } else if (written) {
        // Written (acknowledged or not): retrying could type it twice; the inbox holds it either way.
        q.shift(head);
      } else {
        this.opts.log.debug({ session_id: id, reason: receipt.reason }, 'typed queue entry deferred');
      }
    } catch (err) {
      this.opts.log.warn({ session_id: id, err: String(err) }, 'typing a queued entry failed; mail stays in the inbox');
      q.shift(head);
      if (wake !== null) wake.budget.pending = false;
    } finally {
      // The queue stays while the session lives: it remembers the idempotency keys.
      this.injecting.delete(id);
      if (head.kind === 'command') this.syncQueuedCount(record);
    }
  }

  private settleWake(wake: { peer: Peer; budget: WakeBudget; through: number; summary: string | null }, outcome: WakeOutcome): void {
    const { peer, budget, through, summary } = wake;
    budget.settle(outcome, through, this.now());
    if (outcome === 'acknowledged' && summary !== null) {
      // The summary told everything in its window: it is read. Mail that arrived while typing is not.
      peer.cursor = Math.max(peer.cursor, through);
      budget.acknowledge();
      this.reevaluate(peer);
    }
    if (outcome === 'uncertain' && !budget.exhausted) {
      // Retried once, after the ambiguous notice expired and only if the agent is ready again then.
      budget.dispose();
      budget.timer = setTimeout(() => {
        budget.timer = null;
        this.reevaluate(peer);
      }, WakeConstants.UNCERTAIN_EXPIRY_MS + 10);
      budget.timer.unref();
    }
  }
}
