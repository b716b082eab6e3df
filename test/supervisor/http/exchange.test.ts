/**
 * The peer address is read from the uWS response only when asked, and never once the response was
 * answered or aborted (uWS throws on a discarded response). The response here is a stand-in with the
 * one method Exchange calls: a real uWS response exists only inside a request callback, and the
 * listener tests (tcpAuth, serverLimits) cover the address through real TCP requests.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { EngineResponse } from '../../../supervisor/http/engine/types.js';

import { Exchange } from '../../../supervisor/http/exchange.js';

function tcpResponse(address: string): { res: EngineResponse; reads: () => number } {
  let reads = 0;
  const discarded = { value: false };
  const res = {
    getRemoteAddressAsText(): ArrayBuffer {
      if (discarded.value) throw new Error('Invalid access of discarded or aborted uWS.HttpResponse!');
      reads++;
      return new TextEncoder().encode(address).buffer as ArrayBuffer;
    },
  } as unknown as EngineResponse;
  return { res, reads: () => reads };
}

describe('Exchange peer address', () => {
  it('is not read from uWS until someone asks, then once', () => {
    const { res, reads } = tcpResponse('0:0:0:0:0:ffff:7f00:1');
    const ex = new Exchange('GET', '/health', '', {}, 'tcp', res, false);
    assert.equal(reads(), 0);
    assert.equal(ex.remoteAddress, '127.0.0.1');
    assert.equal(ex.isLoopback, true);
    assert.equal(ex.remoteAddress, '127.0.0.1');
    assert.equal(reads(), 1);
  });

  it('asked first after the answer (or an abort) is unknown and not loopback, without touching uWS', () => {
    for (const end of ['done', 'aborted'] as const) {
      const { res, reads } = tcpResponse('127.0.0.1');
      const ex = new Exchange('POST', '/mcp', '', {}, 'tcp', res, false);
      ex[end] = true;
      assert.equal(ex.remoteAddress, '', end);
      assert.equal(ex.isLoopback, false, end);
      assert.equal(reads(), 0, end);
    }
  });

  it('read before the answer stays known after it', () => {
    const { res } = tcpResponse('203.0.113.7');
    const ex = new Exchange('POST', '/mcp', '', {}, 'tcp', res, false);
    assert.equal(ex.remoteAddress, '203.0.113.7');
    ex.done = true;
    assert.equal(ex.remoteAddress, '203.0.113.7');
  });

  it("is 'unix' on the socket, which is always loopback", () => {
    const ex = new Exchange('GET', '/health', '', {}, 'socket', null, false);
    assert.equal(ex.remoteAddress, 'unix');
    assert.equal(ex.isLoopback, true);
  });
});
