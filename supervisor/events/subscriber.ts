/**
 * One bus subscriber: a bounded queue of pre-serialized events that is coalesced into one write per
 * tick, held while the transport reports backpressure, and replaced by `lagged` when it overflows.
 */

import type { Disposable } from '../../shared/disposable.js';

/**
 * Events a subscriber may hold before it is declared lagged: 256, the capacity of TUICommander's own
 * event broadcast, so a client lags here exactly when it would have lagged there.
 */
export const SUBSCRIBER_QUEUE_MAX_EVENTS = 256;

/**
 * Bytes a subscriber may hold before it is declared lagged; it bounds large events (a `ui-tab` with
 * its HTML) where the count cap would not. Queued Buffers are shared by all subscribers, but a
 * flushed chunk (at most this size) is copied into that socket's uWS buffer, so this is roughly what
 * each stalled client can pin on its own: 100 stalled clients ≈ 100 MiB in the worst case.
 */
export const SUBSCRIBER_QUEUE_MAX_BYTES = 1024 * 1024;

/**
 * A healthy subscriber whose queue reaches this many bytes is written at once instead of at the end
 * of the tick: one write larger than a socket send buffer gains nothing from more coalescing, and a
 * synchronous burst must not overflow a client that could have kept up.
 */
export const FLUSH_EARLY_BYTES = 64 * 1024;

/** Same as FLUSH_EARLY_BYTES for many small events: half the count cap leaves room for a burst. */
export const FLUSH_EARLY_EVENTS = SUBSCRIBER_QUEUE_MAX_EVENTS / 2;

/** Limits a subscriber enforces; `queueLimits()` derives them from the caps. */
export interface QueueLimits {
  maxEvents: number;
  maxBytes: number;
  flushEarlyEvents: number;
  flushEarlyBytes: number;
}

/** Early-flush thresholds stay at or below half of each cap, so a smaller cap keeps the burst headroom. */
export function queueLimits(maxEvents = SUBSCRIBER_QUEUE_MAX_EVENTS, maxBytes = SUBSCRIBER_QUEUE_MAX_BYTES): QueueLimits {
  return {
    maxEvents,
    maxBytes,
    flushEarlyEvents: Math.max(1, Math.min(FLUSH_EARLY_EVENTS, Math.floor(maxEvents / 2))),
    flushEarlyBytes: Math.max(1, Math.min(FLUSH_EARLY_BYTES, Math.floor(maxBytes / 2))),
  };
}

/** Which event names a subscriber receives: `null` = all, empty set = none. */
export type EventFilter = ReadonlySet<string> | null;

/** The transport behind a subscriber (an SSE response, or a test double). */
export interface EventSink {
  /**
   * Hands one coalesced chunk to the transport. Returns false when the transport had to buffer it
   * (backpressure): the bus then holds further events until `Subscription.drain()` is called.
   */
  write(chunk: Uint8Array): boolean;
  /** Ends the transport; called when the bus is disposed. */
  close?(): void;
}

/** What `EventBus.subscribe` hands back. */
export interface Subscription extends Disposable {
  readonly id: number;
  /** True between a write that reported backpressure and the next `drain()`. */
  readonly isBlocked: boolean;
  /** Events (or a lagged notice) waiting to be written. */
  readonly hasPending: boolean;
  /** Events dropped for this subscriber over its lifetime. */
  readonly missedTotal: number;
  readonly isDisposed: boolean;
  /** Replaces the filter; takes effect for the next publish (queued events stay queued). */
  setFilter(filter: EventFilter): void;
  /**
   * The transport calls this when it is writable again. Writes everything held as one chunk, or
   * `idleBytes` when nothing is held (uWS only pushes out its own buffer when the app writes).
   * Returns the transport's write result (true when nothing was written).
   */
  drain(idleBytes?: Uint8Array): boolean;
  /** Writes non-event bytes (an SSE comment) unless the subscriber is blocked: a stalled socket needs no keep-alive. */
  keepAlive(bytes: Uint8Array): void;
}

