/**
 * MCP protocol sessions (`Mcp-Session-Id`): per-client metadata, refreshed by every request that
 * presents the id, reaped after an hour of silence (REFERENCE §6.13, Appendix A). A reaped or
 * forgotten id is recreated silently when presented again: identity is resolved per call.
 */
import { toDisposable } from '../../shared/disposable.js';
import type { Disposable } from '../../shared/disposable.js';

export const McpSessionConstants = {
  /** Idle time after which a protocol session is forgotten. */
  TTL_MS: 3_600_000,
  /** How often the reaper looks. */
  SWEEP_INTERVAL_MS: 60_000,
} as const;

/** Field names follow the spec's McpSessionMeta. */
export interface McpSessionMeta {
  readonly id: string;
  last_activity_ms: number;
  client_name: string | null;
  /** clientInfo.name or User-Agent names claude or tuic-bridge. */
  is_claude_code: boolean;
  /** Grok (`grok-shell-*`) only accepts one `__` in a tool id: it gets the collapsed surface. */
  requires_meta_tools: boolean;
  has_sse_stream: boolean;
  /** The generation of the GET /mcp stream that owns has_sse_stream; 0 = none yet. */
  sse_generation: number;
  repo_path: string | null;
  /** The TUIC identity (`x-tuic-session`) bound at initialize. */
  tuic_session: string | null;
}

export type McpSessionInit = Partial<Pick<McpSessionMeta, 'client_name' | 'is_claude_code' | 'requires_meta_tools' | 'repo_path' | 'tuic_session'>>;

export interface McpSessionStoreOptions {
  ttlMs?: number;
  sweepIntervalMs?: number;
  now?: () => number;
  /** Runs after every sweep (the task registry reaps its own expired entries here). */
  onSweep?: (nowMs: number) => void;
}

export type SessionRemovalReason = 'deleted' | 'reaped';

export class McpSessionStore implements Disposable {
  private readonly sessions = new Map<string, McpSessionMeta>();
  private readonly sweepHooks = new Set<(nowMs: number) => void>();
  private readonly removalListeners = new Set<(meta: McpSessionMeta, reason: SessionRemovalReason) => void>();
  private readonly timer: NodeJS.Timeout;
  private readonly ttlMs: number;
  readonly now: () => number;

  constructor(opts: McpSessionStoreOptions = {}) {
    this.ttlMs = opts.ttlMs ?? McpSessionConstants.TTL_MS;
    this.now = opts.now ?? Date.now;
    if (opts.onSweep) this.sweepHooks.add(opts.onSweep);
    this.timer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? McpSessionConstants.SWEEP_INTERVAL_MS);
    // The listeners keep the process alive; the reaper must not.
    this.timer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): McpSessionMeta | undefined {
    return this.sessions.get(id);
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  values(): IterableIterator<McpSessionMeta> {
    return this.sessions.values();
  }

  /** Creates (or replaces) the meta for `id`; initialize uses it with the client's details. */
  create(id: string, init: McpSessionInit = {}): McpSessionMeta {
    const meta: McpSessionMeta = {
      id,
      last_activity_ms: this.now(),
      client_name: init.client_name ?? null,
      is_claude_code: init.is_claude_code ?? false,
      requires_meta_tools: init.requires_meta_tools ?? false,
      has_sse_stream: false,
      sse_generation: 0,
      repo_path: init.repo_path ?? null,
      tuic_session: init.tuic_session ?? null,
    };
    this.sessions.set(id, meta);
    return meta;
  }

  /** Refreshes a presented id, recreating a stale one (app restart, reaped) with empty meta. */
  touch(id: string): { meta: McpSessionMeta; recovered: boolean } {
    const meta = this.sessions.get(id);
    if (meta) {
      meta.last_activity_ms = this.now();
      return { meta, recovered: false };
    }
    return { meta: this.create(id), recovered: true };
  }

  delete(id: string): boolean {
    const meta = this.sessions.get(id);
    if (!meta) return false;
    this.sessions.delete(id);
    this.emitRemoved(meta, 'deleted');
    return true;
  }

  /** Removes every session idle for at least the TTL, then runs the sweep hooks. Returns the reaped ids. */
  sweep(nowMs = this.now()): string[] {
    const reaped: McpSessionMeta[] = [];
    for (const meta of this.sessions.values()) {
      if (nowMs - meta.last_activity_ms >= this.ttlMs) reaped.push(meta);
    }
    for (const meta of reaped) {
      this.sessions.delete(meta.id);
      this.emitRemoved(meta, 'reaped');
    }
    for (const hook of this.sweepHooks) {
      try {
        hook(nowMs);
      } catch {
        // A failing hook must not stop the reaper or the other hooks.
      }
    }
    return reaped.map((m) => m.id);
  }

  /** Adds a sweep hook after construction (the task registry is built after the store). */
  onSweep(hook: (nowMs: number) => void): Disposable {
    this.sweepHooks.add(hook);
    return toDisposable(() => this.sweepHooks.delete(hook));
  }

  /** Called when DELETE or the reaper removes a session (peer routing cleans up here). */
  onRemoved(listener: (meta: McpSessionMeta, reason: SessionRemovalReason) => void): Disposable {
    this.removalListeners.add(listener);
    return toDisposable(() => this.removalListeners.delete(listener));
  }

  dispose(): void {
    clearInterval(this.timer);
    this.sweepHooks.clear();
    this.removalListeners.clear();
  }

  private emitRemoved(meta: McpSessionMeta, reason: SessionRemovalReason): void {
    for (const listener of this.removalListeners) {
      try {
        listener(meta, reason);
      } catch {
        // Cleanup of one subsystem must not block another's.
      }
    }
  }
}
