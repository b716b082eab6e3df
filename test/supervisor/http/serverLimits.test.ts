// Server limits on a real tuicd: body cap counted while streaming, 408 that never cuts a stream, CORS, compression, 404/405.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';

import { SseClient } from '../../helpers/sseClient.js';
import { rawRequest, Tuicd } from '../../helpers/tuicdProcess.js';

const MIB = 1024 * 1024;
/** Short enough for a test, longer than any fast handler on a loaded 2-core machine. */
const TEST_TIMEOUT_MS = 1500;

describe('server limits (socket and TCP)', () => {
  let t: Tuicd;
  const basic = 'Basic ' + Buffer.from('limits:pw').toString('base64');
  before(async () => {
    // Cost 4 keeps the fixture cheap; the server verifies whatever cost the hash says.
    const passwordHash = await hash('pw', { cost: 4 });
    t = await Tuicd.start({
      config: {
        services: { server: { enabled: true, port: 0, request_timeout_ms: TEST_TIMEOUT_MS }, auth: { username: 'limits', password_hash: passwordHash } },
      },
    });
  });

  /** POSTs a body with Connection: close, so the answer is complete when the server closes. */
  function postTolerant(via: 'socket' | 'tcp', path: string, body: Buffer): Promise<{ status: number; text: string }> {
    const auth = via === 'tcp' ? `Authorization: ${basic}\r\n` : '';
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    return rawRequest(via === 'socket' ? { path: t.socketPath } : { host: '127.0.0.1', port: t.tcpPort! }, head, body);
  }

  after(() => t.stop());

  for (const via of ['socket', 'tcp'] as const) {
    it(`${via}: a body of exactly 2 MiB passes the limit, 2 MiB + 1 gets 413`, async () => {
      const send = (body: Buffer) => postTolerant(via, '/events/types', body);
      const exact = await send(Buffer.alloc(2 * MIB, 0x20));
      assert.equal(exact.status, 400, 'reached the handler, which refuses whitespace as JSON');
      const over = await send(Buffer.alloc(2 * MIB + 1, 0x20));
      assert.equal(over.status, 413);
      assert.match(over.text, /exceeds 2097152 bytes/);
    });
  }

  /** Streams chunked bytes on a raw socket until `total` (then the closing chunk) or until the server ends it. */
  function streamChunked(total: number, terminate: boolean): Promise<{ received: string; sent: number }> {
    return new Promise((resolve) => {
      const sock = connect({ path: t.socketPath });
      let received = '';
      let sent = 0;
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        sock.destroy();
        resolve({ received, sent });
      };
      sock.setEncoding('utf8');
      sock.on('data', (d: string) => {
        received += d;
        if (received.includes('\r\n\r\n')) setTimeout(finish, 50);
      });
      sock.on('error', finish);
      sock.on('close', finish);
      sock.write('POST /events/types HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n');
      const chunk = Buffer.concat([Buffer.from('40000\r\n'), Buffer.alloc(0x40000, 0x20), Buffer.from('\r\n')]);
      const pump = () => {
        while (!finished && sent < total) {
          sent += 0x40000;
          if (!sock.write(chunk)) return void sock.once('drain', pump);
        }
        if (!finished && terminate) sock.write('0\r\n\r\n');
      };
      pump();
    });
  }

  it('counts a chunked body (no Content-Length) as it streams and answers 413', async () => {
    const r = await streamChunked(3 * MIB, true);
    assert.match(r.received, /^HTTP\/1\.1 413 /);
  });

  it('cuts off an endless chunked upload soon after the limit instead of reading it all', async () => {
    const r = await streamChunked(64 * MIB, false);
    assert.ok(r.sent < 64 * MIB, `the server ended the upload early (${r.sent} bytes sent)`);
    // Closing on a client that is still sending may reset the connection before the 413 is read.
    if (r.received !== '') assert.match(r.received, /^HTTP\/1\.1 413 /);
  });

  it('answers 408 when a handler overruns the request timeout, while an SSE stream opened earlier keeps receiving', async () => {
    const sse = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
    try {
      assert.equal(sse.status, 200);
      // bcrypt cost 12 takes ~250 ms idle; hashing a few in parallel on 2 cores overruns 1.5 s... not reliably.
      // Instead block on a request whose body never finishes: the handler cannot answer, the timer must.
      const started = Date.now();
      const status = await new Promise<number>((resolve, reject) => {
        const req = request({ socketPath: t.socketPath, method: 'PUT', path: '/config', agent: false, headers: { 'Content-Length': '100' } }, (res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
        });
        req.on('error', reject);
        req.write('{"a":'); // 5 of the promised 100 bytes, then silence
      });
      assert.equal(status, 408);
      assert.ok(Date.now() - started >= TEST_TIMEOUT_MS - 50);
      await new Promise((r) => setTimeout(r, 200));
      // The stream outlived the timeout: it still receives a fresh event.
      const put = await t.socket('PUT', '/config', JSON.stringify({ collapse_tools: true }));
      assert.equal(put.status, 200);
      const ev = await sse.waitFor((e) => e.event === 'config-changed');
      assert.deepEqual(JSON.parse(ev.data).paths, ['collapse_tools']);
      assert.ok(sse.raw.startsWith('retry: 5000'), 'retry directive first');
    } finally {
      sse.close();
    }
  });

  it('answers 404 JSON for an unknown path and 405 with Allow for a wrong method', async () => {
    const nf = await t.socket('GET', '/sessions-nope/x');
    assert.equal(nf.status, 404);
    assert.deepEqual(nf.json(), { error: 'no such endpoint: /sessions-nope/x', code: 'not_found' });
    const na = await t.socket('DELETE', '/health');
    assert.equal(na.status, 405);
    assert.equal(na.headers['allow'], 'GET');
  });

  it('a WebSocket upgrade with a malformed %-escape gets 404 (401 without credentials on TCP), and the server lives on', async () => {
    const upgrade = (auth: string) =>
      `GET /sessions/%E0%A4%A/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Upgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    const viaSocket = await rawRequest({ path: t.socketPath }, upgrade(''), Buffer.alloc(0));
    assert.equal(viaSocket.status, 404);
    assert.deepEqual(JSON.parse(viaSocket.text), { error: 'no such endpoint: /sessions/%E0%A4%A/stream', code: 'not_found' });
    const tcp = { host: '127.0.0.1', port: t.tcpPort! };
    assert.equal((await rawRequest(tcp, upgrade(''), Buffer.alloc(0))).status, 401, 'credentials are checked before the path');
    assert.equal((await rawRequest(tcp, upgrade(`Authorization: ${basic}\r\n`), Buffer.alloc(0))).status, 404);
    assert.equal((await t.socket('GET', '/health')).status, 200);
  });

  it('HEAD is served bodiless from a GET route with its Content-Length, and refused with 405 on the /events stream', async () => {
    const head = await rawRequest({ path: t.socketPath }, 'HEAD /config HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', Buffer.alloc(0));
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const get = await t.socket('GET', '/config');
    assert.match(head.head, new RegExp(`\\r\\ncontent-length: ${get.body.length}\\r\\n`, 'i'), 'HEAD says the length GET sends');
    const events = await rawRequest({ path: t.socketPath }, 'HEAD /events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', Buffer.alloc(0));
    assert.equal(events.status, 405);
    assert.equal(events.text, '', 'no event stream written on a HEAD');
  });

  it('compresses responses over 860 bytes with br or gzip when accepted, never small ones', async () => {
    const plain = await t.socket('GET', '/config');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.body.length > 860);
    const br = await t.socket('GET', '/config', undefined, { 'Accept-Encoding': 'gzip, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.body).toString()), plain.json());
    const gz = await t.socket('GET', '/config', undefined, { 'Accept-Encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(gunzipSync(gz.body).toString()), plain.json());
    const small = await t.socket('GET', '/stats', undefined, { 'Accept-Encoding': 'gzip, br' });
    assert.equal(small.headers['content-encoding'], undefined);
  });

  it('never compresses the SSE stream', async () => {
    const sse = await SseClient.open({ socketPath: t.socketPath, path: '/events', headers: { 'Accept-Encoding': 'gzip, br' } });
    try {
      await new Promise((r) => setTimeout(r, 100));
      assert.ok(sse.raw.startsWith('retry: 5000'));
    } finally {
      sse.close();
    }
  });

  it('CORS: the socket admits local origins only; TCP its own origin only', async () => {
    const local = await t.socket('GET', '/stats', undefined, { Origin: 'http://localhost:1421' });
    assert.equal(local.headers['access-control-allow-origin'], 'http://localhost:1421');
    const foreign = await t.socket('GET', '/stats', undefined, { Origin: 'https://evil.example' });
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
    const pre = await t.socket('OPTIONS', '/config', undefined, { Origin: 'http://127.0.0.1', 'Access-Control-Request-Method': 'PUT' });
    assert.equal(pre.status, 204);
    assert.match(String(pre.headers['access-control-allow-methods']), /PUT/);
    assert.match(String(pre.headers['access-control-allow-headers']), /Authorization/);
    const own = `http://127.0.0.1:${t.tcpPort!}`;
    const remote = await t.tcp('GET', '/health', undefined, { Origin: own });
    assert.equal(remote.headers['access-control-allow-origin'], own);
    const elsewhere = await t.tcp('GET', '/health', undefined, { Origin: 'https://phone.example' });
    assert.equal(elsewhere.status, 403);
    assert.equal(elsewhere.headers['access-control-allow-origin'], undefined);
    const sse = await SseClient.open({ socketPath: t.socketPath, path: '/events', headers: { Origin: 'http://localhost:1421' } });
    try {
      assert.equal(sse.headers['access-control-allow-origin'], 'http://localhost:1421', 'EventSource in a browser needs CORS too');
    } finally {
      sse.close();
    }
  });
});
