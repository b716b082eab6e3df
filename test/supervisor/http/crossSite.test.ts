/**
 * A browser page elsewhere must not reach a shell through the TCP listener (issue 14's findings,
 * each of which used to succeed): a foreign Host or Origin is refused with 403 before auth, so
 * `lan_auth_bypass` cannot open it; a text/plain body (sent cross-site without a preflight) gets
 * 415; a WebSocket upgrade from a foreign origin never becomes 101; IP-literal origins get no pass.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import WebSocket from 'ws';

import { Tuicd } from '../../helpers/tuicdProcess.js';

const BASIC = 'Basic ' + Buffer.from('u:pw').toString('base64');
const JSON_TYPE = { 'Content-Type': 'application/json' };

/** The status a WebSocket upgrade gets: 101 when it opened, the refusal's status otherwise. */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

describe('cross-site requests on the TCP listener', { timeout: 60_000 }, () => {
  let t: Tuicd;
  let self: string;
  let sessionId: string;
  before(async () => {
    const passwordHash = await hash('pw', { cost: 4 });
    t = await Tuicd.start({
      config: {
        services: {
          server: { enabled: true, port: 0, allowed_hosts: ['tuic.example.ts.net'], allowed_origins: ['https://phone.example'] },
          auth: { username: 'u', password_hash: passwordHash, lan_auth_bypass: true },
        },
      },
    });
    self = `127.0.0.1:${t.tcpPort!}`;
    const created = await t.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh' }), JSON_TYPE);
    assert.equal(created.status, 201, created.text);
    sessionId = created.json().session_id;
  });
  after(() => t.stop());

  const sessionCount = async () => (await t.socket('GET', '/sessions')).json<unknown[]>().length;

  it('POST /sessions under a foreign Host or Origin is refused with 403 naming the header, credentials or not', async () => {
    const before = await sessionCount();
    for (const [headers, header] of [
      [{ Host: 'evil.example', Origin: 'http://evil.example', Authorization: BASIC }, 'Host'],
      [{ Host: `evil.example:${t.tcpPort!}` }, 'Host'],
      [{ Host: self, Origin: 'http://evil.example', Authorization: BASIC }, 'Origin'],
      [{ Host: self, Origin: 'http://evil.example' }, 'Origin'],
    ] as const) {
      const r = await t.tcp('POST', '/sessions', '{}', { ...JSON_TYPE, ...headers });
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.equal(r.json().header, header);
      assert.match(r.json().error, new RegExp(`${header} not allowed`));
      assert.equal(r.headers['access-control-allow-origin'], undefined, 'a refusal grants the origin nothing');
    }
    assert.equal(await sessionCount(), before, 'no shell was started');
  });

  it('an IP-literal Origin is no exception: tools/call over /mcp is refused', async () => {
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'session', arguments: { action: 'list' } } });
    const r = await t.tcp('POST', '/mcp', call, {
      ...JSON_TYPE,
      Accept: 'application/json, text/event-stream',
      Authorization: BASIC,
      Host: self,
      Origin: 'http://203.0.113.5',
    });
    assert.equal(r.status, 403);
    assert.equal(r.json().error.code, -32000, 'a JSON-RPC error on /mcp');
  });

  it('a WebSocket upgrade from a foreign origin is refused, from the own origin it opens', async () => {
    const url = `ws://${self}/sessions/${sessionId}/stream`;
    const foreign = await upgradeStatus(url, { Authorization: BASIC, Origin: 'http://evil.example' });
    assert.equal(foreign.status, 403);
    assert.match(foreign.body, /Origin not allowed/);
    assert.equal((await upgradeStatus(url, { Authorization: BASIC, Origin: `http://${self}` })).status, 101);
    assert.equal((await upgradeStatus(url, { Authorization: BASIC, Host: 'evil.example' })).status, 403);
  });

  it('a text/plain or form body on a state-changing route gets 415, JSON gets through', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await t.tcp('POST', `/sessions/${sessionId}/write`, JSON.stringify({ data: 'echo hi' }), { 'Content-Type': type, Authorization: BASIC });
      assert.equal(r.status, 415, type);
      assert.match(r.json().error, /Content-Type must be application\/json/);
    }
    assert.equal(
      (
        await t.tcp('POST', `/sessions/${sessionId}/write`, JSON.stringify({ data: '' }), {
          'Content-Type': 'application/json; charset=utf-8',
          Authorization: BASIC,
        })
      ).status,
      200,
    );
    // A bodiless POST needs no type.
    assert.equal((await t.tcp('POST', `/sessions/${sessionId}/pause`, undefined, { Authorization: BASIC })).status, 200);
  });

  it('a preflight from a foreign origin gets 403 and no CORS grant; never Access-Control-Allow-Origin: *', async () => {
    const r = await t.tcp('OPTIONS', '/sessions', undefined, { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' });
    assert.equal(r.status, 403);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    const own = await t.tcp('OPTIONS', '/sessions', undefined, { Origin: `http://${self}`, 'Access-Control-Request-Method': 'POST' });
    assert.equal(own.status, 204);
    assert.equal(own.headers['access-control-allow-origin'], `http://${self}`);
  });

  it('configured hosts and origins get through', async () => {
    const health = await t.tcp('GET', '/health', undefined, { Host: `tuic.example.ts.net:${t.tcpPort!}`, Origin: 'https://phone.example' });
    assert.equal(health.status, 200);
    assert.equal(health.headers['access-control-allow-origin'], 'https://phone.example');
  });

  it('the unix socket keeps its rules: no Host check, local origins only in CORS', async () => {
    const r = await t.socket('GET', '/health', undefined, { Host: 'evil.example', Origin: 'http://evil.example' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
  });
});
