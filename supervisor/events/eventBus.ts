/**
 * The one event bus every supervisor feature publishes on: each event is serialized once into SSE
 * bytes and fanned out to bounded per-subscriber queues and in-process listeners. It is typed by an
 * event map (name → payload), by default tuicd's own (eventMap.ts): publishing a name the map does
 * not have, or a payload of the wrong shape, does not compile.
 */

import type { Disposable } from '../../shared/disposable.js';
import { toDisposable } from '../../shared/disposable.js';
import type { TuicdEvents } from './eventMap.js';
import { Subscriber, queueLimits } from './subscriber.js';
import type { DropCounters, EventFilter, EventSink, QueueLimits, Subscription } from './subscriber.js';

export type { EventFilter, EventSink, Subscription } from './subscriber.js';
export { SUBSCRIBER_QUEUE_MAX_BYTES, SUBSCRIBER_QUEUE_MAX_EVENTS } from './subscriber.js';

/** Live streams whose filter `POST /events/types` can replace; past it the oldest registration is forgotten. */
export const MAX_TRACKED_STREAMS = 64;

/** Longest accepted `stream_id`; clients send a UUID (36 chars), so anything far longer is abuse. */
export const MAX_STREAM_ID_CHARS = 128;

/** Name passed to `on()` to hear every event. */
export const ALL_EVENTS = '*';

/**
 * What an event map looks like: event name → payload type. A payload that may be left out (null,
 * undefined or unknown) is sent as `data: null`.
 */
export type EventMap = object;

/** A map that takes any name and payload: for exercising the bus itself (tests, benchmarks). */
export type UntypedEvents = Record<string, unknown>;

/** Names of a map's events. */
export type EventNameOf<M extends EventMap> = keyof M & string;

/** A published payload is shared by every listener and already serialized: nobody may change it. */
export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** `publish(name, payload)` arguments: the payload may be omitted when the event has none. */
type PayloadArgs<P> = [P] extends [null | undefined] ? [payload?: P] : unknown extends P ? [payload?: P] : [payload: DeepReadonly<P>];

/** An in-process listener for `name` (or for every event with `'*'`); `id` is the same id SSE clients see. */
export type EventListener<M extends EventMap = TuicdEvents, K extends EventNameOf<M> = EventNameOf<M>> = (
  name: K,
  payload: DeepReadonly<M[K]>,
  id: number,
) => void;

export interface EventBusOptions {
  /** Per-subscriber event cap before `lagged`. Default SUBSCRIBER_QUEUE_MAX_EVENTS (256). */
  maxQueueEvents?: number;
  /** Per-subscriber byte cap before `lagged`. Default SUBSCRIBER_QUEUE_MAX_BYTES (1 MiB). */
  maxQueueBytes?: number;
  /** Default MAX_TRACKED_STREAMS (64). */
  maxTrackedStreams?: number;
  /** Where a throwing in-process listener is reported. Default: `process.emitWarning`. */
  onListenerError?: (error: unknown, eventName: string) => void;
}

export interface SubscribeOptions {
  /** Registers the subscription under this id so `setStreamFilter` can reach it. */
  streamId?: string;
}

export interface EventBusStats extends DropCounters {
  published: number;
  /** How many times an event was turned into SSE bytes: at most once per publish. */
  serializations: number;
  subscribers: number;
  /** Subscribers currently waiting for their transport to become writable. */
  blocked: number;
  trackedStreams: number;
  lastId: number;
}

const defaultListenerError = (error: unknown, eventName: string): void => {
  process.emitWarning(`event listener for "${eventName}" threw: ${String(error)}`, 'EventBusListenerError');
};

/** Throws on names that would break SSE framing: CR or LF would let a name inject fields or events. */
function assertEventName(name: string): void {
  if (typeof name !== 'string' || name.length === 0 || /[\r\n]/.test(name)) {
    throw new TypeError(`invalid event name: ${JSON.stringify(name)}`);
  }
}

export class EventBus<M extends EventMap = TuicdEvents> implements Disposable {
  private readonly subscribers = new Set<Subscriber>();
  /** Subscribers with queued events and a writable transport, flushed together once per tick. */
  private readonly dirty = new Set<Subscriber>();
  /** Insertion-ordered, so the oldest registration is evicted first when the cap is reached. */
  private readonly streams = new Map<string, Subscriber>();
  private readonly listeners = new Map<string, Set<EventListener<M>>>();
  private readonly counters = { published: 0, serializations: 0, droppedEvents: 0, laggedNotices: 0 };
  private readonly limits: QueueLimits;
  private readonly maxTrackedStreams: number;
  private readonly onListenerError: (error: unknown, eventName: string) => void;
  private lastId = 0;
  private nextSubscriberId = 1;
  private flushHandle: NodeJS.Immediate | undefined;
  private disposed = false;

  constructor(options: EventBusOptions = {}) {
    this.limits = queueLimits(options.maxQueueEvents, options.maxQueueBytes);
    this.maxTrackedStreams = options.maxTrackedStreams ?? MAX_TRACKED_STREAMS;
    this.onListenerError = options.onListenerError ?? defaultListenerError;
  }

