/**
 * Output watcher sets, one per client (a frontend: all its plugins share one set), at most
 * CLIENTS of them, the least recently posted evicted first. A post carries a `seq` that must grow:
 * an older or equal one (a request overtaken by a newer one) is not applied. Patterns are checked
 * here, where the answer's `rejected` is built; every accepted watcher of every client goes to the
 * pty host as one list whenever a set changes, and matching runs there, never on this loop.
 */
import { ApiError } from '../../shared/apiError.js';
import { compileWatcherPattern } from '../../shared/watcherPatterns.js';

export const WatcherLimits = {
  /** Client sets kept; a new client past it evicts the least recently posted. */
  CLIENTS: 8,
  WATCHERS_PER_CLIENT: 32,
  ID_CHARS: 128,
  /** Clients re-post every 30 s; a set not posted for this long is dropped (its frontend went away). */
  IDLE_MS: 90_000,
} as const;

export interface WatcherInput {
  id: string;
  pattern: string;
  flags?: string | undefined;
}

export interface QualifiedWatcher {
  /** `<client_id>/<watcher_id>`. */
  id: string;
  pattern: string;
  flags: string;
}

export interface ApplyResult {
  applied: boolean;
  /** Watchers not set: patterns that do not compile or cannot be matched in linear time, flags other than i/m/s. */
  rejected: string[];
  /** Why each rejected id was refused. */
  reasons: Record<string, string>;
}

interface ClientSet {
  seq: number;
  watchers: QualifiedWatcher[];
  /** When the client last posted (its heartbeat). */
  seenAt: number;
}

export class OutputWatcherRegistry {
  /** Insertion order is recency: a post moves its client to the end; the first is evicted. */
  private readonly clients = new Map<string, ClientSet>();

  constructor(
    private readonly publish: (all: QualifiedWatcher[]) => void,
    private readonly now: () => number = Date.now,
  ) {}

  apply(clientId: string, seq: number, watchers: readonly WatcherInput[]): ApplyResult {
    if (clientId.includes('/')) throw new ApiError('invalid_input', "client_id must not contain '/'", { extra: { field: 'client_id' } });
    const seen = new Set<string>();
    for (const w of watchers) {
      if (seen.has(w.id)) throw new ApiError('invalid_input', `duplicate watcher id '${w.id}'`, { extra: { field: 'watchers' } });
      seen.add(w.id);
    }
    const current = this.clients.get(clientId);
    if (current !== undefined) {
      // Posted again: the client is alive (a re-post is its heartbeat), whatever its seq.
      this.clients.delete(clientId);
      this.clients.set(clientId, current);
      current.seenAt = this.now();
      if (seq <= current.seq) return { applied: false, rejected: [], reasons: {} };
    }
    const accepted: QualifiedWatcher[] = [];
    const rejected: string[] = [];
    const reasons: Record<string, string> = {};
    for (const w of watchers) {
      const flags = w.flags ?? '';
      const compiled = compileWatcherPattern(w.pattern, flags);
      if (typeof compiled === 'string') {
        rejected.push(w.id);
        reasons[w.id] = compiled;
      } else accepted.push({ id: `${clientId}/${w.id}`, pattern: w.pattern, flags });
    }
    this.clients.set(clientId, { seq, watchers: accepted, seenAt: this.now() });
    if (this.clients.size > WatcherLimits.CLIENTS) this.clients.delete(this.clients.keys().next().value!);
    this.publish(this.all());
    return { applied: true, rejected, reasons };
  }

  /** Drops the sets of clients that stopped posting (run every 30 s by the feature); true when one went. */
  expire(): boolean {
    const before = this.clients.size;
    const cutoff = this.now() - WatcherLimits.IDLE_MS;
    // Oldest first: the first client seen since the cutoff ends the sweep.
    for (const [id, set] of this.clients) {
      if (set.seenAt >= cutoff) break;
      this.clients.delete(id);
    }
    if (this.clients.size === before) return false;
    this.publish(this.all());
    return true;
  }

  /** Every accepted watcher, in client recency order. */
  all(): QualifiedWatcher[] {
    return [...this.clients.values()].flatMap((c) => c.watchers);
  }

  clientIds(): string[] {
    return [...this.clients.keys()];
  }
}

/** The client a qualified watcher id belongs to. */
export function clientOf(qualifiedId: string): string {
  const slash = qualifiedId.indexOf('/');
  return slash < 0 ? qualifiedId : qualifiedId.slice(0, slash);
}
