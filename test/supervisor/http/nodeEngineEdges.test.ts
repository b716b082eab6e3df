/**
 * Where Node's own parser or the `ws` package would answer for tuicd (empty or HTML bodies), the
 * node engine answers in the same JSON shape as every other error. (uWS's parser drops these
 * requests before any handler; they are node-engine behaviour.)
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { rawHttp, type RawAnswer } from '../../helpers/rawHttp.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const raw = (port: number, head: string): Promise<RawAnswer> => rawHttp({ port }, head);

describe('node engine: answers Node would give in other shapes', { timeout: 30_000 }, () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start({ args: ['--http-engine', 'node'], config: { services: { server: { enabled: true, port: 0 }, auth: { lan_auth_bypass: true } } } });
  });
  after(() => t.stop());

  it('a TCP request without Host reaches the guard: 403 JSON naming Host', async () => {
    const r = await raw(t.tcpPort!, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.equal(r.status, 403);
    assert.deepEqual(JSON.parse(r.body), { error: 'Host header is missing', code: 'forbidden', header: 'Host' });
  });

  it('an Expect other than 100-continue is a 417 in JSON', async () => {
    const r = await raw(t.tcpPort!, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: x-fuzz\r\nConnection: close\r\n\r\n');
    assert.equal(r.status, 417);
    assert.match(JSON.parse(r.body).error, /100-continue/);
  });

  it('a malformed WebSocket handshake is a 400 in JSON, not ws’s HTML', async () => {
    const s = await t.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh' }), { 'Content-Type': 'application/json' });
    const id = s.json().session_id;
    for (const [extra, why] of [
      ['Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n', /Sec-WebSocket-Key/],
      ['Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 7\r\n', /Version/],
    ] as const) {
      const r = await raw(t.tcpPort!, `GET /sessions/${id}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n${extra}\r\n`);
      assert.equal(r.status, 400);
      assert.match(r.headers['content-type'] ?? '', /application\/json/);
      assert.match(JSON.parse(r.body).error, why);
    }
  });
  it('a refused request whose body is still arriving gets its answer, not a reset: 60 KB of headers then 5 MB of body, 5 times', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await sendWhole(
        t.tcpPort!,
        `POST /logs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'A'.repeat(60_000)}\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n`,
        Buffer.alloc(5_000_000, 65),
      );
      assert.equal(r.error, undefined, `attempt ${i + 1}: ${r.error}`);
      assert.match(r.text, /^HTTP\/1\.1 431 /, `attempt ${i + 1}`);
      assert.deepEqual(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4)), { error: 'request headers too large', code: 'invalid_input' });
    }
  });
});

/** Writes head and body whole (as a client that does not read while sending), then reads until the server closes. */
function sendWhole(port: number, head: string, body: Buffer): Promise<{ text: string; error: string | undefined }> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    let text = '';
    let error: string | undefined;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    sock.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    sock.on('close', () => resolve({ text, error }));
    sock.write(head);
    sock.end(body);
  });
}
