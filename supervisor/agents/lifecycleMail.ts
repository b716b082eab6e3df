/**
 * Spawned children's lifecycle, told to their parent and their task: a `state_change` message from
 * the child (id `tuic-auto-…`, payload `{type:"state_change", state, session_id, exit_code?}`) when
 * its agent_state becomes idle, completed or awaiting_input, and when it exits; the task is
 * `input_required` while the child awaits input and `working` otherwise (its exit ends it, in
 * TaskRegistry).
 */
import { randomUUID } from 'node:crypto';

import type { Disposable } from '../../shared/disposable.js';
import type { EventBus } from '../events/eventBus.js';
import type { TaskRegistry } from './tasks.js';
import { exitStatus } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { PeerRegistry } from './peerRegistry.js';
import { LIFECYCLE_ID_PREFIX, type MailDelivery } from './mailDelivery.js';

/** Lifecycle events kept for a parent that has not registered yet. */
const PENDING_MAX = 32;

const REPORTED: ReadonlySet<string> = new Set(['idle', 'completed', 'awaiting_input']);

interface Child {
  tuic_session: string;
  parent: string | null;
  /** The spawning protocol session, while its caller has no identity: a later register links it. */
  pendingMcp: string | null;
  /** Events kept for that pending parent. */
  pending: Array<Record<string, unknown>>;
  task_id: string;
  last: string | null;
}

export class LifecycleMail implements Disposable {
  private readonly children = new Map<string, Child>();
  private readonly subscriptions: Disposable[];

  constructor(
    private readonly registry: PeerRegistry,
    private readonly tasks: TaskRegistry,
    private readonly mail: MailDelivery,
    bus: EventBus,
    sessions: SessionService,
  ) {
    this.subscriptions = [
      bus.on('session-state-changed', (_name, payload) => {
        const { session_id, state } = payload as { session_id: string; state: { agent_state?: string } };
        this.onState(session_id, state.agent_state ?? null);
      }),
      sessions.onLifecycle((event, record) => {
        if (event !== 'exit' || !record.exit) return;
        const child = this.children.get(record.session_id);
        if (!child) return;
        const code = exitStatus(record.exit);
        this.notify(record.session_id, child.parent, {
          type: 'state_change',
          state: 'exited',
          session_id: record.session_id,
          ...(code === null ? {} : { exit_code: code }),
        });
        // A child still waiting for its parent to register keeps its record (and its exit) until then.
        child.last = 'exited';
        if (child.parent !== null || child.pendingMcp === null) this.children.delete(record.session_id);
      }),
    ];
  }

  /** Starts following a spawned child; `pendingMcp` is the spawner's protocol session when it has no identity yet. */
  follow(sessionId: string, tuicSession: string, parent: string | null, taskId: string, pendingMcp: string | null = null): void {
    this.children.set(sessionId, {
      tuic_session: tuicSession,
      parent,
      pendingMcp: parent === null ? pendingMcp : null,
      pending: [],
      task_id: taskId,
      last: null,
    });
  }

  /**
   * The protocol session registered as `parent`: children it spawned before are linked to it and
   * the lifecycle mail kept for it is delivered, oldest first. Returns how many were linked.
   */
  link(mcpSessionId: string, parent: string): number {
    let linked = 0;
    for (const [sessionId, child] of this.children) {
      if (child.parent !== null || child.pendingMcp !== mcpSessionId) continue;
      child.parent = parent;
      child.pendingMcp = null;
      linked++;
      for (const payload of child.pending.splice(0)) this.notify(sessionId, parent, payload);
      if (this.exitedAlready(child)) this.children.delete(sessionId);
    }
    return linked;
  }

  /** Identities a live child names as its parent: they stay addressable (the reaper keeps them). */
  parents(): Set<string> {
    const out = new Set<string>();
    for (const c of this.children.values()) if (c.parent !== null) out.add(c.parent);
    return out;
  }

  /** Mails `payload` from the child to its parent, by the route the parent's state allows; kept while the parent is pending. */
  notify(sessionId: string, parent: string | null, payload: Record<string, unknown>): void {
    const child = this.children.get(sessionId);
    if (parent === null) {
      if (child?.pendingMcp && child.pending.length < PENDING_MAX) child.pending.push(payload);
      return;
    }
    const to = this.registry.get(parent);
    if (!to) return;
    const from = child?.tuic_session ?? sessionId;
    this.mail.send(
      { tuic_session: from, name: this.registry.get(from)?.name ?? 'agent' },
      to,
      JSON.stringify(payload),
      false,
      `${LIFECYCLE_ID_PREFIX}${randomUUID()}`,
    );
  }

  private exitedAlready(child: Child): boolean {
    return child.last === 'exited';
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.children.clear();
  }

  private onState(sessionId: string, state: string | null): void {
    const child = this.children.get(sessionId);
    // The exit is told from the session's final status (with its code), not from this state.
    if (!child || state === null || state === 'exited' || state === child.last) return;
    child.last = state;
    this.tasks.transition(child.task_id, state === 'awaiting_input' ? 'input_required' : 'working', {
      status_message: state === 'awaiting_input' ? 'agent awaits input' : `agent ${state}`,
    });
    if (REPORTED.has(state)) this.notify(sessionId, child.parent, { type: 'state_change', state, session_id: sessionId });
  }
}