/** Counters the bus aggregates over all subscribers; tests and benchmarks read them. */
export interface DropCounters {
  droppedEvents: number;
  laggedNotices: number;
}

/** The `event: lagged` notice; it carries no id so a client's Last-Event-ID stays on a real event. */
function laggedBytes(missed: number): Buffer {
  return Buffer.from(`event: lagged\ndata: {"missed":${missed}}\n\n`);
}

/** Internal state behind a `Subscription`; the bus owns the instances. */
export class Subscriber implements Subscription {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  /** Events dropped since the last lagged notice was written; > 0 means a notice is pending. */
  private missedPending = 0;
  private missed = 0;
  private blocked = false;
  private disposed = false;
  private filter: EventFilter;

  constructor(
    readonly id: number,
    filter: EventFilter,
    private readonly sink: EventSink,
    private readonly limits: QueueLimits,
    private readonly counters: DropCounters,
    private readonly onDispose: (sub: Subscriber) => void,
  ) {
    this.filter = copyFilter(filter);
  }

  get isBlocked(): boolean {
    return this.blocked;
  }

  get hasPending(): boolean {
    return this.queue.length > 0 || this.missedPending > 0;
  }

  get missedTotal(): number {
    return this.missed;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  accepts(name: string): boolean {
    return this.filter === null || this.filter.has(name);
  }

  setFilter(filter: EventFilter): void {
    this.filter = copyFilter(filter);
  }

  /**
   * Queues one serialized event. Returns true when the caller should flush this subscriber now
   * (it is writable and past the early-flush threshold). On overflow the whole queue, including
   * this event, is dropped and replaced by one pending lagged notice.
   */
  enqueue(bytes: Buffer): boolean {
    const { maxEvents, maxBytes } = this.limits;
    // An empty queue always takes one event, so a single event above maxBytes still reaches a fast client.
    const full = this.queue.length > 0 && (this.queue.length + 1 > maxEvents || this.queuedBytes + bytes.length > maxBytes);
    if (full) {
      const dropped = this.queue.length + 1;
      this.queue = [];
      this.queuedBytes = 0;
      this.missedPending += dropped;
      this.missed += dropped;
      this.counters.droppedEvents += dropped;
      return false;
    }
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    return !this.blocked && (this.queuedBytes >= this.limits.flushEarlyBytes || this.queue.length >= this.limits.flushEarlyEvents);
  }

  /** Writes everything held unless the transport is blocked. */
  flush(): void {
    if (this.blocked || this.disposed) return;
    const chunk = this.take();
    if (chunk) this.blocked = !this.sink.write(chunk);
  }

  drain(idleBytes?: Uint8Array): boolean {
    if (this.disposed) return true;
    this.blocked = false;
    const chunk = this.take() ?? idleBytes;
    if (!chunk) return true;
    const ok = this.sink.write(chunk);
    this.blocked = !ok;
    return ok;
  }

  keepAlive(bytes: Uint8Array): void {
    if (this.blocked || this.disposed) return;
    this.blocked = !this.sink.write(bytes);
  }

  /** Ends the transport too; used when the bus itself is disposed. */
  close(): void {
    this.dispose();
    this.sink.close?.();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.onDispose(this);
  }

  /** Removes and returns everything held as one chunk: the lagged notice first, then the queue in order. */
  private take(): Uint8Array | undefined {
    const parts = this.queue;
    let total = this.queuedBytes;
    if (this.missedPending > 0) {
      const notice = laggedBytes(this.missedPending);
      parts.unshift(notice);
      total += notice.length;
      this.counters.laggedNotices++;
      this.missedPending = 0;
    }
    if (parts.length === 0) return undefined;
    this.queue = [];
    this.queuedBytes = 0;
    // One event goes out as-is: the common case pays no copy.
    return parts.length === 1 ? parts[0] : Buffer.concat(parts, total);
  }
}

function copyFilter(filter: EventFilter): EventFilter {
  return filter === null ? null : new Set(filter);
}
