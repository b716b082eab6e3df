/**
 * Turning remote access off while a TCP client holds a connection: nothing more is served on it.
 * Both engines keep such a connection open (until its keep-alive timeout), and its next request is
 * refused with 403 JSON saying why: a connection accepted just before the listener stopped gets that
 * answer, never a reset.
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

  it('serves nothing more on it: 403 JSON saying why, on both engines', async () => {
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
    assert.equal(answer?.status, 403);
    assert.deepEqual(JSON.parse(answer!.body), { error: 'remote access was turned off; this listener no longer serves requests', code: 'forbidden' });
    sock.destroy();
  });

  it('a connection opened just before the listener stopped, its request not yet sent, gets the 403 too', async () => {
    assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { enabled: true, port: 0 } } }))).status, 200);
    let port: number | null = null;
    for (let i = 0; (port = (await t.socket('GET', '/health')).json().listeners.tcp?.port ?? null) === null; i++) {
      assert.ok(i < 100, 'the TCP listener never came back');
      await new Promise((r) => setTimeout(r, 50));
    }
    const sock = connect({ host: '127.0.0.1', port });
    sock.on('error', () => undefined);
    await new Promise((r) => sock.once('connect', r));
    assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { enabled: false } } }))).status, 200);
    for (let i = 0; (await t.socket('GET', '/health')).json().listeners.tcp !== null; i++) {
      assert.ok(i < 100, 'the TCP listener never stopped');
      await new Promise((r) => setTimeout(r, 50));
    }
    const answer = readAnswer(sock);
    sock.write(`GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    assert.equal((await answer)?.status, 403);
    sock.destroy();
  });
});
