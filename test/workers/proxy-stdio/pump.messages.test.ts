/**
 * The pump carrying what the child says to the client side and back (ProxyStdioProtocol v2): the
 * child's requests and notifications as `message` events, `answer` and `notify` to the child, and
 * notifications/cancelled for an exchange its caller cancelled. A real child (the mock upstream).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ErrorCode } from '../../../shared/errors.js';
import { mockParams, sleep, startPump } from './pumpHarness.js';

describe('pump messages', { concurrency: true }, () => {
  test("the child's request becomes a message event; its answer (result or error) goes back; an answer quoting another pid is dropped", async (t) => {
    const pump = await startPump(t);
    const { pid } = await pump.start(mockParams('normal'));
    const asked = pump.callTool('askClient', { method: 'roots/list', params: { _meta: { x: 1 } } });
    await pump.until(() => pump.messages.length === 1, 10_000, 'the roots/list message');
    assert.deepEqual(pump.messages[0], { pid, method: 'roots/list', id: 'srv-0', params: { _meta: { x: 1 } } });
    // A child that is not the one that asked gets nothing (and the call stays pending).
    await pump.client.request('answer', { id: 'srv-0', pid: pid + 100_000 }, { payload: Buffer.from('{"roots":[]}') });
    await sleep(100);
    await pump.client.request('answer', { id: 'srv-0', pid }, { payload: Buffer.from('{"roots":[{"uri":"file:///w","name":"w"}]}') });
    assert.deepEqual(((await asked) as { response: unknown }).response, { jsonrpc: '2.0', id: 'srv-0', result: { roots: [{ uri: 'file:///w', name: 'w' }] } });

    const refused = pump.callTool('askClient', { method: 'sampling/createMessage', params: { maxTokens: 3 } });
    await pump.until(() => pump.messages.length === 2, 10_000, 'the sampling message');
    assert.deepEqual(pump.messages[1], { pid, method: 'sampling/createMessage', id: 'srv-1', params: { maxTokens: 3 } });
    await pump.client.request('answer', { id: 'srv-1', pid, error: { code: -32601, message: 'no sampling here', data: { why: 'test' } } });
    assert.deepEqual(((await refused) as { response: unknown }).response, {
      jsonrpc: '2.0',
      id: 'srv-1',
      error: { code: -32601, message: 'no sampling here', data: { why: 'test' } },
    });
  });

  test("the child's notifications become message events without an id, in the order written, before the answer", async (t) => {
    const pump = await startPump(t);
    const { pid } = await pump.start(mockParams('normal'));
    await pump.callTool('notifyClient', { method: 'notifications/message', params: { level: 'info', data: 'first' } });
    await pump.callTool('notifyClient', { method: 'notifications/resources/list_changed' });
    assert.deepEqual(pump.messages, [
      { pid, method: 'notifications/message', params: { level: 'info', data: 'first' } },
      { pid, method: 'notifications/resources/list_changed' },
    ]);
  });

  test('notify reaches the child; it fails when no child runs', async (t) => {
    const pump = await startPump(t);
    await assert.rejects(pump.client.request('notify', { method: 'notifications/roots/list_changed' }), /is not running/);
    await pump.start(mockParams('normal'));
    await pump.client.request('notify', { method: 'notifications/roots/list_changed' });
    await pump.client.request('notify', { method: 'notifications/x' }, { payload: Buffer.from('{"a":1}') });
    const { notifications } = (await pump.callTool('notifications')) as { notifications: unknown };
    assert.deepEqual(notifications, [{ method: 'notifications/roots/list_changed' }, { method: 'notifications/x', params: { a: 1 } }]);
  });

  test('a cancelled exchange is cancelled at the child too (notifications/cancelled with its id and the reason); the child stays up', async (t) => {
    const pump = await startPump(t);
    await pump.start(mockParams('normal'));
    const abort = new AbortController();
    // Requests 1 and 2 were initialize and tools/list: this one is 3.
    const cancelled = pump.rpc('tools/call', { name: 'sleep', arguments: { ms: 5_000 } }, { signal: abort.signal });
    await sleep(200);
    abort.abort(new Error('the client gave up'));
    await assert.rejects(cancelled, { code: ErrorCode.REQUEST_CANCELLED });
    let seen: Array<{ method: string; params?: { requestId?: unknown; reason?: unknown } }> = [];
    for (let i = 0; i < 50 && seen.length === 0; i++) {
      seen = ((await pump.callTool('notifications')) as { notifications: typeof seen }).notifications;
      if (seen.length === 0) await sleep(20);
    }
    assert.equal(seen.length, 1, JSON.stringify(seen));
    assert.equal(seen[0]!.method, 'notifications/cancelled');
    assert.equal(seen[0]!.params?.requestId, 3);
    assert.equal(typeof seen[0]!.params?.reason, 'string');
    assert.equal(pump.exited.length, 0);
  });

  test('a notification flood never costs an answer, and what it leaves queued stays within the side queue', async (t) => {
    const pump = await startPump(t);
    await pump.start(mockParams('flood', { timeout_ms: 30_000 }));
    const texts = await Promise.all(Array.from({ length: 8 }, (_, n) => pump.rpc('tools/call', { name: 'echo', arguments: { text: `f${n}` } })));
    assert.equal(texts.length, 8);
    assert.ok(pump.messages.length > 0, 'notifications are relayed');
    assert.ok(pump.messages.every((m) => m.method === 'notifications/message' || m.method === 'notifications/progress'));
    const status = await pump.client.request('status', {});
    assert.ok(status.dropped_lines > 0, 'the flood outran the side queue: its oldest went');
  });
});
