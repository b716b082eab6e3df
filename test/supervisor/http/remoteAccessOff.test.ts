/**
 * Turning remote access off while a TCP client holds a keep-alive connection: nothing more is served
 * on it. uWS keeps such a connection open, and its next request is refused with 403 JSON saying why;
 * the node engine closes idle connections with the listener, so the request meets a closed socket.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';

/** Reads one HTTP answer with a Content-Length body, or null when the server closes first. */
function readAnswer(sock: Socket): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    if (sock.closed) return resolve(null);
    let got = Buffer.alloc(0);
    const done = (value: { status: number; body: string } | null) => {
      sock.off('data', onData);
      sock.off('close', onClose);
      resolve(value);
    };
    const onData = (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const text = got.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (got.length < end + 4 + length) return;
      done({ status: Number(text.slice(9, 12)), body: got.subarray(end + 4, end + 4 + length).toString('utf8') });
    };
    const onClose = () => done(null);
    sock.on('data', onData);
    sock.on('close', onClose);
  });
}

describe('remote access turned off under an open connection', { timeout: 30_000 }, () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { lan_auth_bypass: true } } } });
  });
  after(() => t.stop());

  it('serves nothing more on it: 403 JSON on uWS, a closed connection on the node engine', async () => {
    const engine = (await t.socket('GET', '/health')).json().http_engine.name as string;
    const sock = connect({ host: '127.0.0.1', port: t.tcpPort! });
    sock.on('error', () => undefined);
    await new Promise((r) => sock.once('connect', r));
    const request = `GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${t.tcpPort}\r\n\r\n`;
    sock.write(request);
    assert.equal((await readAnswer(sock))?.status, 200, 'served while remote access is on');

    assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { enabled: false } } }))).status, 200);
    for (let i = 0; (await t.socket('GET', '/health')).json().listeners.tcp !== null; i++) {
      assert.ok(i < 100, 'the TCP listener never stopped');
      await new Promise((r) => setTimeout(r, 50));
    }
    const next = readAnswer(sock);
    if (!sock.closed) sock.write(request);
    const answer = await next;
    if (engine === 'uws') {
      assert.equal(answer?.status, 403);
      assert.deepEqual(JSON.parse(answer!.body), { error: 'remote access was turned off; this listener no longer serves requests', code: 'forbidden' });
    } else {
      assert.equal(answer, null, `the node engine closes idle connections with the listener, got ${JSON.stringify(answer)}`);
    }
    sock.destroy();
  });
});
