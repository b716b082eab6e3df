/**
 * How a message reaches its recipient, once (spec "Inter-Agent Messaging", REFERENCE §6.2). The
 * inbox always gets it first; then the most immediate route the recipient's state allows:
 * - a waiting `agent wait` (woken by the inbox itself): `waiter_and_inbox`;
 * - a Claude Code recipient working a turn, holding its GET /mcp stream: a
 *   `notifications/claude/channel` push, `sse_channel_and_inbox`;
 * - a managed agent in one of our PTYs: a `[TUIC] …` line typed into it when it is idle with an
 *   empty composer and no confident question, else queued and typed at its next idle, one per
 *   idle: `terminal_or_queued_and_inbox`; an orchestrator gets only a payload-free wake;
 * - otherwise `inbox_only`.
 */
import type { Disposable } from '../../shared/disposable.js';
import type { Logger } from '../log.js';
import { agentState, type SessionRecord } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';
import { submitCommand } from '../sessions/submission.js';
import type { AgentMessage, Peer, PeerRegistry } from './peerRegistry.js';

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
  /** Pushes a JSON-RPC notification on a protocol session's GET stream; false when it has none. */
  pushToStream(mcpSessionId: string, message: object): boolean;
  /** Whether a protocol session is a Claude Code client holding its GET stream. */
  channelCapable(mcpSessionId: string): boolean;
  log: Logger;
}

/** The PTY line for a message: one line, or a pointer to the inbox for a long body. */
export function injectionText(message: AgentMessage): string {
  const from = `${message.from_name} (${message.from_tuic_session.slice(0, 8)})`;
  const body = message.content.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  if (Buffer.byteLength(body) > DeliveryConstants.INJECT_MAX_BYTES) {
    return `[TUIC] Message from ${from}, ${Buffer.byteLength(message.content)} bytes — read it with: agent action=inbox`;
  }
  return `[TUIC] Message from ${from}: ${body}`;
}

export class MailDelivery implements Disposable {
  /** Per PTY session: lines waiting for the recipient's next idle, in arrival order. */
  private readonly queued = new Map<string, string[]>();
  private readonly injecting = new Set<string>();
  private readonly subscription: Disposable;

  constructor(private readonly opts: MailDeliveryOptions) {
    // Each idle transition types at most one queued line (the line starts the next busy period).
    this.subscription = opts.sessions.onShellState((record) => {
      if (record.shell_state === 'idle') void this.flush(record);
    });
  }

  send(from: Peer | { tuic_session: string; name: string }, to: Peer, content: string, urgent: boolean, id?: string): { message: AgentMessage; receipt: DeliveryReceipt } {
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
      // Orchestrators never get peer payloads typed or pushed: a wake, and only when idle.
      if (state === 'idle' || state === 'completed') {
        receipt.delivered = true;
        // Only lifecycle mail unread: type what happened and count it as read (nothing a peer wrote).
        const summary = this.lifecycleSummary(to);
        if (summary !== null) {
          receipt.path = 'lifecycle_summary_and_inbox';
          to.cursor = message.timestamp;
          this.enqueue(terminal, summary);
        } else {
          receipt.path = 'orchestrator_wake_and_inbox';
          this.enqueue(terminal, DeliveryConstants.ORCHESTRATOR_WAKE);
        }
      }
      return { message, receipt };
    }
    const owner = to.routes[0];
    if (state === 'working' && terminal.agent_type === 'claude' && owner !== undefined && this.opts.channelCapable(owner)) {
      const pushed = this.opts.pushToStream(owner, {
        jsonrpc: '2.0',
        method: 'notifications/claude/channel',
        params: { content: `Message from ${from.name}: ${content}`, meta: { from_tuic_session: from.tuic_session, from_name: from.name, message_id: message.id } },
      });
      if (pushed) {
        receipt.path = 'sse_channel_and_inbox';
        receipt.delivered = true;
        return { message, receipt };
      }
    }
    receipt.path = 'terminal_or_queued_and_inbox';
    receipt.delivered = state === 'idle' || state === 'completed';
    this.enqueue(terminal, injectionText(message));
    return { message, receipt };
  }

  /**
   * `[TUIC] child agent 8c261794 is now idle; child agent 8c261794 exited (exit 0)` when every
   * unread message is server-authored lifecycle mail; null when a peer's message is among them or
   * the summary would be too long (the generic wake then).
   */
  private lifecycleSummary(peer: Peer): string | null {
    const unread = peer.inbox.filter((m) => m.timestamp > peer.cursor);
    if (unread.length === 0 || unread.some((m) => !m.id.startsWith(LIFECYCLE_ID_PREFIX))) return null;
    const parts: string[] = [];
    for (const m of unread) {
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

  /** Lines still waiting for a session's idle (tests, diagnostics). */
  queuedFor(sessionId: string): readonly string[] {
    return this.queued.get(sessionId) ?? [];
  }

  dispose(): void {
    this.subscription.dispose();
    this.queued.clear();
  }

  private terminalOf(peer: Peer): SessionRecord | null {
    const record = this.opts.sessions.resolve(peer.tuic_session);
    return record && !record.exit ? record : null;
  }

  private enqueue(record: SessionRecord, line: string): void {
    let q = this.queued.get(record.session_id);
    if (!q) this.queued.set(record.session_id, (q = []));
    q.push(line);
    void this.flush(record);
  }

  /**
   * Types the oldest queued line if the recipient can take it now; submit's own checks (idle, empty
   * composer, no confident dialog, no claim) decide, under the writer lock, so nothing races it.
   */
  private async flush(record: SessionRecord): Promise<void> {
    const id = record.session_id;
    const q = this.queued.get(id);
    if (!q || q.length === 0 || this.injecting.has(id)) return;
    if (record.exit) {
      this.queued.delete(id);
      return;
    }
    const state = agentState(record);
    if (state !== 'idle' && state !== 'completed') return;
    this.injecting.add(id);
    try {
      const receipt = await submitCommand(this.opts.sessions, id, q[0]!, { timeoutMs: DeliveryConstants.INJECT_ACK_MS });
      // Written (acknowledged or not): retrying could type it twice; the inbox holds it either way.
      if (receipt.write_state !== 'not_started') q.shift();
      else this.opts.log.debug({ session_id: id, reason: receipt.reason }, 'mail injection deferred');
    } catch (err) {
      this.opts.log.warn({ session_id: id, err: String(err) }, 'mail injection failed; the message stays in the inbox');
      q.shift();
    } finally {
      this.injecting.delete(id);
      if (q.length === 0) this.queued.delete(id);
    }
  }
}
