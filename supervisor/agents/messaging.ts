/**
 * The agent-messaging rules: who an identity belongs to (register, with its takeover guard and its
 * repairs), the peer directory, sending (inbox first, then the route the recipient's state allows:
 * mailDelivery.ts), inbox reads and waits on server-side cursors in logical ms, and which protocol
 * sessions and identities are bound or retired as MCP clients come and go. The `agent` tool
 * (mcp/tools/agent.ts) checks its arguments, calls these and shapes the answers.
 */
import { randomUUID } from 'node:crypto';

import { ApiError } from '../../shared/apiError.js';
import type { Logger } from '../log.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { LifecycleMail } from './lifecycleMail.js';
import type { DeliveryReceipt, MailDelivery } from './mailDelivery.js';
import { AgentConstants, type AgentMessage, type Peer, type PeerRegistry } from './peerRegistry.js';
import type { AgentCaller, ProtocolSessionFacts } from './ports.js';

export const NOT_REGISTERED = 'You are not registered. Register first with agent action=register';

export interface RegisterRequest {
  /** The identity (canonical UUID) to register as; absent: the caller's own, or a new one. */
  tuicSession?: string;
  name?: string;
  project?: string;
  /** true declares the orchestrator role, false drops it; absent keeps it. */
  orchestrator?: boolean;
  /** An old identity whose mail moves to this one. */
  replaces?: string;
}

export interface Registration {
  peer: Peer;
  /** The identity this registration superseded: the invented one it repaired, or `replaces`. */
  supersededIdentity?: string;
  /** Messages moved from the superseded identity. */
  mailMigrated?: number;
  /** Messages left with a replaced identity that still owns a live terminal. */
  mailStranded?: number;
  identityWarning?: string;
  /** Children this protocol session spawned before it had an identity, now linked to it. */
  linkedChildren: number;
  /** The identity owns a live terminal of ours. */
  terminal: boolean;
  /** How mail wakes it: typed into its managed agent's terminal, or not at all (it polls or waits). */
  mailWake: 'managed_pty_lifecycle' | 'none';
}

export interface PeerEntry {
  tuic_session: string;
  name: string;
  orchestrator: boolean;
  alias?: string;
  session_id?: string;
  project?: string;
}

export interface Sent {
  message: AgentMessage;
  receipt: DeliveryReceipt;
  /** The sender addressed itself. */
  toSelf: boolean;
}

export interface InboxPage {
  messages: AgentMessage[];
  hasMore: boolean;
  /** The cursor to pass back as `since`. */
  nextSince: number;
  /** Messages evicted unread since the last read (reported once). */
  missed: number;
}

export interface WaitOutcome {
  messages: AgentMessage[];
  nextSince: number;
}

export interface AgentMessagingOptions {
  peers: PeerRegistry;
  sessions: SessionService;
  mail: MailDelivery;
  lifecycle: LifecycleMail;
  /** The MCP side's answers about protocol sessions (mcp/channels.ts). */
  protocolSessions: ProtocolSessionFacts;
  log: Logger;
}

export class AgentMessaging {
  private readonly peers: PeerRegistry;
  private readonly sessions: SessionService;
  /** One takeover warning per (identity, claimant) pair. */
  private readonly warned = new Set<string>();

  constructor(private readonly opts: AgentMessagingOptions) {
    this.peers = opts.peers;
    this.sessions = opts.sessions;
  }

  /** The caller's registered identity, if it has one. */
  identityOf(caller: AgentCaller): Peer | undefined {
    return this.peers.ofCaller(caller);
  }

