/** The JSON-RPC line helpers: the byte pre-check never turns a response away, replies are told from server requests, which get answers. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  answerLine,
  hasNewline,
  isNotificationOnly,
  mayBeMessage,
  mayCarryId,
  notificationLine,
  parseIncoming,
  requestLine,
} from '../../../workers/proxy-stdio/jsonRpcLines.js';

const parseReply = (bytes: Buffer) => {
  const incoming = parseIncoming(bytes);
  return incoming !== undefined && 'reply' in incoming ? incoming.reply : undefined;
};

const line = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

test('the pre-check skips notifications and log messages without parsing', () => {
  assert.equal(mayCarryId(line({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi "there"' } })), false);
  assert.equal(mayCarryId(Buffer.from('not json at all')), false);
});

test('the pre-check never turns a response away, whatever its key order, spacing or escapes', () => {
  for (const text of [
    '{"jsonrpc":"2.0","id":1,"result":{}}',
    '{"result":{"content":[]},"jsonrpc":"2.0","id":7}',
    '{ "jsonrpc" : "2.0" , "id" : 2 , "error" : {"code":-1,"message":"x"} }',
    '{"jsonrpc":"2.0","\\u0069d":3,"result":null}',
    '{"jsonrpc":"2.0","i\\u0064":4,"result":null}',
  ]) {
    assert.equal(mayCarryId(Buffer.from(text)), true, text);
    assert.notEqual(parseReply(Buffer.from(text)), undefined, text);
  }
});

test('replies: result, error (normalised), missing result as null', () => {
  assert.deepEqual(parseReply(line({ jsonrpc: '2.0', id: 5, result: { ok: true } })), { id: 5, error: undefined, result: { ok: true } });
  assert.deepEqual(parseReply(line({ jsonrpc: '2.0', id: 6, error: { code: -32601, message: 'nope', data: [1] } })), {
    id: 6,
    error: { code: -32601, message: 'nope', data: [1] },
    result: undefined,
  });
  assert.deepEqual(parseReply(line({ jsonrpc: '2.0', id: 7, error: { code: 'x' } }))?.error, { code: -32603, message: '"upstream error without a message"' });
  assert.deepEqual(parseReply(line({ jsonrpc: '2.0', id: 8 })), { id: 8, error: undefined, result: null });
});

test("server requests and notifications carrying an id are not replies (their ids are the server's own)", () => {
  assert.equal(parseReply(line({ jsonrpc: '2.0', id: 1, method: 'ping' })), undefined);
  assert.deepEqual(parseIncoming(line({ jsonrpc: '2.0', id: 1, method: 'ping' })), { request: { id: 1, method: 'ping' } });
  assert.deepEqual(parseIncoming(line({ jsonrpc: '2.0', id: 's-9', method: 'roots/list' })), { request: { id: 's-9', method: 'roots/list' } });
  assert.deepEqual(parseIncoming(line({ jsonrpc: '2.0', method: 'notifications/progress', params: { id: 1 } })), {
    notification: { method: 'notifications/progress', params: { id: 1 } },
  });
  assert.equal(parseReply(line({ jsonrpc: '2.0', id: '1', result: {} })), undefined);
  assert.equal(parseReply(line([{ jsonrpc: '2.0', id: 1, result: {} }])), undefined);
  assert.equal(parseReply(Buffer.from('{"id":1,')), undefined);
});

test('request and notification lines are one compact frame each', () => {
  const params = line({ name: 'echo', arguments: { text: 'a\nb' } });
  assert.equal(hasNewline(params), false);
  const request = requestLine(42, 'tools/call', params);
  assert.equal(request.indexOf(0x0a), request.length - 1);
  assert.deepEqual(JSON.parse(request.toString()), { jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'echo', arguments: { text: 'a\nb' } } });
  assert.deepEqual(JSON.parse(requestLine(1, 'tools/list', undefined).toString()), { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.deepEqual(JSON.parse(notificationLine('notifications/initialized').toString()), { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(hasNewline(Buffer.from('{"a":\n1}')), true);
});

test('answers to server requests: an empty result, a result spliced from bytes, an error; the id echoed as sent; one frame each', () => {
  assert.deepEqual(JSON.parse(answerLine(7, undefined).toString()), { jsonrpc: '2.0', id: 7, result: {} });
  assert.deepEqual(JSON.parse(answerLine('r-1', line({ roots: [{ uri: 'file:///a' }] })).toString()), {
    jsonrpc: '2.0',
    id: 'r-1',
    result: { roots: [{ uri: 'file:///a' }] },
  });
  const refused = answerLine('abc"1', undefined, { code: -32601, message: 'Method not found: x/y' });
  assert.equal(refused.indexOf(0x0a), refused.length - 1, 'one frame');
  assert.deepEqual(JSON.parse(refused.toString()), { jsonrpc: '2.0', id: 'abc"1', error: { code: -32601, message: 'Method not found: x/y' } });
});

test('notifications: kept by the pre-check, told apart as notification-only, parsed with their params', () => {
  const progress = line({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });
  assert.equal(mayBeMessage(progress), true);
  assert.equal(isNotificationOnly(progress), true);
  assert.deepEqual(parseIncoming(progress), { notification: { method: 'notifications/progress', params: { progressToken: 't', progress: 1 } } });
  assert.equal(mayBeMessage(Buffer.from('{"jsonrpc":"2.0","result":1}')), false, 'neither an id nor a method: nothing to do with it');
  assert.equal(isNotificationOnly(line({ jsonrpc: '2.0', id: 1, method: 'roots/list' })), false, 'a request is no notification');
  assert.deepEqual(parseIncoming(line({ jsonrpc: '2.0', id: 2, method: 'sampling/createMessage', params: { maxTokens: 5 } })), {
    request: { id: 2, method: 'sampling/createMessage', params: { maxTokens: 5 } },
  });
});
