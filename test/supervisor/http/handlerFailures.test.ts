// A handler bug must cost one answer or one socket, never the process: uWS turns any exception
// that escapes its callbacks into the death of the server (and here, of the test runner itself).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import WebSocket from 'ws';

import { bindTcp, closeTcp, type TcpBinding } from '../../../supervisor/http/listeners.js';
import { HttpServer } from '../../../supervisor/http/server.js';
import { testTcpAuth } from '../../helpers/testAuth.js';
import { testEngine } from '../../helpers/httpEngine.js';

const BASIC = 'Basic ' + Buffer.from('admin:pw').toString('base64');

/** One request on a fresh connection; resolves with the status and body once the server closes it. */
function get(port: number, path: string, auth = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    let received = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (received += d));
    sock.on('error', reject);
    sock.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(received)}`));
      resolve({ status: Number(m[1]), body: received.slice(received.indexOf('\r\n\r\n') + 4) });
    });
    sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: ${BASIC}\r\n` : ''}Connection: close\r\n\r\n`);
  });
}

/** Opens a WebSocket, optionally sends one message, and resolves with the close code. */
function wsCloseCode(port: number, path: string, send?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers: { Authorization: BASIC } });
    ws.on('open', () => {
      if (send !== undefined) ws.send(send);
    });
    ws.on('close', (code: number) => resolve(code));
    ws.on('error', reject);
  });
}

describe('handler failures cost one answer or one socket, never the server', { timeout: 20_000 }, () => {
  let tcp: TcpBinding;
  const logged: string[] = [];
  const boom = (where: string) => (): never => {
    throw new Error(`${where} failed`);
  };

  before(async () => {
    const auth = testTcpAuth(await hash('pw', { cost: 4 }));
    const server = new HttpServer({
      engine: testEngine(),
      routes: [
        { method: 'GET', pattern: '/ok', public: true, handler: () => ({ status: 200, body: { ok: true } }) },
        // A stream whose start throws, without auth (inside uWS's callback) and after auth (in a promise).
        { method: 'GET', pattern: '/stream-public', public: true, handler: { stream: boom('public stream') } },
        { method: 'GET', pattern: '/stream-authed', handler: { stream: boom('authed stream') } },
      ],
      wsRoutes: [
        { pattern: '/ws-open', ws: { accept: () => ({}), open: boom('ws open'), maxBackpressure: 64 * 1024, maxPayloadLength: 64 * 1024 } },
        { pattern: '/ws-message', ws: { accept: () => ({}), message: boom('ws message'), maxBackpressure: 64 * 1024, maxPayloadLength: 64 * 1024 } },
      ],
      limits: () => ({ maxBodyBytes: 1024 * 1024, requestTimeoutMs: 10_000 }),
      auth,
      onHandlerError: (err) => logged.push((err as Error).message),
    });
    tcp = await bindTcp(server.createApp('tcp').app, '127.0.0.1', 0);
  });

  after(() => closeTcp(tcp));

  it('a stream that throws as it starts gets a 500, with and without auth', async () => {
    const open = await get(tcp.port, '/stream-public');
    assert.equal(open.status, 500);
    assert.deepEqual(JSON.parse(open.body), { error: 'public stream failed', code: 'internal' });
    const authed = await get(tcp.port, '/stream-authed', true);
    assert.equal(authed.status, 500);
    assert.deepEqual(JSON.parse(authed.body), { error: 'authed stream failed', code: 'internal' });
    assert.equal((await get(tcp.port, '/ok')).status, 200);
  });

  it('a WebSocket callback that throws closes that socket with 1011, and the server goes on', async () => {
    assert.equal(await wsCloseCode(tcp.port, '/ws-open'), 1011);
    assert.equal(await wsCloseCode(tcp.port, '/ws-message', 'hello'), 1011);
    assert.equal((await get(tcp.port, '/ok')).status, 200);
  });

  it('every failure reached the error log', () => {
    for (const where of ['public stream failed', 'authed stream failed', 'ws open failed', 'ws message failed'])
      assert.ok(logged.includes(where), `${where} not logged: ${JSON.stringify(logged)}`);
  });
});