  /**
   * Binds the caller's protocol session to an identity: the one it names, else the one it is bound
   * to or asserted, else a new one. A live owner is never taken over by an unrouted caller; an
   * identity backed by a terminal outranks one that is not.
   */
  register(caller: AgentCaller, req: RegisterRequest): Registration {
    const mcp = caller.mcpSessionId;
    if (mcp === null) {
      throw new ApiError(
        'invalid_input',
        'Registration needs an MCP protocol session (Mcp-Session-Id). Run `initialize` first, then call agent action=register.',
      );
    }
    const { peers } = this;
    const bound = peers.identityOf(mcp) ?? caller.tuicSession;
    const out: Omit<Registration, 'peer' | 'linkedChildren' | 'terminal' | 'mailWake'> = {};
    let target = req.tuicSession ?? bound ?? null;
    let generated = false;
    if (target === null) {
      // A headerless caller: an identity of its own, stable for this protocol session.
      target = randomUUID();
      generated = true;
    }
    if (bound !== null && target !== bound) {
      // Ranked, not compared: an identity backed by a terminal outranks one that is not.
      const boundLive = this.hasTerminal(bound);
      const targetLive = this.hasTerminal(target);
      if (boundLive && !targetLive)
        throw new ApiError(
          'conflict',
          `This MCP session is bound to identity ${bound}, which owns a live terminal; register with tuic_session=${bound} (or omit it)`,
        );
      if (!targetLive) throw new ApiError('conflict', 'This MCP session is already bound to a different peer identity');
    }
    const existing = peers.get(target);
    if (existing && !existing.routes.includes(mcp) && caller.tuicSession !== target && this.opts.protocolSessions.assertedIdentity(mcp) !== target) {
      // Another protocol session owns it: a live owner is never taken over by an unrouted caller.
      const liveOwner = existing.routes.some((r) => this.opts.protocolSessions.isLive(r));
      if (liveOwner) {
        const pair = `${target} ${mcp}`;
        if (!this.warned.has(pair)) {
          this.warned.add(pair);
          this.opts.log.warn({ tuic_session: target, claimant: mcp }, 'agent register refused: identity held by another active MCP session');
        }
        throw new ApiError('conflict', `Identity ${target} is already registered to another active MCP session`);
      }
      for (const stale of [...existing.routes]) peers.unroute(stale);
    }
    const previous = bound !== null && bound !== target ? peers.get(bound) : undefined;
    const { peer } = peers.bind(target, mcp, { generated, name: req.name ?? this.sessions.resolve(target)?.display_name ?? 'agent' });
    if (previous) {
      // Repair: the invented identity's mail follows the real one, and the invented one retires.
      out.supersededIdentity = previous.tuic_session;
      out.mailMigrated = peers.migrate(previous, peer);
      if (previous.routes.length === 0 && !this.hasTerminal(previous.tuic_session)) peers.remove(previous.tuic_session);
    }
    const { replaces } = req;
    if (replaces !== undefined && replaces !== target) {
      const old = peers.get(replaces);
      out.supersededIdentity = replaces;
      if (!old) out.mailMigrated = 0;
      else if (this.hasTerminal(replaces)) {
        // A peer with a terminal is reachable: taking its inbox would strand a working agent.
        out.mailMigrated = 0;
        out.mailStranded = old.inbox.length;
        out.identityWarning = `Identity ${replaces} still owns a live terminal; its mail stays with it`;
      } else {
        out.mailMigrated = peers.migrate(old, peer);
        peers.remove(replaces);
      }
    }
    if (req.name !== undefined) peer.name = req.name.trim();
    if (req.project !== undefined) peer.project = req.project;
    if (req.orchestrator !== undefined) peer.orchestrator = req.orchestrator;
    const record = this.sessions.resolve(peer.tuic_session);
    const terminal = record !== undefined && !record.exit;
    // Children this protocol session spawned before it had an identity become this peer's.
    const linkedChildren = this.opts.lifecycle.link(mcp, peer.tuic_session);
    return { ...out, peer, linkedChildren, terminal, mailWake: terminal && record.agent_type !== null ? 'managed_pty_lifecycle' : 'none' };
  }

  /** Registered peers, optionally only those of one project, with their live terminal when they have one. */
  listPeers(project?: string): PeerEntry[] {
    const out: PeerEntry[] = [];
    for (const p of this.peers.list()) {
      if (project !== undefined && p.project !== project) continue;
      const entry: PeerEntry = { tuic_session: p.tuic_session, name: p.name, orchestrator: p.orchestrator };
      const record = this.sessions.resolve(p.tuic_session);
      if (record && !record.exit) {
        if (record.alias) entry.alias = record.alias;
        entry.session_id = record.session_id;
      }
      if (p.project !== null) entry.project = p.project;
      out.push(entry);
    }
    return out;
  }

  /** A peer by tuic_session, the session id of its terminal, or its alias. */
  recipient(to: string): Peer | undefined {
    const direct = this.peers.get(to);
    if (direct) return direct;
    const record = this.sessions.resolve(to);
    return record ? this.peers.get(record.tuic_session) : undefined;
  }

