// Issue 26 item 6 on a real tuicd over TCP: a wrong ?token= and a wrong tui-session cookie count as
// failed logins per peer address, with the lockout Basic and /auth/login have; another address
// (127.0.0.2 on loopback) keeps its own count.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { httpRequest, Tuicd, type HttpAnswer } from '../../helpers/tuicdProcess.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const TOKEN = 'tok-4f9a0c2e7d1b4a8e9c3f5d6b7a8e9f01';
const MAX_FAILURES = 4;

describe('token and cookie guessing over TCP', () => {
  let t: Tuicd;
  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      config: {
        services: {
          server: { enabled: true, port: 0 },
          auth: { username: USER, password_hash: passwordHash, session_token: TOKEN, auth_rate_limit_max: MAX_FAILURES, auth_rate_limit_window_secs: 300 },
        },
      },
    });
  });
  after(() => t.stop());

  /** A GET over TCP from one loopback address: 127.0.0.1 and 127.0.0.2 are two peers to the limiter. */
  const from = (localAddress: string, path: string, headers: Record<string, string> = {}): Promise<HttpAnswer> =>
    httpRequest({ host: '127.0.0.1', port: t.tcpPort!, localAddress, method: 'GET', path, headers: { Host: `127.0.0.1:${t.tcpPort}`, ...headers } });

  function assertLockedOut(r: HttpAnswer, what: string): void {
    assert.equal(r.status, 429, what);
    const retry = Number(r.headers['retry-after']);
    assert.ok(retry > 0 && retry <= 301, `${what}: Retry-After ${r.headers['retry-after']}`);
    assert.deepEqual(r.json(), { error: 'Too many failed authentication attempts', code: 'busy' });
  }

  it('locks an address out after N wrong tokens; the right token still works from another address', async () => {
    for (let i = 0; i < MAX_FAILURES; i++) {
      const r = await from('127.0.0.2', `/stats?token=guess-${i}`);
      assert.equal(r.status, 401);
      assert.deepEqual(r.json(), { error: 'Invalid credentials', code: 'unauthorized' });
    }
    assertLockedOut(await from('127.0.0.2', '/stats?token=guess-x'), 'the next guess');
    assertLockedOut(await from('127.0.0.2', `/stats?token=${TOKEN}`), 'the right token, from the locked-out address');
    const ok = await from('127.0.0.3', `/stats?token=${TOKEN}`);
    assert.equal(ok.status, 200, 'another address has its own count');
    assert.match(String(ok.headers['set-cookie']), /^tui-session=/);
  });

  it('counts wrong cookies the same way, and expires them', async () => {
    const first = await from('127.0.0.4', '/stats', { Cookie: 'tui-session=guess-0' });
    assert.equal(first.status, 401);
    assert.match(String(first.headers['set-cookie']), /^tui-session=; .*Max-Age=0/);
    for (let i = 1; i < MAX_FAILURES; i++) assert.equal((await from('127.0.0.4', '/stats', { Cookie: `tui-session=guess-${i}` })).status, 401);
    assertLockedOut(await from('127.0.0.4', '/stats', { Cookie: `tui-session=${TOKEN}` }), 'the right cookie, from the locked-out address');
    const login = await httpRequest(
      { host: '127.0.0.1', port: t.tcpPort!, localAddress: '127.0.0.4', method: 'POST', path: '/auth/login', headers: { 'Content-Type': 'application/json' } },
      JSON.stringify({ username: USER, password: PASSWORD }),
    );
    assertLockedOut(login, '/auth/login shares the lockout');
    assert.equal((await from('127.0.0.5', '/stats', { Cookie: `tui-session=${TOKEN}` })).status, 200, 'the right cookie from another address');
    assert.equal((await t.socket('GET', '/stats')).status, 200, 'the socket is never limited');
  });
});
