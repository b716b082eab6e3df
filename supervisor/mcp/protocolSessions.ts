/**
 * MCP protocol sessions (`Mcp-Session-Id`): per-client metadata, refreshed by every request that
 * presents the id, reaped after an hour of silence (McpSessionConstants.TTL_MS). A reaped or
 * forgotten id is recreated silently when presented again: identity is resolved per call.
 *
 * The store is bounded (config `services.server.max_mcp_sessions`, read on every insert): past the
 * cap the least recently used idle session is evicted, so a flood of initialize calls costs at most
 * the cap, not one session per call for the hour the reaper waits. Recency is a linked list beside
 * the id map, so touch, lookup and eviction are O(1). (Not the Map's own insertion order: finding
 * its oldest entry takes a fresh iterator, which in V8 walks every deleted slot still in the
 * table — measured here at 20 µs per eviction with 10,000 sessions and 150 µs with 100,000.)
 */
import { toDisposable } from '../../shared/disposable.js';
import type { McpLogLevel } from '../../shared/protocol/mcpHub.js';
import type { Disposable } from '../../shared/disposable.js';

export const McpSessionConstants = {
  /** Idle time after which a protocol session is forgotten. */
  TTL_MS: 3_600_000,
  /**
   * Busy sessions (open GET stream, call in flight) one insert may step over looking for an idle
   * one to evict; each is moved to the recent end, so the next insert starts past them. Past the
   * limit the insert goes through over the cap. Only busy sessions cause that, and each holds an
   * open connection, so the overshoot is bounded by open connections (at most about one idle
   * session per 64 busy ones, plus the insert); later inserts and closed streams work it off.
   */
  EVICTION_SCAN_LIMIT: 64,
  /** How often the reaper looks. */
  SWEEP_INTERVAL_MS: 60_000,
} as const;

/** What tuicd keeps about one protocol session, refreshed by each of its requests. */
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
  /** The revision initialize negotiated; null for an id recreated without an initialize. */
  protocol_version: string | null;
  /** initialize declared `capabilities.elicitation.url` (MCP 2025-11-25): it can be sent to a URL. */
  url_elicitation: boolean;
  /** initialize declared `capabilities.sampling`: an upstream's sampling/createMessage may be sent to it. */
  sampling: boolean;
  /** initialize declared `capabilities.elicitation` (form mode, the default when no mode is named). */
  form_elicitation: boolean;
  /** initialize declared `capabilities.roots`: an upstream's roots/list may be sent to it. */
  roots: boolean;
  /** The level logging/setLevel asked for; null = it never asked, so it gets no upstream log messages. */
  log_level: McpLogLevel | null;
  /** Requests of this session being served right now (a busy session is never evicted). */
  in_flight: number;
}

export type McpSessionInit = Partial<
  Pick<
    McpSessionMeta,
    | 'client_name'
    | 'is_claude_code'
    | 'requires_meta_tools'
    | 'repo_path'
    | 'tuic_session'
    | 'protocol_version'
    | 'url_elicitation'
    | 'sampling'
    | 'form_elicitation'
    | 'roots'
  >
>;

export interface McpSessionStoreOptions {
  ttlMs?: number;
  sweepIntervalMs?: number;
  now?: () => number;
  /** Runs after every sweep (the task registry reaps its own expired entries here). */
  onSweep?: (nowMs: number) => void;
  /** The cap, read on every insert so a config change applies at once; absent = unbounded. */
  maxSessions?: () => number;
}

/** `evicted`: pushed out by the cap as the least recently used idle session. */
export type SessionRemovalReason = 'deleted' | 'reaped' | 'evicted';

/** Neither an open GET stream nor a request in flight: the kind of session the cap may evict. */
export function isIdle(meta: McpSessionMeta): boolean {
  return !meta.has_sse_stream && meta.in_flight === 0;
}

/** A session in the recency list. */
interface Entry {
  readonly meta: McpSessionMeta;
  older: Entry | null;
  newer: Entry | null;
}

export class McpSessionStore implements Disposable {
  private readonly sessions = new Map<string, Entry>();
  /** Least and most recently used ends of the recency list. */
  private oldest: Entry | null = null;
  private newest: Entry | null = null;
  private readonly sweepHooks = new Set<(nowMs: number) => void>();
  private readonly removalListeners = new Set<(meta: McpSessionMeta, reason: SessionRemovalReason) => void>();
  private readonly timer: NodeJS.Timeout;
  private readonly ttlMs: number;
  private readonly maxSessions: (() => number) | undefined;
  readonly now: () => number;