  /** Stores the message in the recipient's inbox, then delivers it by the route its state allows. */
  send(caller: AgentCaller, to: string, content: string, urgent: boolean): Sent {
    const bytes = Buffer.byteLength(content);
    if (bytes > AgentConstants.MESSAGE_MAX_BYTES)
      throw new ApiError('payload_too_large', `Message is ${bytes} bytes; the limit is ${AgentConstants.MESSAGE_MAX_BYTES} (64 KiB)`);
    const from = this.peers.ofCaller(caller);
    if (!from) throw new ApiError('forbidden', NOT_REGISTERED);
    const target = this.recipient(to);
    if (!target) throw new ApiError('not_found', `Recipient '${to}' is not registered. Use list_peers to find valid targets.`);
    const { message, receipt } = this.opts.mail.send(from, target, content, urgent);
    return { message, receipt, toSelf: target.tuic_session === from.tuic_session };
  }

  /** Messages after `since` (where the caller last read, when absent); the read acknowledges its unread group. */
  inbox(caller: AgentCaller, since: number | undefined, limit: number): InboxPage {
    const peer = this.peers.ofCaller(caller);
    if (!peer) throw new ApiError('forbidden', NOT_REGISTERED);
    const { messages, has_more } = this.peers.read(peer, since, limit);
    const nextSince = this.observe(peer, since, messages);
    const missed = peer.missed;
    peer.missed = 0;
    return { messages, hasMore: has_more, nextSince, missed };
  }

  /** Blocks until mail after `since` arrives, the timeout passes or `signal` aborts; never polls. */
  async wait(caller: AgentCaller, since: number | undefined, timeoutMs: number, signal: AbortSignal): Promise<WaitOutcome> {
    const peer = this.peers.ofCaller(caller);
    if (!peer) throw new ApiError('forbidden', 'agent action=wait needs a registered identity. Register first with agent action=register');
    const fresh = (): AgentMessage[] => this.peers.read(peer, since, AgentConstants.INBOX_CAPACITY).messages;
    let messages = fresh();
    if (messages.length === 0) {
      // Subscribe, then check again: a message that landed in between is not missed.
      await new Promise<void>((resolve) => {
        let unsubscribe = (): void => {};
        const done = (): void => {
          clearTimeout(timer);
          unsubscribe();
          signal.removeEventListener('abort', done);
          resolve();
        };
        unsubscribe = this.peers.onMail(peer.tuic_session, done);
        const timer = setTimeout(done, timeoutMs);
        signal.addEventListener('abort', done, { once: true });
        if (fresh().length > 0) done();
      });
      messages = fresh();
    }
    return { messages, nextSince: this.observe(peer, since, messages, messages.length > 0) };
  }

  /** An initialize asserting an identity ($TUIC_SESSION) registers that peer, its name kept if known. */
  protocolSessionStarted(mcpSessionId: string, assertedIdentity: string | null): void {
    if (assertedIdentity === null) return;
    this.peers.bind(assertedIdentity, mcpSessionId, { name: this.sessions.resolve(assertedIdentity)?.display_name ?? 'agent' });
  }

  /** The protocol session is gone (deleted, reaped, evicted): it no longer routes to an identity. */
  protocolSessionEnded(mcpSessionId: string): void {
    this.peers.unroute(mcpSessionId);
  }

  /** Retires identities nobody can address: no route, no live terminal, and no live child naming them as parent. */
  retireUnreachable(): void {
    const parents = this.opts.lifecycle.parents();
    for (const peer of this.peers.list()) {
      const terminal = this.sessions.resolve(peer.tuic_session);
      if (peer.routes.length === 0 && (terminal === undefined || terminal.exit) && !parents.has(peer.tuic_session)) this.peers.remove(peer.tuic_session);
    }
  }

  private hasTerminal(tuicSession: string): boolean {
    const r = this.sessions.resolve(tuicSession);
    return r !== undefined && !r.exit;
  }

  /** A read: messages after the cursor; a read that did not name `since` moves the stored cursor. */
  private observe(peer: Peer, since: number | undefined, messages: AgentMessage[], acknowledges = true): number {
    const last = messages.at(-1)?.timestamp;
    if (since === undefined && last !== undefined) peer.cursor = Math.max(peer.cursor, last);
    // The read acknowledges the unread group with its snapshot, an empty one too: its wake budget starts over.
    if (acknowledges) this.opts.mail.acknowledged(peer);
    return last ?? (since === undefined ? peer.cursor : Math.max(since, peer.cursor));
  }
}
