/**
 * /mobile over plain HTTP on both listeners: the login redirect and form route (errors, per-IP rate
 * limit, cookie flags, logout), that a cross-site page cannot ride the cookie, the socket asking
 * nothing, the pending-confirm list, and the page's first-load weight.
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';

import { Tuicd } from '../../helpers/tuicdProcess.js';

const TOKEN = 'mobile-login-token-8c1d2e3f4a';
const PASSWORD = 'open sesame';
/** Issue 18: the whole first load (HTML, JS, CSS, manifest, icon) at most 400 KB gzip. */
const FIRST_LOAD_BUDGET = 400 * 1024;
const JSON_HEADERS = { 'Content-Type': 'application/json' };

describe('/mobile login and page routes', { timeout: 60_000 }, () => {
  let t: Tuicd;
  before(async () => {
    const password_hash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: 'phone', password_hash, session_token: TOKEN, auth_rate_limit_max: 3 } } },
    });
  });
  after(async () => {
    await t?.stop();
  });

  const login = (body: object, headers: Record<string, string> = {}) => t.tcp('POST', '/auth/login', JSON.stringify(body), { ...JSON_HEADERS, ...headers });

  it('redirects an unauthenticated navigation to the login page, keeping where it was going', async () => {
    const page = await t.tcp('GET', '/mobile');
    assert.equal(page.status, 302);
    assert.equal(page.headers['location'], '/mobile/login?next=%2Fmobile');
    const deep = await t.tcp('GET', '/mobile/session/abc-123');
    assert.equal(deep.headers['location'], '/mobile/login?next=%2Fmobile%2Fsession%2Fabc-123');
    const form = await t.tcp('GET', '/mobile/login');
    assert.equal(form.status, 200);
    assert.match(form.text, /<form id="login"/);
    assert.match(String(form.headers['content-security-policy']), /default-src 'self'/);
    // The API itself still answers 401, not a redirect.
    assert.equal((await t.tcp('GET', '/sessions')).status, 401);
  });

  it('serves the page on the unix socket without asking anything', async () => {
    const page = await t.socket('GET', '/mobile');
    assert.equal(page.status, 200);
    assert.match(page.text, /<script src="\/mobile\/app.js"/);
    assert.equal((await t.socket('GET', '/api/mobile/confirms')).status, 200);
    const vapid = await t.tcp('GET', '/api/push/vapid-key');
    assert.equal(vapid.status, 404, 'public, and 404 while push is disabled');
    assert.match(vapid.json().error, /push is disabled/);
  });

  it('refuses bad login bodies with a clear error', async () => {
    const refusal = (field: string, error = `${field} is required`) => ({ error, code: 'invalid_input', field, in: 'body' });
    assert.deepEqual((await login({ username: 'phone' })).json(), refusal('password'));
    assert.deepEqual((await login({ password: 'x' })).json(), refusal('username'));
    // Wrong types are refused by the body's schema, naming the field, before any password is checked.
    for (const [body, field] of [
      [{ username: 7, password: 'x' }, 'username'],
      [{ username: 'phone', password: '' }, 'password'],
      [{ username: 'phone', password: ['x'] }, 'password'],
    ] as const) {
      const r = await login(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.json(), refusal(field), JSON.stringify(body));
    }
    const badNext = await login({ username: 'phone', password: PASSWORD, next: 5 });
    assert.equal(badNext.status, 400);
    assert.deepEqual(badNext.json(), refusal('next', 'next must be a string'));
    const notObject = await t.tcp('POST', '/auth/login', '[1]', JSON_HEADERS);
    assert.equal(notObject.status, 400);
    assert.match(notObject.json().error, /JSON object/);
    assert.equal(notObject.json().code, 'invalid_input');
    // A form post from a page elsewhere is no JSON: refused before any password is checked.
    const form = await t.tcp('POST', '/auth/login', 'username=phone&password=x', { 'Content-Type': 'application/x-www-form-urlencoded' });
    assert.equal(form.status, 415);
  });

  it('logs in: HttpOnly SameSite=Strict cookie (Secure behind TLS), a safe next, and the cookie opens the API', async () => {
    const ok = await login({ username: 'phone', password: PASSWORD, next: '/mobile/session/x1' });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json(), { ok: true, next: '/mobile/session/x1' });
    const cookie = String(ok.headers['set-cookie']);
    assert.match(cookie, /^tui-session=mobile-login-token-8c1d2e3f4a; /);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /Secure/);
    const tls = await login({ username: 'phone', password: PASSWORD, next: '//evil.example/x' }, { 'X-Forwarded-Proto': 'https' });
    assert.match(String(tls.headers['set-cookie']), /; Secure/);
    assert.equal(tls.json().next, '/mobile', 'a next outside the page goes to /mobile');
    const withCookie = { Cookie: 'tui-session=' + TOKEN };
    assert.equal((await t.tcp('GET', '/mobile', undefined, withCookie)).status, 200);
    assert.equal((await t.tcp('GET', '/sessions', undefined, withCookie)).status, 200);
    const out = await t.tcp('POST', '/auth/logout', undefined, withCookie);
    assert.equal(out.status, 200);
    assert.match(String(out.headers['set-cookie']), /^tui-session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0/);
  });

  it('a page on another site cannot use the cookie: its Origin is refused before auth', async () => {
    const headers = { Cookie: 'tui-session=' + TOKEN, Origin: 'http://evil.example', ...JSON_HEADERS };
    const write = await t.tcp('POST', '/sessions', '{}', headers);
    assert.equal(write.status, 403);
    assert.equal(write.json().header, 'Origin');
    const loginFromElsewhere = await t.tcp('POST', '/auth/login', JSON.stringify({ username: 'phone', password: PASSWORD }), headers);
    assert.equal(loginFromElsewhere.status, 403);
    // The listener's own origin passes.
    const same = await t.tcp('GET', '/api/mobile/confirms', undefined, { Cookie: 'tui-session=' + TOKEN, Origin: `http://127.0.0.1:${t.tcpPort}` });
    assert.equal(same.status, 200);
    assert.deepEqual(same.json(), { confirms: [] });
  });

  it('wrong passwords: 401 Invalid credentials, then 429 with Retry-After once over the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await login({ username: 'phone', password: `wrong-${i}` });
      statuses.push(r.status);
      assert.deepEqual(r.json(), { error: 'Invalid credentials', code: 'unauthorized' });
    }
    assert.deepEqual(statuses, [401, 401, 401]);
    const limited = await login({ username: 'phone', password: PASSWORD });
    assert.equal(limited.status, 429, 'even the right password waits out the limit');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal(limited.json().error, 'Too many failed authentication attempts');
  });

  it('first load fits the budget: HTML, JS, CSS, manifest and icon under 400 KB gzip', async () => {
    let total = 0;
    for (const path of ['/mobile', '/mobile/app.js', '/mobile/app.css', '/mobile/manifest.webmanifest', '/mobile/icon-192.png']) {
      const r = await t.socket('GET', path, undefined, { 'Accept-Encoding': 'gzip' });
      assert.equal(r.status, 200, path);
      if (r.headers['content-encoding'] === 'gzip') gunzipSync(r.body); // really gzip
      total += r.body.length;
    }
    assert.ok(total <= FIRST_LOAD_BUDGET, `first load ${total} bytes gzip`);
    const manifest = (await t.socket('GET', '/mobile/manifest.webmanifest')).json();
    assert.equal(manifest.start_url, '/mobile');
    assert.ok(manifest.icons.some((i: { sizes: string }) => i.sizes === '512x512'));
    const sw = await t.socket('GET', '/mobile/sw.js');
    assert.equal(sw.headers['service-worker-allowed'], '/mobile');
    const etag = String((await t.socket('GET', '/mobile/app.js')).headers['etag']);
    assert.equal((await t.socket('GET', '/mobile/app.js', undefined, { 'If-None-Match': etag })).status, 304);
    assert.equal((await t.socket('GET', '/mobile/nope.js')).status, 404);
  });
});
