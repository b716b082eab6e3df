// CORS on a real tuicd, read from the raw response: a preflight must carry each CORS header once.
// Browsers refuse an answer whose Access-Control-Allow-Origin has more than one value ("*, *").
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { Tuicd } from '../../helpers/tuicdProcess.js';

/** Sends one request with Connection: close and returns the raw header lines of the answer. */
function rawHeaders(target: { path: string } | { host: string; port: number }, head: string): Promise<{ status: number; lines: string[] }> {
  return new Promise((resolve, reject) => {
    const sock = 'path' in target ? connect({ path: target.path }) : connect(target);
    let received = '';
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => {
      received += d;
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.destroy();
      const [statusLine, ...lines] = received.slice(0, end).split('\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]), lines });
    });
    sock.on('error', reject);
    sock.write(head);
  });
}

function valuesOf(lines: string[], name: string): string[] {
  const prefix = `${name.toLowerCase()}:`;
  return lines.filter((l) => l.toLowerCase().startsWith(prefix)).map((l) => l.slice(prefix.length).trim());
}

describe('CORS preflight on a real tuicd', () => {
  let t: Tuicd;
  before(async () => {
    const passwordHash = await hash('pw', { cost: 4 });
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { username: 'u', password_hash: passwordHash } } } });
  });
  after(() => t.stop());

  it('answers a TCP preflight from its own origin by echoing it once, never *', async () => {
    const self = `127.0.0.1:${t.tcpPort!}`;
    const r = await rawHeaders(
      { host: '127.0.0.1', port: t.tcpPort! },
      `OPTIONS /config HTTP/1.1\r\nHost: ${self}\r\nOrigin: http://${self}\r\nAccess-Control-Request-Method: PUT\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(r.status, 204);
    assert.deepEqual(valuesOf(r.lines, 'Access-Control-Allow-Origin'), [`http://${self}`]);
    assert.deepEqual(valuesOf(r.lines, 'Access-Control-Allow-Credentials'), ['true']);
    assert.deepEqual(valuesOf(r.lines, 'Access-Control-Expose-Headers'), ['Mcp-Session-Id']);
    assert.deepEqual(valuesOf(r.lines, 'Access-Control-Allow-Methods'), ['GET, POST, PUT, DELETE']);
  });

  it('refuses a TCP preflight from a foreign origin with 403 and no CORS headers', async () => {
    const r = await rawHeaders(
      { host: '127.0.0.1', port: t.tcpPort! },
      `OPTIONS /config HTTP/1.1\r\nHost: 127.0.0.1:${t.tcpPort!}\r\nOrigin: https://phone.example\r\nAccess-Control-Request-Method: PUT\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(r.status, 403);
    assert.deepEqual(valuesOf(r.lines, 'Access-Control-Allow-Origin'), []);
  });

  it('answers a socket preflight from a local origin by echoing it once', async () => {
    const r = await rawHeaders(
      { path: t.socketPath },
      'OPTIONS /sessions HTTP/1.1\r\nHost: x\r\nOrigin: http://localhost:1421\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n',
    );
    assert.equal(r.status, 204);
    assert.deepEqual(valuesOf(r.lines, 'Access-Control-Allow-Origin'), ['http://localhost:1421']);
    assert.deepEqual(valuesOf(r.lines, 'Vary'), ['Origin']);
  });

  it('still adds the CORS headers once to an ordinary answer', async () => {
    const r = await rawHeaders({ path: t.socketPath }, 'GET /health HTTP/1.1\r\nHost: x\r\nOrigin: http://127.0.0.1:5173\r\nConnection: close\r\n\r\n');
    assert.equal(r.status, 200);
    assert.deepEqual(valuesOf(r.lines, 'Access-Control-Allow-Origin'), ['http://127.0.0.1:5173']);
  });
});
