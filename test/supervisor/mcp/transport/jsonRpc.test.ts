// JSON-RPC 2.0 parsing for POST /mcp: every refusal names its code, its HTTP status and the id it
// could echo; an array is a batch of messages validated one by one, bounded in length.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { errorResponse, MAX_BATCH_MESSAGES, parseBody, resultResponse } from '../../../../supervisor/mcp/jsonRpc.js';

describe('parseBody', () => {
  it('parses requests, notifications and client responses', () => {
    assert.deepEqual(parseBody('{"jsonrpc":"2.0","id":1,"method":"ping"}'), { kind: 'request', id: 1, method: 'ping', params: undefined });
    assert.deepEqual(parseBody('{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}'), {
      kind: 'request',
      id: 'a',
      method: 'tools/call',
      params: { name: 'x' },
    });
    assert.deepEqual(parseBody('{"jsonrpc":"2.0","method":"notifications/initialized"}'), {
      kind: 'notification',
      method: 'notifications/initialized',
      params: undefined,
    });
    assert.deepEqual(parseBody('{"jsonrpc":"2.0","id":4,"result":{}}'), { kind: 'response', id: 4, result: {} });
    assert.deepEqual(parseBody('{"jsonrpc":"2.0","id":"q","error":{"code":-1,"message":"no"}}'), {
      kind: 'response',
      id: 'q',
      error: { code: -1, message: 'no' },
    });
  });

  const refusals: Array<[string, number, number, unknown]> = [
    ['{"jsonrpc":', -32700, 400, null],
    ['', -32700, 400, null],
    ['[]', -32600, 400, null],
    ['42', -32600, 400, null],
    ['{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, 400, null],
    ['{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, 400, null],
    ['{"id":3,"method":"ping"}', -32600, 400, 3],
    ['{"jsonrpc":"2.0","id":5,"method":""}', -32600, 400, 5],
    ['{"jsonrpc":"2.0","id":5}', -32600, 400, 5],
    ['{"jsonrpc":"2.0","id":6,"method":"ping","params":[1]}', -32602, 200, 6],
    ['{"jsonrpc":"2.0","method":"notifications/x","params":"s"}', -32600, 400, null],
  ];
  for (const [body, code, status, id] of refusals) {
    it(`refuses ${JSON.stringify(body)} with ${code}/${status}`, () => {
      const parsed = parseBody(body);
      assert.equal(parsed.kind, 'invalid');
      if (parsed.kind !== 'invalid') return;
      assert.equal(parsed.code, code);
      assert.equal(parsed.status, status);
      assert.equal(parsed.id, id);
      assert.ok(parsed.message.length > 10);
    });
  }

  it('parses an array as a batch, each entry validated on its own (an invalid one answered in place)', () => {
    const parsed = parseBody(
      '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},42,{"jsonrpc":"2.0","id":2,"result":{}}]',
    );
    assert.equal(parsed.kind, 'batch');
    if (parsed.kind !== 'batch') return;
    assert.deepEqual(parsed.messages.slice(0, 2), [
      { kind: 'request', id: 1, method: 'ping', params: undefined },
      { kind: 'notification', method: 'notifications/initialized', params: undefined },
    ]);
    assert.equal(parsed.messages[2]!.kind, 'invalid');
    assert.deepEqual(parsed.messages[3], { kind: 'response', id: 2, result: {} });
  });

  it(`refuses a batch longer than ${MAX_BATCH_MESSAGES} messages whole, naming the limit`, () => {
    const entry = { jsonrpc: '2.0', method: 'notifications/initialized' };
    assert.equal(parseBody(JSON.stringify(Array(MAX_BATCH_MESSAGES).fill(entry))).kind, 'batch');
    const parsed = parseBody(JSON.stringify(Array(MAX_BATCH_MESSAGES + 1).fill(entry)));
    assert.equal(parsed.kind, 'invalid');
    if (parsed.kind !== 'invalid') return;
    assert.equal(parsed.status, 400);
    assert.equal(parsed.code, -32600);
    assert.equal(parsed.message, `Invalid Request: a batch of ${MAX_BATCH_MESSAGES + 1} messages; the limit is ${MAX_BATCH_MESSAGES}`);
  });

  it('keeps a parse error short whatever the input', () => {
    const parsed = parseBody('{"a":"' + 'x'.repeat(1_000_000));
    assert.equal(parsed.kind, 'invalid');
    if (parsed.kind !== 'invalid') return;
    assert.ok(parsed.message.length < 300, parsed.message);
  });
});

describe('response builders', () => {
  it('splice a pre-serialized result and build errors that parse back', () => {
    assert.deepEqual(JSON.parse(resultResponse('x"y', '{"tools":[]}')), { jsonrpc: '2.0', id: 'x"y', result: { tools: [] } });
    assert.deepEqual(JSON.parse(errorResponse(null, -32601, 'Method not found: a')), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32601, message: 'Method not found: a', data: { code: 'not_found' } },
    });
    assert.deepEqual(JSON.parse(errorResponse(2, -32000, 'm', { why: 1 })).error, { code: -32000, message: 'm', data: { code: 'invalid_input', why: 1 } });
  });

  it("carry the error model's code in data.code: from the JSON-RPC code, unless the caller names another", () => {
    const dataCode = (code: number, data?: Record<string, unknown>) => JSON.parse(errorResponse(1, code, 'm', data)).error.data.code;
    assert.equal(dataCode(-32700), 'invalid_input');
    assert.equal(dataCode(-32600), 'invalid_input');
    assert.equal(dataCode(-32601), 'not_found');
    assert.equal(dataCode(-32602), 'invalid_input');
    assert.equal(dataCode(-32603), 'internal');
    assert.equal(dataCode(-32000), 'invalid_input');
    assert.equal(dataCode(-32000, { code: 'forbidden' }), 'forbidden');
    assert.equal(dataCode(-31999), 'internal', 'a number outside the table is ours to explain');
  });
});
