import assert from 'node:assert/strict';
import http from 'node:http';
import { after, describe, it } from 'node:test';
import { EventBus, type UntypedEvents } from '../../../supervisor/events/eventBus.js';
import { openSse, parseSseQuery, parseTypes } from '../../../supervisor/http/sse.js';
import { testEngine } from '../../helpers/httpEngine.js';

interface SseEvent {
  event: string;
  id?: number;
  data: unknown;
}

/** A real node:http EventSource-style client that parses the stream as it arrives. */
class SseClient {
  raw = '';
  events: SseEvent[] = [];
  headers: http.IncomingHttpHeaders = {};
  status = 0;
  ended = false;
  private response: http.IncomingMessage | undefined;
  private readonly request: http.ClientRequest;
  private pending = '';
  private waiters: Array<() => void> = [];

  constructor(port: number, path: string) {
    this.request = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      this.response = res;
      this.headers = res.headers;
      this.status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (text: string) => this.onText(text));
      res.on('end', () => {
        this.ended = true;
        this.onText('');
      });
    });
    this.request.on('error', () => {
      // Expected when a test destroys the request; assertions look at what was received.
    });
  }

  pause(): void {
    this.response?.pause();
  }

  resume(): void {
    this.response?.resume();
  }

  destroy(): void {
    this.request.destroy();
  }

  /** Resolves when `predicate` holds, re-checked on every chunk; rejects after `timeoutMs`. */
  async until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out; got ${this.events.length} events, raw tail ${JSON.stringify(this.raw.slice(-200))}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 20);
      });
    }
  }

  ids(): number[] {
    return this.events.filter((e) => e.id !== undefined).map((e) => e.id!);
  }

  private onText(text: string): void {
    this.raw += text.length < 4096 ? text : '';
    this.pending += text;
    let end: number;
    while ((end = this.pending.indexOf('\n\n')) >= 0) {
      const block = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      const event = fields.get('event');
      if (event === undefined) continue;
      const id = fields.get('id');
      this.events.push({ event, ...(id === undefined ? {} : { id: Number(id) }), data: JSON.parse(fields.get('data') ?? 'null') });
    }
    for (const wake of this.waiters.splice(0)) wake();
  }
}

interface TestServer {
  bus: EventBus<UntypedEvents>;
  port: number;
  connect(query?: string): SseClient;
  close(): void;
}

/** A real app of the engine under test on 127.0.0.1:0 serving GET /events from a fresh bus. */
async function startServer(keepAliveMs = 60_000): Promise<TestServer> {
  const bus = new EventBus<UntypedEvents>();
  const app = testEngine().createApp();
  app.any((res, req) => {
    if (req.getUrl() === '/events') openSse(res, { ...parseSseQuery(req.getQuery() ?? ''), keepAliveMs }, bus);
    else res.writeStatus('404 Not Found').end();
  });
  const listenSocket = await app.listenTcp('127.0.0.1', 0);
  if (!listenSocket) throw new Error('listen failed');
  const port = listenSocket.port;
  const clients: SseClient[] = [];
  let closed = false;
  const server: TestServer = {
    bus,
    port,
    connect(query = '') {
      const client = new SseClient(port, `/events${query}`);
      clients.push(client);
      return client;
    },
    close() {
      if (closed) return;
      closed = true;
      for (const client of clients) client.destroy();
      bus.dispose();
      listenSocket.close();
    },
  };
  after(() => server.close());
  return server;
}

const retryReceived = (client: SseClient) => (): boolean => client.raw.startsWith('retry: 5000\n\n');

