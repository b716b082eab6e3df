import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventBus, MAX_TRACKED_STREAMS } from '../../../supervisor/events/eventBus.js';
import type { EventSink, UntypedEvents } from '../../../supervisor/events/eventBus.js';
import { FLUSH_EARLY_EVENTS, SUBSCRIBER_QUEUE_MAX_EVENTS } from '../../../supervisor/events/subscriber.js';

/** Records every chunk; `writable = false` makes it report backpressure like uWS `res.write`. */
class FakeSink implements EventSink {
  chunks: string[] = [];
  writable = true;
  closed = false;
  write(chunk: Uint8Array): boolean {
    this.chunks.push(Buffer.from(chunk).toString('utf8'));
    return this.writable;
  }
  close(): void {
    this.closed = true;
  }
  get text(): string {
    return this.chunks.join('');
  }
  /** Parsed events in arrival order. */
  get events(): Array<{ event: string; id?: number; data: unknown }> {
    return this.text
      .split('\n\n')
      .filter((block) => block.startsWith('event: '))
      .map((block) => {
        const fields = new Map(block.split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]));
        const id = fields.get('id');
        return { event: fields.get('event')!, ...(id === undefined ? {} : { id: Number(id) }), data: JSON.parse(fields.get('data')!) };
      });
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('EventBus', () => {
  it('formats each event as event/id/data with monotonic ids and no wrapper', async () => {
    const bus = new EventBus<UntypedEvents>();
    const sink = new FakeSink();
    bus.subscribe(null, sink);
    assert.equal(bus.publish('session-created', { session_id: 's1' }), 1);
    assert.equal(bus.publish('repositories-changed'), 2);
    await tick();
    assert.equal(sink.text, 'event: session-created\nid: 1\ndata: {"session_id":"s1"}\n\nevent: repositories-changed\nid: 2\ndata: null\n\n');
    bus.dispose();
  });

  it('coalesces a tick of events into one write per subscriber', async () => {
    const bus = new EventBus<UntypedEvents>();
    const a = new FakeSink();
    const b = new FakeSink();
    bus.subscribe(null, a);
    bus.subscribe(null, b);
    for (let i = 0; i < 5; i++) bus.publish('pty-activity', { i });
    assert.equal(a.chunks.length, 0, 'nothing is written synchronously for a small burst');
    await tick();
    assert.equal(a.chunks.length, 1);
    assert.equal(b.chunks.length, 1);
    assert.deepEqual(
      a.events.map((e) => e.id),
      [1, 2, 3, 4, 5],
    );
    bus.dispose();
  });

  it('serializes once per publish no matter how many subscribers', async () => {
    const bus = new EventBus<UntypedEvents>();
    const sinks = Array.from({ length: 10 }, () => new FakeSink());
    for (const sink of sinks) bus.subscribe(null, sink);
    const originalStringify = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
      calls++;
      return originalStringify(...args);
    }) as typeof JSON.stringify;
    try {
      bus.publish('pty-title', { session_id: 's', title: 't' });
    } finally {
      JSON.stringify = originalStringify;
    }
    assert.equal(calls, 1);
    assert.equal(bus.stats.serializations, 1);
    await tick();
    for (const sink of sinks) assert.equal(sink.events.length, 1);
    bus.dispose();
  });

  it('does not serialize when no subscriber wants the event', () => {
    const bus = new EventBus<UntypedEvents>();
    bus.subscribe(new Set(['a']), new FakeSink());
    bus.publish('b', { x: 1 });
    assert.equal(bus.stats.serializations, 0);
    bus.dispose();
  });

  it('filters: null = all, empty = none, set = listed; setFilter replaces it', async () => {
    const bus = new EventBus<UntypedEvents>();
    const all = new FakeSink();
    const none = new FakeSink();
    const some = new FakeSink();
    bus.subscribe(null, all);
    bus.subscribe(new Set(), none);
    const sub = bus.subscribe(new Set(['a']), some);
    bus.publish('a');
    bus.publish('b');
    await tick();
    sub.setFilter(new Set(['b']));
    bus.publish('a');
    bus.publish('b');
    await tick();
    assert.deepEqual(
      all.events.map((e) => e.event),
      ['a', 'b', 'a', 'b'],
    );
    assert.deepEqual(none.events, []);
    assert.deepEqual(
      some.events.map((e) => [e.event, e.id]),
      [
        ['a', 1],
        ['b', 4],
      ],
    );
    bus.dispose();
  });

  it('rejects event names that could inject SSE fields', () => {
    const bus = new EventBus<UntypedEvents>();
    for (const name of ['a\nid: 9', 'a\rb', '']) assert.throws(() => bus.publish(name), TypeError);
    assert.equal(bus.stats.lastId, 0);
    bus.dispose();
  });

  it('a payload JSON cannot encode throws without using up an id', async () => {
    const bus = new EventBus<UntypedEvents>();
    const sink = new FakeSink();
    bus.subscribe(null, sink);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.throws(() => bus.publish('x', circular));
    assert.equal(bus.publish('y'), 1);
    await tick();
    assert.deepEqual(
      sink.events.map((e) => e.id),
      [1],
    );
    bus.dispose();
  });

  it('holds events while blocked and drains them in one chunk', async () => {
    const bus = new EventBus<UntypedEvents>();
    const sink = new FakeSink();
    const sub = bus.subscribe(null, sink);
    bus.publish('a');
    sink.writable = false;
    await tick();
    assert.equal(sub.isBlocked, true);
    bus.publish('b');
    bus.publish('c');
    await tick();
    assert.equal(sink.chunks.length, 1, 'nothing written while blocked');
    sink.writable = true;
    assert.equal(sub.drain(), true);
    assert.equal(sink.chunks.length, 2);
    assert.deepEqual(
      sink.events.map((e) => e.event),
      ['a', 'b', 'c'],
    );
    assert.equal(sub.drain(Buffer.from(':\n\n')), true);
    assert.equal(sink.chunks.at(-1), ':\n\n', 'idle bytes are written when nothing is held');
    bus.dispose();
  });

  it('replaces an overflowing queue with one lagged notice and never resends', async () => {
    const bus = new EventBus<UntypedEvents>({ maxQueueEvents: 4 });
    const slow = new FakeSink();
    const fast = new FakeSink();
    const sub = bus.subscribe(null, slow);
    bus.subscribe(null, fast);
    slow.writable = false;
    bus.publish('e');
    await tick();
    for (let i = 0; i < 6; i++) bus.publish('e'); // ids 2..7: 2-5 queue, 6 overflows (5 dropped), 7 queues
    await tick();
    slow.writable = true;
    sub.drain();
    assert.deepEqual(
      slow.events.map((e) => [e.event, e.id ?? null, e.data]),
      [
        ['e', 1, null],
        ['lagged', null, { missed: 5 }],
        ['e', 7, null],
      ],
    );
    assert.equal(sub.missedTotal, 5);
    assert.deepEqual(
      fast.events.map((e) => e.id),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(bus.stats.droppedEvents, 5);
    assert.equal(bus.stats.laggedNotices, 1);
    bus.dispose();
  });

  it('applies the byte cap, but always lets one oversized event into an empty queue', async () => {
    const bus = new EventBus<UntypedEvents>({ maxQueueBytes: 1000 });
    const sink = new FakeSink();
    const sub = bus.subscribe(null, sink);
    bus.publish('big', 'x'.repeat(5000));
    await tick();
    assert.equal(sink.events.length, 1);
    sink.writable = false;
    bus.publish('small');
    await tick();
    bus.publish('big', 'x'.repeat(600));
    bus.publish('big', 'x'.repeat(600));
    await tick();
    sink.writable = true;
    sub.drain();
    assert.deepEqual(
      sink.events.map((e) => e.event),
      ['big', 'small', 'lagged'],
    );
    bus.dispose();
  });

  it('flushes a healthy subscriber early during a large synchronous burst', () => {
    const bus = new EventBus<UntypedEvents>();
    const sink = new FakeSink();
    bus.subscribe(null, sink);
    const burst = SUBSCRIBER_QUEUE_MAX_EVENTS * 2;
    for (let i = 0; i < burst; i++) bus.publish('e');
    assert.equal(sink.chunks.length, burst / FLUSH_EARLY_EVENTS);
    assert.equal(bus.stats.droppedEvents, 0);
    bus.dispose();
  });

  it('keep-alive bytes go out only while the subscriber is not blocked', async () => {
    const bus = new EventBus<UntypedEvents>();
    const sink = new FakeSink();
    const sub = bus.subscribe(null, sink);
    sub.keepAlive(Buffer.from(': ping\n\n'));
    sink.writable = false;
    bus.publish('a');
    await tick();
    sub.keepAlive(Buffer.from(': ping\n\n'));
    assert.deepEqual(sink.chunks.filter((c) => c.startsWith(':')).length, 1);
    bus.dispose();
  });

  it('in-process listeners: by name and "*", disposable, errors reported, re-entrant publish ordered', async () => {
    const errors: string[] = [];
    const bus = new EventBus<UntypedEvents>({ onListenerError: (_e, name) => errors.push(name) });
    const sink = new FakeSink();
    bus.subscribe(null, sink);
    const seen: string[] = [];
    const named = bus.on('a', (name, payload, id) => seen.push(`a:${name}:${JSON.stringify(payload)}:${id}`));
    bus.on('*', (name) => seen.push(`*:${name}`));
    bus.on('a', () => {
      throw new Error('boom');
    });
    let reentered = false;
    bus.on('a', () => {
      if (reentered) return;
      reentered = true;
      bus.publish('b');
    });
    bus.publish('a', { v: 1 });
    named.dispose();
    bus.publish('a');
    await tick();
    assert.deepEqual(seen, ['a:a:{"v":1}:1', '*:b', '*:a', '*:a']);
    assert.deepEqual(errors, ['a', 'a']);
    assert.deepEqual(
      sink.events.map((e) => `${e.event}${e.id}`),
      ['a1', 'b2', 'a3'],
      'the re-entrant event is queued after the one that caused it',
    );
    bus.dispose();
  });

  it('tracks streams by id: setStreamFilter, unknown → false, cap evicts the oldest, dispose forgets', async () => {
    const bus = new EventBus<UntypedEvents>();
    const sink = new FakeSink();
    const sub = bus.subscribe(new Set(), sink, { streamId: 'stream-1' });
    assert.equal(bus.setStreamFilter('nope', ['a']), false);
    assert.equal(bus.setStreamFilter('stream-1', ['a']), true);
    bus.publish('a');
    await tick();
    assert.equal(sink.events.length, 1);
    for (let i = 0; i < MAX_TRACKED_STREAMS; i++) bus.subscribe(null, new FakeSink(), { streamId: `s${i}` });
    assert.equal(bus.stats.trackedStreams, MAX_TRACKED_STREAMS);
    assert.equal(bus.hasStream('stream-1'), false, 'oldest registration evicted');
    assert.equal(bus.hasStream('s0'), true);
    sub.dispose();
    assert.equal(bus.subscriberCount, MAX_TRACKED_STREAMS);
    bus.subscribe(null, new FakeSink(), { streamId: 'bad id with spaces' });
    assert.equal(bus.hasStream('bad id with spaces'), false);
    bus.dispose();
  });

  it('dispose flushes what is queued, closes every sink and empties the bus', () => {
    const bus = new EventBus<UntypedEvents>();
    const sink = new FakeSink();
    bus.subscribe(null, sink);
    bus.publish('a');
    bus.dispose();
    assert.equal(sink.events.length, 1);
    assert.equal(sink.closed, true);
    assert.equal(bus.subscriberCount, 0);
    assert.equal(bus.publish('b'), 0);
  });
});
