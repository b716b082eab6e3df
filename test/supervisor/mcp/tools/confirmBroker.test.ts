import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ApiError } from '../../../../shared/apiError.js';
import { EventBus } from '../../../../supervisor/events/eventBus.js';
import type { RequestContext } from '../../../../supervisor/http/types.js';
import { ConfirmBroker } from '../../../../supervisor/mcp/confirmBroker.js';
import { mcpConfirmRoutes } from '../../../../supervisor/routes/mcpConfirm.js';

function record(bus: EventBus) {
  const events: Array<{ name: string; payload: any }> = [];
  bus.on('*', (name, payload) => events.push({ name, payload }));
  return events;
}

function post(body: string): RequestContext {
  return {
    method: 'POST',
    path: '/mcp/confirm-response',
    query: new URLSearchParams(),
    headers: {},
    params: {},
    listener: 'socket',
    tls: false,
    remoteAddress: '',
    isLoopback: true,
    body: Buffer.from(body),
    signal: new AbortController().signal,
  };
}

test('confirm answered: first answer wins, later answers are refused, resolved event carries the answer', async () => {
  const bus = new EventBus();
  const events = record(bus);
  const broker = new ConfirmBroker({ bus, timeoutMs: 10_000 });
  const outcome = broker.request({ title: 'Go?', signal: new AbortController().signal });
  assert.equal(broker.size, 1);
  const id = events[0]!.payload.request_id as string;
  assert.deepEqual(events[0], { name: 'mcp-confirm', payload: { request_id: id, title: 'Go?' } });
  assert.equal(broker.answer(id, false), 'accepted');
  assert.equal(broker.answer(id, true), 'already_answered');
  assert.equal(broker.answer('nope', true), 'unknown');
  assert.deepEqual(await outcome, { confirmed: false });
  assert.deepEqual(events.slice(1), [{ name: 'mcp-confirm-resolved', payload: { request_id: id, confirmed: false } }]);
  assert.equal(broker.size, 0);
});

test('confirm left unanswered resolves with the reason, publishes resolved and leaves no entry', async () => {
  const bus = new EventBus();
  const events = record(bus);
  const broker = new ConfirmBroker({ bus, timeoutMs: 200 });
  const outcome = await broker.request({ title: 'Go?', signal: new AbortController().signal });
  assert.deepEqual(outcome, { confirmed: false, reason: 'no answer within 200ms' });
  const id = events[0]!.payload.request_id;
  assert.deepEqual(events[1], { name: 'mcp-confirm-resolved', payload: { request_id: id, confirmed: false, reason: 'no answer within 200ms' } });
  assert.equal(broker.size, 0);
  assert.equal(broker.answer(id, true), 'already_answered');
});

test('confirm window wording in production is "no answer within 300s"', async () => {
  const broker = new ConfirmBroker({ bus: new EventBus() });
  assert.equal(broker.timeoutMs, 300_000);
  // Whole seconds read as seconds; the wording is fixed.
  const short = new ConfirmBroker({ bus: new EventBus(), timeoutMs: 1000 });
  assert.deepEqual(await short.request({ title: 't', signal: new AbortController().signal }), { confirmed: false, reason: 'no answer within 1s' });
});

test('confirm whose caller went away resolves, publishes resolved, and frees the entry', async () => {
  const bus = new EventBus();
  const events = record(bus);
  const broker = new ConfirmBroker({ bus, timeoutMs: 60_000 });
  const ac = new AbortController();
  const outcome = broker.request({ title: 'Go?', signal: ac.signal });
  assert.equal(broker.size, 1);
  ac.abort();
  assert.equal((await outcome).confirmed, false);
  assert.equal(broker.size, 0);
  assert.equal(events.at(-1)?.name, 'mcp-confirm-resolved');
  assert.equal(events.at(-1)?.payload.confirmed, false);

  // Already aborted: nothing is asked at all.
  const before = events.length;
  assert.equal((await broker.request({ title: 'late', signal: AbortSignal.abort() })).confirmed, false);
  assert.equal(events.length, before);
  assert.equal(broker.size, 0);
});

test('confirm broker dispose resolves every waiting confirm', async () => {
  const broker = new ConfirmBroker({ bus: new EventBus(), timeoutMs: 60_000 });
  const a = broker.request({ title: 'a', signal: new AbortController().signal });
  const b = broker.request({ title: 'b', signal: new AbortController().signal });
  assert.equal(broker.size, 2);
  broker.dispose();
  assert.deepEqual(await Promise.all([a, b]), [
    { confirmed: false, reason: 'the server is shutting down' },
    { confirmed: false, reason: 'the server is shutting down' },
  ]);
  assert.equal(broker.size, 0);
});

test('POST /mcp/confirm-response: the first answer counts, a second or an unknown id is ignored with a reason, bad bodies are 400', async () => {
  const bus = new EventBus();
  const events = record(bus);
  const broker = new ConfirmBroker({ bus, timeoutMs: 10_000 });
  const [route] = mcpConfirmRoutes(broker);
  assert.ok(route && route.method === 'POST' && route.pattern === '/mcp/confirm-response');
  const handler = route.handler as (ctx: RequestContext) => unknown;
  const outcome = broker.request({ title: 'Go?', signal: new AbortController().signal });
  const id = events[0]!.payload.request_id as string;

  assert.deepEqual(await handler(post(JSON.stringify({ request_id: id, confirmed: true }))), { status: 200, body: { ok: true } });
  assert.deepEqual(await outcome, { confirmed: true });
  const status = (body: string) => {
    try {
      handler(post(body));
    } catch (e) {
      assert.ok(e instanceof ApiError);
      return `${e.code} ${e.message}${e.extra['field'] === undefined ? '' : ` (${String(e.extra['field'])})`}`;
    }
    return 'no error';
  };
  assert.deepEqual(await handler(post(JSON.stringify({ request_id: id, confirmed: false }))), {
    status: 200,
    body: { ok: true, ignored: 'already_answered', message: `confirm request ${id} was already resolved; only the first answer counts` },
  });
  assert.deepEqual(await handler(post(JSON.stringify({ request_id: 'x', confirmed: false }))), {
    status: 200,
    body: { ok: true, ignored: 'unknown', message: 'no pending confirm request x' },
  });
  assert.equal(status(JSON.stringify({ confirmed: true })), 'invalid_input request_id is required (request_id)');
  assert.equal(
    status(JSON.stringify({ request_id: '', confirmed: true })),
    'invalid_input request_id is required (the id from the mcp-confirm event) (request_id)',
  );
  assert.equal(
    status(JSON.stringify({ request_id: { id }, confirmed: true })),
    'invalid_input request_id is required (the id from the mcp-confirm event) (request_id)',
  );
  assert.equal(status(JSON.stringify({ request_id: id, confirmed: 'yes' })), 'invalid_input confirmed must be a boolean, got yes (confirmed)');
  assert.equal(status(JSON.stringify({ request_id: id, confirmed: [true] })), 'invalid_input confirmed must be a boolean, got [true] (confirmed)');
  assert.equal(status(JSON.stringify({ request_id: id })), 'invalid_input confirmed is required (confirmed)');
  assert.match(status('[1]'), /^invalid_input body must be a JSON object/);
  assert.match(status('{'), /^invalid_input request body is not valid JSON/);
  assert.equal(broker.size, 0);
});
