/**
 * Peer identities and their mail (the `agent` tool's messaging): who is registered, which MCP
 * protocol sessions route to each identity, and each identity's inbox, the authoritative store
 * every delivery path writes first. Inboxes are FIFO of AGENT_INBOX_CAPACITY (evictions counted as
 * missed), ordered by logical milliseconds (a clock that never repeats a value, so
 * equal-millisecond bursts keep their order), read from a cursor kept per identity. Waits sleep on
 * the inbox, they never poll.
 */
import { randomUUID } from 'node:crypto';

import type { EventBus } from '../events/eventBus.js';
import type { AgentCaller } from './ports.js';

export const AgentConstants = {
  /** AGENT_INBOX_CAPACITY. */
  INBOX_CAPACITY: 100,
  /** AGENT_MESSAGE_MAX_BYTES. */
  MESSAGE_MAX_BYTES: 64 * 1024,
  /** inbox `limit`: default and ceiling. */
  INBOX_DEFAULT_LIMIT: 100,
  NAME_MAX_CHARS: 80,
  PROJECT_MAX_CHARS: 4096,
} as const;

export interface AgentMessage {
  id: string;
  from_tuic_session: string;
  from_name: string;
  content: string;
  /** Logical unix ms: unique and increasing per registry. */
  timestamp: number;
  urgency?: 'urgent';
}

export interface Peer {
  readonly tuic_session: string;
  name: string;
  project: string | null;
  orchestrator: boolean;
  /** The server made the UUID up for a headerless caller (no PTY behind it). */
  readonly generated: boolean;
  /** Protocol sessions that route to this identity; the first is the delivery owner. */
  readonly routes: string[];
  readonly inbox: AgentMessage[];
  /** Messages evicted unread from the full inbox since the last inbox read. */
  missed: number;
  /** Where `inbox`/`wait` without `since` resume (logical ms of the last message handed out). */
  cursor: number;
  readonly registered_ms: number;
}

export type Waiter = () => void;

export class PeerRegistry {
  private readonly peers = new Map<string, Peer>();
  /** Protocol session → the identity it routes to. */
  private readonly routeOf = new Map<string, string>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private lastTimestamp = 0;

  constructor(
    private readonly bus: EventBus,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.peers.size;
  }

  get(tuicSession: string): Peer | undefined {
    return this.peers.get(tuicSession);
  }

  list(): Peer[] {
    return [...this.peers.values()];
  }

  /** The identity a protocol session routes to, if any. */
  identityOf(mcpSessionId: string | null): string | null {
    return mcpSessionId === null ? null : (this.routeOf.get(mcpSessionId) ?? null);
  }

  /** The caller's identity: the one its protocol session routes to, else the one its initialize asserted. */
  ofCaller(caller: AgentCaller): Peer | undefined {
    const id = this.identityOf(caller.mcpSessionId) ?? caller.tuicSession;
    return id === null ? undefined : this.peers.get(id);
  }

  /**
   * Creates the identity (or finds it) and routes `mcpSessionId` to it. A session already routed
   * elsewhere is moved. Returns the peer and whether it was created.
   */
  bind(tuicSession: string, mcpSessionId: string | null, init: { name?: string; generated?: boolean } = {}): { peer: Peer; created: boolean } {
    let peer = this.peers.get(tuicSession);
    const created = peer === undefined;
    if (peer === undefined) {
      peer = {
        tuic_session: tuicSession,
        name: init.name ?? 'agent',
        project: null,
        orchestrator: false,
        generated: init.generated ?? false,
        routes: [],
        inbox: [],
        missed: 0,
        cursor: 0,
        registered_ms: this.now(),
      };
      this.peers.set(tuicSession, peer);
      this.bus.publish('peer-registered', { tuic_session: tuicSession, name: peer.name });
    }
    if (mcpSessionId !== null) {
      const previous = this.routeOf.get(mcpSessionId);
      if (previous !== undefined && previous !== tuicSession) this.unroute(mcpSessionId);
      if (!peer.routes.includes(mcpSessionId)) peer.routes.push(mcpSessionId);
      this.routeOf.set(mcpSessionId, tuicSession);
    }
    return { peer, created };
  }

  /** The protocol session is gone (deleted or reaped): it no longer routes anywhere. */
  unroute(mcpSessionId: string): void {
    const id = this.routeOf.get(mcpSessionId);
    if (id === undefined) return;
    this.routeOf.delete(mcpSessionId);
    const peer = this.peers.get(id);
    if (!peer) return;
    const i = peer.routes.indexOf(mcpSessionId);
    if (i >= 0) peer.routes.splice(i, 1);
  }

  /** Drops an identity nobody can address any more (reaper); its mail goes with it. */
  remove(tuicSession: string): void {
    const peer = this.peers.get(tuicSession);
    if (!peer) return;
    for (const route of peer.routes) this.routeOf.delete(route);
    this.peers.delete(tuicSession);
    this.wake(tuicSession);
    this.waiters.delete(tuicSession);
    this.bus.publish('peer-unregistered', { tuic_session: tuicSession });
  }

  /** Moves `from`'s mail into `to` (register replaces=…), oldest first; returns how many moved. */
  migrate(from: Peer, to: Peer): number {
    const moved = from.inbox.splice(0);
    for (const m of moved) this.append(to, m);
    if (moved.length > 0) this.wake(to.tuic_session);
    return moved.length;
  }

  /** A fresh logical timestamp: wall-clock ms, but always past the previous one. */
  nextTimestamp(): number {
    this.lastTimestamp = Math.max(this.now(), this.lastTimestamp + 1);
    return this.lastTimestamp;
  }

  /** Stores a message in `to`'s inbox (evicting the oldest past capacity) and wakes its waiters. */
  deliver(to: Peer, from: { tuic_session: string; name: string }, content: string, opts: { urgent?: boolean; id?: string } = {}): AgentMessage {
    const message: AgentMessage = {
      id: opts.id ?? randomUUID(),
      from_tuic_session: from.tuic_session,
      from_name: from.name,
      content,
      timestamp: this.nextTimestamp(),
    };
    if (opts.urgent) message.urgency = 'urgent';
    this.append(to, message);
    this.wake(to.tuic_session);
    return message;
  }

  /** Messages after `since` (the stored cursor when absent), oldest first, at most `limit`. */
  read(peer: Peer, since: number | undefined, limit: number): { messages: AgentMessage[]; has_more: boolean; from: number } {
    const from = since ?? peer.cursor;
    const fresh = peer.inbox.filter((m) => m.timestamp > from);
    return { messages: fresh.slice(0, limit), has_more: fresh.length > limit, from };
  }

  /** Whether someone is waiting on this identity's mail right now (delivery path `waiter`). */
  hasWaiter(tuicSession: string): boolean {
    return (this.waiters.get(tuicSession)?.size ?? 0) > 0;
  }

  /** Calls `fn` on the next message for the identity (once); the returned function unsubscribes. */
  onMail(tuicSession: string, fn: Waiter): () => void {
    let set = this.waiters.get(tuicSession);
    if (!set) this.waiters.set(tuicSession, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.waiters.get(tuicSession) === set) this.waiters.delete(tuicSession);
    };
  }

  private append(peer: Peer, message: AgentMessage): void {
    peer.inbox.push(message);
    while (peer.inbox.length > AgentConstants.INBOX_CAPACITY) {
      peer.inbox.shift();
      peer.missed++;
    }
  }

  private wake(tuicSession: string): void {
    const set = this.waiters.get(tuicSession);
    if (!set) return;
    for (const fn of [...set]) fn();
  }
}
