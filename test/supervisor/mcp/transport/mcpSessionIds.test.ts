// Issue 26 item 11 on a real tuicd: an Mcp-Session-Id outside 1-256 visible ASCII is refused on
// POST, GET and DELETE /mcp with the transport's JSON-RPC error (400, id null or the request's,
// -32000), whatever bytes carry it; DELETE of an id the server does not hold is 404; a well-formed
// id the server no longer holds is still served on POST (the deliberate recovery).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { rawRequest, Tuicd } from '../../../helpers/tuicdProcess.js';
import { initialize, rpc } from './mcpHttp.js';

const CHARSET_MESSAGE = 'Bad Request: Mcp-Session-Id must be 1-256 visible ASCII characters';

describe('Mcp-Session-Id charset and DELETE of unknown ids', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start();
  });
  after(() => t.stop());

  /** One /mcp request over a raw socket, the header value given as bytes (node:http would refuse some). */
  async function send(method: 'POST' | 'GET' | 'DELETE', value: Buffer): Promise<{ status: number; text: string }> {
    const body = method === 'POST' ? Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })) : Buffer.alloc(0);
    const head = Buffer.concat([
      Buffer.from(
        `${method} /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\nMcp-Session-Id: `,
      ),
      value,
      Buffer.from('\r\n\r\n'),
    ]);
    const r = await rawRequest({ path: t.socketPath }, head.toString('latin1'), body);
    return { status: r.status, text: r.text };
  }

  it('refuses ids outside 1-256 visible ASCII on POST, GET and DELETE with the JSON-RPC error', async () => {
    const bad: [string, Buffer][] = [
      ['UTF-8 ñññ', Buffer.from('ñññ', 'utf8')],
      ['Latin-1 ñññ', Buffer.from('ñññ', 'latin1')],
      ['a byte over 0x7e', Buffer.from([0x61, 0x80, 0x62])],
      ['empty', Buffer.alloc(0)],
      ['inner space', Buffer.from('a b')],
      ['257 characters', Buffer.from('x'.repeat(257))],
    ];
    for (const [what, value] of bad) {
      for (const method of ['POST', 'GET', 'DELETE'] as const) {
        const r = await send(method, value);
        assert.equal(r.status, 400, `${method} with ${what}: ${r.text}`);
        const answer = JSON.parse(r.text);
        assert.deepEqual(
          answer,
          { jsonrpc: '2.0', id: method === 'POST' ? 7 : null, error: { code: -32000, message: CHARSET_MESSAGE, data: { code: 'invalid_input' } } },
          `${method} with ${what}`,
        );
      }
    }
  });

  it('serves a well-formed id it does not hold on POST, up to 256 characters', async () => {
    for (const id of ['!', '~'.repeat(256), 'stale-0123']) {
      const r = await rpc(t, 'ping', undefined, { 'Mcp-Session-Id': id });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json().result, {});
    }
  });

  it('answers DELETE of an id it does not hold with 404, of a live one with 200, and 404 once it is gone', async () => {
    const notFound = {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Not Found: no MCP session has this Mcp-Session-Id', data: { code: 'not_found' } },
    };
    const unknown = await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': 'never-made-0123' });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json(), notFound);
    const { id } = await initialize(t);
    assert.equal((await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': id })).status, 200);
    const again = await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': id });
    assert.equal(again.status, 404);
    assert.deepEqual(again.json(), notFound);
  });
});
