// JSON-RPC 2.0 parsing for POST /mcp: every refusal names its code, its HTTP status and the id it could echo.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { errorResponse, parseMessage, resultResponse } from '../../../../supervisor/mcp/jsonRpc.js';

describe('parseMessage', () => {
  it('parses requests, notifications and client responses', () => {
    assert.deepEqual(parseMessage('{"jsonrpc":"2.0","id":1,"method":"ping"}'), { kind: 'request', id: 1, method: 'ping', params: undefined });
    assert.deepEqual(parseMessage('{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}'), { kind: 'request', id: 'a', method: 'tools/call', params: { name: 'x' } });
    assert.deepEqual(parseMessage('{"jsonrpc":"2.0","method":"notifications/initialized"}'), { kind: 'notification', method: 'notifications/initialized', params: undefined });
    assert.deepEqual(parseMessage('{"jsonrpc":"2.0","id":4,"result":{}}'), { kind: 'response', id: 4 });
  });

  const refusals: Array<[string, number, number, unknown]> = [
    ['{"jsonrpc":', -32700, 400, null],
    ['', -32700, 400, null],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, 400, null],
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
      const parsed = parseMessage(body);
      assert.equal(parsed.kind, 'invalid');
      if (parsed.kind !== 'invalid') return;
      assert.equal(parsed.code, code);
      assert.equal(parsed.status, status);
      assert.equal(parsed.id, id);
      assert.ok(parsed.message.length > 10);
    });
  }
});

describe('response builders', () => {
  it('splice a pre-serialized result and build errors that parse back', () => {
    assert.deepEqual(JSON.parse(resultResponse('x"y', '{"tools":[]}')), { jsonrpc: '2.0', id: 'x"y', result: { tools: [] } });
    assert.deepEqual(JSON.parse(errorResponse(null, -32601, 'Method not found: a')), { jsonrpc: '2.0', id: null, error: { code: -32601, message: 'Method not found: a' } });
    assert.deepEqual(JSON.parse(errorResponse(2, -32000, 'm', { why: 1 })).error, { code: -32000, message: 'm', data: { why: 1 } });
  });
});