describe('SSE GET /events', () => {
  it('parses the query: types omitted/empty/list and stream_id', () => {
    assert.deepEqual(parseSseQuery(''), { types: null });
    assert.deepEqual(parseSseQuery('types=&stream_id=abc'), { types: '', streamId: 'abc' });
    assert.deepEqual(parseSseQuery('types=a%2Cb,c'), { types: 'a,b,c' });
    assert.equal(parseTypes(null), null);
    assert.deepEqual(parseTypes(''), new Set());
    assert.deepEqual(parseTypes(' a, ,b '), new Set(['a', 'b']));
  });

  it('sends headers and retry first, then event/id/data with monotonic ids', async () => {
    const server = await startServer();
    const client = server.connect();
    await client.until(retryReceived(client));
    assert.equal(client.headers['content-type'], 'text/event-stream');
    assert.equal(client.headers['cache-control'], 'no-cache');
    assert.equal(client.headers['x-accel-buffering'], 'no');
    assert.equal(client.headers['content-encoding'], undefined);
    server.bus.publish('session-created', { session_id: 's1', cwd: '/tmp' });
    server.bus.publish('repositories-changed');
    server.bus.publish('pty-exit', { session_id: 's1' });
    await client.until(() => client.events.length === 3);
    assert.ok(client.raw.startsWith('retry: 5000\n\nevent: session-created\nid: 1\ndata: {"session_id":"s1","cwd":"/tmp"}\n\n'));
    assert.deepEqual(client.ids(), [1, 2, 3]);
    assert.deepEqual(client.events[1], { event: 'repositories-changed', id: 2, data: null });
    server.close();
  });

  it('types filter: omitted = all, empty = none, list = only those', async () => {
    const server = await startServer();
    const all = server.connect();
    const none = server.connect('?types=&stream_id=none-stream');
    const some = server.connect('?types=b,c');
    await Promise.all([all, none, some].map((c) => c.until(retryReceived(c))));
    for (const name of ['a', 'b', 'c', 'd']) server.bus.publish(name);
    await all.until(() => all.events.length === 4);
    await some.until(() => some.events.length === 2);
    assert.deepEqual(
      some.events.map((e) => e.event),
      ['b', 'c'],
    );
    // Events arrive in order, so a sentinel received after widening proves nothing earlier got through.
    assert.equal(server.bus.setStreamFilter('none-stream', null), true);
    server.bus.publish('sentinel');
    await none.until(() => none.events.length > 0);
    assert.deepEqual(
      none.events.map((e) => e.event),
      ['sentinel'],
    );
    server.close();
  });

  it('setStreamFilter (POST /events/types) changes a live stream; an unknown stream is refused', async () => {
    const server = await startServer();
    const client = server.connect('?types=a&stream_id=3f2a9c1e-live');
    await client.until(retryReceived(client));
    server.bus.publish('b');
    server.bus.publish('a');
    await client.until(() => client.events.length === 1);
    assert.equal(server.bus.setStreamFilter('3f2a9c1e-live', ['b']), true);
    server.bus.publish('a');
    server.bus.publish('b');
    await client.until(() => client.events.length === 2);
    assert.deepEqual(
      client.events.map((e) => [e.event, e.id]),
      [
        ['a', 2],
        ['b', 4],
      ],
    );
    assert.equal(server.bus.setStreamFilter('unknown', ['a']), false);
    server.close();
  });

  it('sends the keep-alive comment on the configured period', async () => {
    const server = await startServer(100);
    const client = server.connect();
    await client.until(() => client.raw.includes(': ping\n\n'), 2000);
    assert.ok(client.raw.startsWith('retry: 5000\n\n'), 'retry stays first');
    server.close();
  });

  it('serializes once per publish with 10 live subscribers', async () => {
    const server = await startServer();
    const clients = Array.from({ length: 10 }, () => server.connect());
    await Promise.all(clients.map((c) => c.until(retryReceived(c))));
    const before = server.bus.stats.serializations;
    server.bus.publish('pty-title', { session_id: 's', title: 'hello' });
    assert.equal(server.bus.stats.serializations - before, 1);
    await Promise.all(clients.map((c) => c.until(() => c.events.length === 1)));
    for (const c of clients) assert.deepEqual(c.events[0], { event: 'pty-title', id: 1, data: { session_id: 's', title: 'hello' } });
    server.close();
  });

  it('a client disconnect disposes its subscription', async () => {
    const server = await startServer();
    const a = server.connect('?stream_id=gone');
    const b = server.connect();
    await Promise.all([a, b].map((c) => c.until(retryReceived(c))));
    assert.equal(server.bus.subscriberCount, 2);
    a.destroy();
    b.destroy();
    const deadline = Date.now() + 3000;
    while (server.bus.subscriberCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.bus.subscriberCount, 0);
    assert.equal(server.bus.hasStream('gone'), false);
    server.bus.publish('after-close');
    server.close();
  });

  it('disposing the bus ends live streams after writing what was queued; later requests get 503', async () => {
    const server = await startServer();
    const client = server.connect();
    await client.until(retryReceived(client));
    server.bus.publish('last-words');
    server.bus.dispose();
    await client.until(() => client.ended);
    assert.deepEqual(
      client.events.map((e) => e.event),
      ['last-words'],
    );
    const late = server.connect();
    await late.until(() => late.ended);
    assert.equal(late.status, 503);
    assert.equal(server.bus.subscriberCount, 0);
    server.close();
  });

  it('a stalled client gets lagged {missed:N} while a reading client gets every event in order', async () => {
    const server = await startServer();
    const normal = server.connect();
    const stalled = server.connect();
    await Promise.all([normal, stalled].map((c) => c.until(retryReceived(c))));
    stalled.pause();

    const pad = 'x'.repeat(32 * 1024);
    const perRound = 16;
    let published = 0;
    let slowestRoundMs = 0;
    let roundsAfterDrop = 0;
    // Publish until the stalled client's queue overflowed and a few rounds more; each round waits
    // for the reading client only, so it never falls behind and the stalled one never holds it up.
    for (let round = 0; round < 2000 && roundsAfterDrop < 3; round++) {
      const t0 = performance.now();
      for (let i = 0; i < perRound; i++) server.bus.publish('big', { n: ++published, pad });
      slowestRoundMs = Math.max(slowestRoundMs, performance.now() - t0);
      await normal.until(() => normal.events.length === published, 10_000);
      if (server.bus.stats.droppedEvents > 0) roundsAfterDrop++;
    }
    assert.ok(server.bus.stats.droppedEvents > 0, 'the stalled subscriber overflowed');
    // A loose bound, not a speed figure (that is bench/supervisor/sse): publishing must not wait on the
    // stalled socket, which would take seconds per round; a loaded CI machine takes a few hundred ms.
    assert.ok(slowestRoundMs < 2000, `publishing ${perRound} events took ${slowestRoundMs.toFixed(1)} ms`);
    server.bus.publish('done');
    published++;

    stalled.resume();
    await stalled.until(() => stalled.events.at(-1)?.event === 'done', 10_000);
    const lagged = stalled.events.filter((e) => e.event === 'lagged');
    assert.ok(lagged.length >= 1);
    const missed = lagged.reduce((sum, e) => sum + (e.data as { missed: number }).missed, 0);
    assert.ok(missed > 0);
    const ids = stalled.ids();
    assert.ok(
      ids.every((id, i) => i === 0 || id > ids[i - 1]!),
      'ids stay increasing, nothing resent',
    );
    assert.equal(ids.length + missed, published, 'every event was either delivered or counted as missed');

    await normal.until(() => normal.events.length === published);
    assert.deepEqual(
      normal.ids(),
      Array.from({ length: published }, (_, i) => i + 1),
    );
    assert.equal(
      normal.events.some((e) => e.event === 'lagged'),
      false,
    );
    server.close();
  });
});
