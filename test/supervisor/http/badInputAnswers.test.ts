/**
 * Findings of the fuzzer (test/fuzz), each answered now with a clear JSON 4xx: early refusals of a
 * request whose body is still arriving are no longer lost to a reset, deep JSON is refused before
 * anything walks it, long inputs are not echoed whole, and auth refusals are JSON like the rest.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';

import { Tuicd } from '../../helpers/tuicdProcess.js';

/** Head and body in separate writes on a raw TCP connection; resolves with the answer (status null: reset). */
function sendSlowly(port: number, head: string, body: Buffer): Promise<{ status: number | null; text: string }> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (got += d));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      resolve({ status: m ? Number(m[1]) : null, text: got.slice(got.indexOf('\r\n\r\n') + 4) });
    });
    sock.write(head, () => setTimeout(() => sock.end(body), 20));
  });
}

describe('bad input answers (fuzzer findings)', { timeout: 90_000 }, () => {
  let t: Tuicd;
  const BASIC = 'Basic ' + Buffer.from('u:pw').toString('base64');
  before(async () => {
    const passwordHash = await hash('pw', { cost: 4 });
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { username: 'u', password_hash: passwordHash } } } });
  });
  after(() => t.stop());

  it('a guard refusal, a 404 and a 405 reach the client even while a large body is still being sent', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 0x20);
    const port = t.tcpPort!;
    const cases: Array<[string, number]> = [
      [`POST /sessions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`, 403],
      [
        `POST /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${BASIC}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        404,
      ],
      [
        `PUT /logs/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${BASIC}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        405,
      ],
    ];
    for (const [head, status] of cases) {
      for (let round = 0; round < 4; round++) {
        const r = await sendSlowly(port, head, body);
        assert.equal(r.status, status, `${head.split('\r\n')[0]} round ${round}`);
        assert.ok(JSON.parse(r.text).error);
      }
    }
  });

  it('JSON nested deeper than 64 levels is a 400 before anything walks it (was a 500 stack overflow)', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const upstreams = (await t.socket('GET', '/mcp/upstreams')).json();
    const save = await t.socket(
      'PUT',
      '/mcp/upstreams',
      `{"base":${JSON.stringify(upstreams)},"config":{"servers":[{"id":"x","name":"x","transport":{"type":"stdio","command":"cat","cwd":${deep}}}]}}`,
      { 'Content-Type': 'application/json' },
    );
    assert.equal(save.status, 400, save.text);
    assert.match(save.json().error, /nests deeper than 64 levels/);
    const mcp = await t.socket('POST', '/mcp', `{"jsonrpc":"2.0","id":1,"method":"ping","params":${deep}}`, {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    });
    assert.equal(mcp.status, 400);
    assert.match(mcp.json().error.message, /nests deeper than 64 levels/);
    // A string full of brackets is no nesting.
    const flat = await t.socket('POST', '/logs', JSON.stringify({ level: 'info', source: 'app', message: '['.repeat(10_000) }), {
      'Content-Type': 'application/json',
    });
    assert.notEqual(flat.status, 500);
  });

  it('long inputs are quoted, not echoed whole: a 30 KB path, a 1 MB upstream name, a 100,000-element rows', async () => {
    const nf = await t.socket('GET', `/${'p'.repeat(30_000)}`);
    // Node's parser stops a 30 KB request line at its 16 KiB header limit (431); uWS reads it (404).
    assert.ok(nf.status === 404 || nf.status === 431, String(nf.status));
    assert.ok(nf.json().error);
    assert.ok(nf.text.length < 600, `${nf.text.length} bytes`);
    const reconnect = await t.socket('POST', '/mcp/upstreams/reconnect', JSON.stringify({ name: 'n'.repeat(1_000_000) }), {
      'Content-Type': 'application/json',
    });
    assert.equal(reconnect.status, 404);
    assert.ok(reconnect.text.length < 600, `${reconnect.text.length} bytes`);
    const s = await t.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh' }), { 'Content-Type': 'application/json' });
    const id = s.json().session_id;
    const resize = await t.socket('POST', `/sessions/${id}/resize`, JSON.stringify({ rows: new Array(100_000).fill(0), cols: 80 }), {
      'Content-Type': 'application/json',
    });
    assert.equal(resize.status, 400);
    assert.ok(resize.text.length < 600, `${resize.text.length} bytes`);
    const repo = await t.socket('POST', '/config/project-mcp-upstreams', JSON.stringify({ repoPath: 'é'.repeat(100_000), upstreamNames: [] }), {
      'Content-Type': 'application/json',
    });
    assert.equal(repo.status, 400);
    assert.ok(repo.text.length < 600, `${repo.text.length} bytes`);
  });

  it('auth refusals are JSON, with their fixed texts', async () => {
    const none = await t.tcp('GET', '/config');
    assert.equal(none.status, 401);
    assert.match(String(none.headers['content-type']), /application\/json/);
    assert.deepEqual(none.json(), { error: 'Scan the QR code or authenticate with Basic Auth', code: 'unauthorized' });
    const wrong = await t.tcp('GET', '/config', undefined, { Authorization: 'Basic ' + Buffer.from('u:nope').toString('base64') });
    assert.deepEqual(wrong.json(), { error: 'Invalid credentials', code: 'unauthorized' });
  });
});