  constructor(opts: McpSessionStoreOptions = {}) {
    this.ttlMs = opts.ttlMs ?? McpSessionConstants.TTL_MS;
    this.maxSessions = opts.maxSessions;
    this.now = opts.now ?? Date.now;
    if (opts.onSweep) this.sweepHooks.add(opts.onSweep);
    this.timer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? McpSessionConstants.SWEEP_INTERVAL_MS);
    // The listeners keep the process alive; the reaper must not.
    this.timer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** A lookup; it does not count as use. */
  get(id: string): McpSessionMeta | undefined {
    return this.sessions.get(id)?.meta;
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  /** Least recently used first. */
  *values(): IterableIterator<McpSessionMeta> {
    for (let e = this.oldest; e !== null; ) {
      // Read on before yielding: the caller may delete what it was given.
      const next: Entry | null = e.newer;
      yield e.meta;
      e = next;
    }
  }

  /**
   * Creates (or replaces) the meta for `id`, as the most recently used, then enforces the cap;
   * initialize uses it with the client's details.
   */
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
      protocol_version: init.protocol_version ?? null,
      url_elicitation: init.url_elicitation ?? false,
      sampling: init.sampling ?? false,
      form_elicitation: init.form_elicitation ?? false,
      roots: init.roots ?? false,
      log_level: null,
      in_flight: 0,
    };
    const replaced = this.sessions.get(id);
    if (replaced) this.unlink(replaced);
    const entry: Entry = { meta, older: null, newer: null };
    this.sessions.set(id, entry);
    this.link(entry);
    this.enforceCap(entry);
    return meta;
  }

  /** Refreshes a presented id (now the most recently used), recreating a stale one (app restart, reaped, evicted) with empty meta. */
  touch(id: string): { meta: McpSessionMeta; recovered: boolean } {
    const entry = this.sessions.get(id);
    if (entry) {
      entry.meta.last_activity_ms = this.now();
      this.unlink(entry);
      this.link(entry);
      return { meta: entry.meta, recovered: false };
    }
    return { meta: this.create(id), recovered: true };
  }

  delete(id: string): boolean {
    const entry = this.sessions.get(id);
    if (!entry) return false;
    this.remove(entry);
    this.emitRemoved(entry.meta, 'deleted');
    return true;
  }

  /** Removes every session idle for at least the TTL, then runs the sweep hooks. Returns the reaped ids. */
  sweep(nowMs = this.now()): string[] {
    // Every entry is looked at: busy sessions the cap stepped over sit at the recent end with old timestamps.
    const reaped: Entry[] = [];
    for (const entry of this.sessions.values()) {
      if (nowMs - entry.meta.last_activity_ms >= this.ttlMs) reaped.push(entry);
    }
    for (const entry of reaped) {
      this.remove(entry);
      this.emitRemoved(entry.meta, 'reaped');
    }
    for (const hook of this.sweepHooks) {
      try {
        hook(nowMs);
      } catch {
        // A failing hook must not stop the reaper or the other hooks.
      }
    }
    return reaped.map((e) => e.meta.id);
  }

  /**
   * Evicts least recently used idle sessions while over the cap. `inserted` (the session just
   * created) is never the one evicted: it is the caller's. Busy sessions met on the way move to
   * the recent end, at most EVICTION_SCAN_LIMIT of them per insert.
   */
  private enforceCap(inserted: Entry): void {
    if (this.maxSessions === undefined) return;
    const cap = this.maxSessions();
    let stepped = 0;
    while (this.sessions.size > cap) {
      const oldest = this.oldest!;
      if (oldest === inserted) return;
      if (isIdle(oldest.meta)) {
        this.remove(oldest);
        this.emitRemoved(oldest.meta, 'evicted');
        continue;
      }
      if (++stepped > McpSessionConstants.EVICTION_SCAN_LIMIT) return;
      this.unlink(oldest);
      this.link(oldest);
    }
  }

  private remove(entry: Entry): void {
    this.sessions.delete(entry.meta.id);
    this.unlink(entry);
  }

  /** Appends at the most recently used end. */
  private link(entry: Entry): void {
    entry.older = this.newest;
    entry.newer = null;
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
  }

  private unlink(entry: Entry): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = null;
    entry.newer = null;
  }

  /** Adds a sweep hook after construction (the task registry is built after the store). */
  onSweep(hook: (nowMs: number) => void): Disposable {
    this.sweepHooks.add(hook);
    return toDisposable(() => this.sweepHooks.delete(hook));
  }

  /** Called when DELETE, the reaper or the cap removes a session (peer routing cleans up here). */
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