  /**
   * Assigns the next id, serializes at most once, queues for matching subscribers, then calls
   * listeners. Never waits on any subscriber. Returns the id (0 once the bus is disposed).
   */
  publish<K extends EventNameOf<M>>(name: K, ...args: PayloadArgs<M[K]>): number {
    const payload: unknown = args[0];
    assertEventName(name);
    if (this.disposed) return 0;
    const id = this.lastId + 1;
    let bytes: Buffer | undefined;
    for (const sub of this.subscribers) {
      if (!sub.accepts(name)) continue;
      // Serialize before committing the id, so a payload JSON.stringify rejects leaves no gap.
      bytes ??= this.serialize(name, id, payload);
      if (sub.enqueue(bytes)) this.flushOne(sub);
      else if (!sub.isBlocked) this.dirty.add(sub);
    }
    this.lastId = id;
    this.counters.published++;
    if (this.dirty.size > 0) this.scheduleFlush();
    // Listeners run last: one that publishes re-entrantly gets a later id and must be queued later.
    this.notify(name, payload, id);
    return id;
  }

  /** Adds an SSE-style subscriber. `filter`: null = every event, empty set = none. */
  subscribe(filter: EventFilter, sink: EventSink, options: SubscribeOptions = {}): Subscription {
    if (this.disposed) throw new Error('EventBus is disposed');
    const sub = new Subscriber(this.nextSubscriberId++, filter, sink, this.limits, this.counters, (s) => this.forget(s));
    this.subscribers.add(sub);
    if (options.streamId !== undefined && isValidStreamId(options.streamId)) this.track(options.streamId, sub);
    return sub;
  }

  /**
   * Replaces the filter of a live stream (`POST /events/types`): true = applied (204),
   * false = no such live stream (404). `types`: null = all, empty = none.
   */
  setStreamFilter(streamId: string, types: Iterable<string> | null): boolean {
    const sub = this.streams.get(streamId);
    if (!sub) return false;
    sub.setFilter(types === null ? null : new Set(types));
    return true;
  }

  hasStream(streamId: string): boolean {
    return this.streams.has(streamId);
  }

  /** In-process listener for one event name, or `'*'` for all of them. */
  on<K extends EventNameOf<M>>(name: K, listener: EventListener<M, K>): Disposable;
  on(name: typeof ALL_EVENTS, listener: EventListener<M>): Disposable;
  on(name: string, listener: EventListener<M, never>): Disposable {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    const fn = listener as EventListener<M>;
    set.add(fn);
    return toDisposable(() => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(name) === set) this.listeners.delete(name);
    });
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  get stats(): EventBusStats {
    let blocked = 0;
    for (const sub of this.subscribers) if (sub.isBlocked) blocked++;
    return { ...this.counters, subscribers: this.subscribers.size, blocked, trackedStreams: this.streams.size, lastId: this.lastId };
  }

  /** Writes what is queued, closes every subscriber's transport and drops all listeners. */
  dispose(): void {
    if (this.disposed) return;
    this.flushAll();
    this.disposed = true;
    if (this.flushHandle) clearImmediate(this.flushHandle);
    this.flushHandle = undefined;
    for (const sub of [...this.subscribers]) sub.close();
    this.listeners.clear();
  }

  private serialize(name: string, id: number, payload: unknown): Buffer {
    this.counters.serializations++;
    // undefined has no JSON form, and an event without a data line is never dispatched by EventSource.
    const json = payload === undefined ? 'null' : JSON.stringify(payload);
    return Buffer.from(`event: ${name}\nid: ${id}\ndata: ${json}\n\n`);
  }

  private scheduleFlush(): void {
    if (this.flushHandle === undefined) this.flushHandle = setImmediate(() => this.flushAll());
  }

  /** One coalesced write per dirty subscriber: events published in the same tick share a write. */
  private flushAll(): void {
    this.flushHandle = undefined;
    const subs = [...this.dirty];
    this.dirty.clear();
    for (const sub of subs) this.flushOne(sub);
  }

  private flushOne(sub: Subscriber): void {
    this.dirty.delete(sub);
    try {
      sub.flush();
    } catch {
      // A transport that throws is gone (e.g. a response already aborted); treating it as closed
      // keeps one broken client from stopping delivery to the rest.
      sub.dispose();
    }
  }

  private notify(name: string, payload: unknown, id: number): void {
    for (const key of name === ALL_EVENTS ? [name] : [name, ALL_EVENTS]) {
      const set = this.listeners.get(key);
      if (!set) continue;
      for (const listener of set) {
        try {
          listener(name as EventNameOf<M>, payload as DeepReadonly<M[EventNameOf<M>]>, id);
        } catch (error) {
          this.onListenerError(error, name);
        }
      }
    }
  }

  private track(streamId: string, sub: Subscriber): void {
    // A reconnecting client reuses its stream_id: the newest connection owns it.
    this.streams.delete(streamId);
    if (this.streams.size >= this.maxTrackedStreams) {
      const oldest = this.streams.keys().next();
      if (!oldest.done) this.streams.delete(oldest.value);
    }
    this.streams.set(streamId, sub);
  }

  private forget(sub: Subscriber): void {
    this.subscribers.delete(sub);
    this.dirty.delete(sub);
    for (const [streamId, tracked] of this.streams) {
      if (tracked === sub) this.streams.delete(streamId);
    }
  }
}

/** Stream ids are opaque but bounded and printable, so they can be logged and used as map keys safely. */
export function isValidStreamId(streamId: string): boolean {
  return streamId.length > 0 && streamId.length <= MAX_STREAM_ID_CHARS && /^[\x21-\x7e]+$/.test(streamId);
}
