// BodyParts replies on a real HttpServer over TCP: slices sent in order under one Content-Length
// (tryEnd + onWritable when the socket is full), byte-exact for a slow reader, compressed whole when
// accepted, and a reader that hangs up mid-body leaves the server answering.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';

import { BodyParts } from '../../../supervisor/http/bodyParts.js';
import { bindTcp, closeTcp, type TcpBinding } from '../../../supervisor/http/listeners.js';
import { HttpServer } from '../../../supervisor/http/server.js';
import { testTcpAuth } from '../../helpers/testAuth.js';
import { testEngine } from '../../helpers/httpEngine.js';

/** Far more than a paused reader's socket buffers hold on loopback, so the server must wait for writable. */
const BIG_BYTES = 8 * 1024 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Uneven slices, one of them empty, none on a round boundary. */
function sliced(whole: Buffer): Buffer[] {
  const cuts = [0, 7, 7, 1_048_579, 3_000_001, whole.length];
  return cuts.slice(1).map((end, i) => whole.subarray(cuts[i], end));
}

interface Answer {
  head: string;
  body: Buffer;
}

/** Reads one Content-Length-framed answer from `sock`, pausing `pauseMs` between reads (a slow reader). */
function readAnswer(sock: Socket, pauseMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let have = 0;
    /** Bytes of the whole answer (head + body), once the head is in. */
    let need = Infinity;
    let head = '';
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      have += chunk.length;
      if (need === Infinity) {
        const buf = Buffer.concat(chunks);
        const split = buf.indexOf(CRLFCRLF);
        if (split >= 0) {
          head = buf.subarray(0, split).toString('latin1');
          const length = /\r\ncontent-length: (\d+)/i.exec(head)?.[1];
          if (length === undefined) return reject(new Error(`no Content-Length: ${head}`));
          need = split + 4 + Number(length);
        }
      }
      if (have >= need) {
        sock.off('data', onData);
        sock.off('error', reject);
        const buf = Buffer.concat(chunks);
        return resolve({ head, body: buf.subarray(head.length + 4, need) });
      }
      if (pauseMs > 0) {
        sock.pause();
        setTimeout(() => sock.resume(), pauseMs);
      }
    };
    sock.on('data', onData);
    sock.on('error', reject);
  });
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port }, () => resolve(sock));
    sock.once('error', reject);
  });
}

describe('BodyParts replies', { timeout: 15_000 }, () => {
  const whole = randomBytes(BIG_BYTES);
  const small = Buffer.from('{"small":true,"padding":"' + 'x'.repeat(2000) + '"}');
  let tcp: TcpBinding;
  const sockets: Socket[] = [];

  before(async () => {
    const auth = testTcpAuth();
    const server = new HttpServer({
      engine: testEngine(),
      routes: [
        { method: 'GET', pattern: '/big', public: true, handler: () => ({ status: 200, body: new BodyParts(sliced(whole)) }) },
        // The async path: the answer leaves outside uWS's callback, after the abort handler is set.
        { method: 'GET', pattern: '/big-later', public: true, handler: async () => ({ status: 200, body: new BodyParts(sliced(whole)) }) },
        { method: 'GET', pattern: '/small', public: true, handler: () => ({ status: 200, body: new BodyParts([small.subarray(0, 10), small.subarray(10)]) }) },
      ],
      limits: () => ({ maxBodyBytes: 1024 * 1024, requestTimeoutMs: 10_000 }),
      auth,
    });
    tcp = await bindTcp(server.createApp('tcp').app, '127.0.0.1', 0);
  });

  after(() => {
    for (const sock of sockets) sock.destroy();
    closeTcp(tcp);
  });

  async function open(): Promise<Socket> {
    const sock = await connected(tcp.port);
    sockets.push(sock);
    return sock;
  }

  for (const path of ['/big', '/big-later']) {
    it(`GET ${path}: 8 MB in slices reaches a slow reader byte-exact, and the keep-alive connection answers again`, async () => {
      const sock = await open();
      sock.pause();
      sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      // Let the server fill the socket buffers and wait for writable.
      await sleep(200);
      const answer = readAnswer(sock, 1);
      sock.resume();
      const first = await answer;
      assert.match(first.head, /^HTTP\/1\.1 200 OK/);
      assert.match(first.head, new RegExp(`\\r\\ncontent-length: ${BIG_BYTES}(\\r\\n|$)`, 'i'));
      assert.doesNotMatch(first.head, /transfer-encoding/i);
      assert.ok(first.body.equals(whole), 'body differs from the joined slices');

      const next = readAnswer(sock, 0);
      sock.write('GET /small HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.ok((await next).body.equals(small));
    });
  }

  it('a client that accepts gzip gets the joined slices compressed', async () => {
    const sock = await open();
    const answer = readAnswer(sock, 0);
    sock.write('GET /small HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n');
    const got = await answer;
    assert.match(got.head, /\r\ncontent-encoding: gzip/i);
    assert.ok(gunzipSync(got.body).equals(small));
  });

  it('a reader that hangs up mid-body leaves the server answering others', async () => {
    const quitter = await open();
    const someBytes = new Promise<void>((resolve) => quitter.once('data', () => resolve()));
    quitter.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    await someBytes;
    quitter.pause();
    await sleep(100);
    quitter.destroy();
    await sleep(100);

    const sock = await open();
    const answer = readAnswer(sock, 0);
    sock.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.ok((await answer).body.equals(whole));
  });
});
