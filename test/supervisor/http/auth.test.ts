import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { hash, verify } from '@node-rs/bcrypt';
import { AUTH_REALM, safeEqual, TcpAuth, type AuthOutcome, type AuthRequest, type AuthSettings } from '../../../supervisor/http/auth.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const TOKEN = 'tok-0123456789abcdef';
const IP = '203.0.113.7';
const NO_QUERY = new URLSearchParams();
const basic = (user: string, pw: string) => 'Basic ' + Buffer.from(`${user}:${pw}`).toString('base64');

let passwordHash = '';
before(async () => {
  passwordHash = await hash(PASSWORD, { cost: 4 });
});

function make(overrides: Partial<AuthSettings> = {}) {
  const clock = { t: 5_000_000 };
  const settings: AuthSettings = {
    username: USER,
    passwordHash,
    sessionToken: TOKEN,
    sessionTokenDurationSecs: 3600,
    lanAuthBypass: false,
    rateLimitMax: 5,
    rateLimitWindowSecs: 60,
    ...overrides,
  };
  const auth = new TcpAuth(
    () => settings,
    () => clock.t,
  );
  return { auth, clock, settings };
}

/** Like make(), with the real bcrypt verifier wrapped to count its runs. */
function makeCounting() {
  const clock = { t: 5_000_000 };
  let runs = 0;
  const settings: AuthSettings = {
    username: USER,
    passwordHash,
    sessionToken: '',
    sessionTokenDurationSecs: 3600,
    lanAuthBypass: false,
    rateLimitMax: 5,
    rateLimitWindowSecs: 60,
  };
  const auth = new TcpAuth(
    () => settings,
    () => clock.t,
    (password, hashed) => {
      runs++;
      return verify(password, hashed);
    },
  );
  return { auth, clock, verifications: () => runs };
}

/** A request as the gate reads it. */
const req = (headers: Record<string, string>, query: URLSearchParams, remoteAddress: string): AuthRequest => ({ headers, query, remoteAddress, tls: false });

/** The same, counting how often the gate reads the peer address and the query (uWS copies, URL parsing). */
function watchedReq(headers: Record<string, string>) {
  const reads = { address: 0, query: 0 };
  return {
    reads,
    request: {
      headers,
      tls: false,
      get query() {
        reads.query++;
        return NO_QUERY;
      },
      get remoteAddress() {
        reads.address++;
        return IP;
      },
    } satisfies AuthRequest,
  };
}

function refused(outcome: AuthOutcome) {
  assert.equal(outcome.ok, false, 'expected a refusal');
  return outcome as Extract<AuthOutcome, { ok: false }>;
}

function assertUnauthorized(outcome: AuthOutcome, error: string): void {
  const r = refused(outcome).reply;
  assert.equal(r.status, 401);
  assert.equal(r.headers?.['WWW-Authenticate'], `Basic realm="${AUTH_REALM}"`);
  assert.equal(AUTH_REALM, 'TUICommander');
  assert.deepEqual(r.body, { error, code: 'unauthorized' }, 'the JSON error shape');
}

describe('TcpAuth', () => {
  it('answers 401 with the Basic challenge when no Authorization header comes', async () => {
    const { auth } = make();
    assertUnauthorized(await auth.check(req({}, NO_QUERY, IP)), 'Scan the QR code or authenticate with Basic Auth');
  });

  it('answers the same 401 for a non-Basic scheme, and does not count it', async () => {
    const { auth } = make();
    for (let i = 0; i < 6; i++) {
      const out = await auth.check(req({ authorization: 'Bearer abc' }, NO_QUERY, IP));
      assertUnauthorized(out, 'Scan the QR code or authenticate with Basic Auth');
      assert.notEqual(refused(out).failure, true);
    }
    assert.equal(auth.limiter.retryAfterSecs(IP), 0);
  });

  it('accepts the right credentials and issues the session cookie', async () => {
    const { auth } = make();
    const out = await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP));
    assert.deepEqual(out, { ok: true, setCookie: `tui-session=${TOKEN}; HttpOnly; SameSite=Strict; Path=/; Max-Age=3600` });
    const lower = await auth.check(req({ authorization: 'basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64') }, NO_QUERY, IP));
    assert.equal(lower.ok, true, 'the scheme is case-insensitive');
  });

  it('issues no cookie when there is no session token', async () => {
    const { auth } = make({ sessionToken: '' });
    assert.deepEqual(await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP)), { ok: true });
  });

  it('refuses wrong credentials with 401 "Invalid credentials" and counts the failure', async () => {
    const { auth } = make();
    for (const header of [basic(USER, 'wrong'), basic('mallory', PASSWORD), 'Basic ' + Buffer.from('no-colon').toString('base64')]) {
      const out = await auth.check(req({ authorization: header }, NO_QUERY, IP));
      assertUnauthorized(out, 'Invalid credentials');
      assert.equal(refused(out).failure, true);
    }
    const limiter = auth.limiter as unknown as { failures: Map<string, number[]> };
    assert.equal(limiter.failures.get(IP)?.length, 3);
  });

  it('answers 429 with Retry-After after 5 wrong attempts, even for the right password', async () => {
    const { auth, clock } = make();
    for (let i = 0; i < 5; i++) assertUnauthorized(await auth.check(req({ authorization: basic(USER, 'nope') }, NO_QUERY, IP)), 'Invalid credentials');
    clock.t += 10_500;
    for (const pw of ['nope', PASSWORD]) {
      const r = refused(await auth.check(req({ authorization: basic(USER, pw) }, NO_QUERY, IP))).reply;
      assert.equal(r.status, 429);
      assert.equal(r.headers?.['Retry-After'], '50'); // 49.5 s left, floored, + 1
      assert.deepEqual(r.body, { error: 'Too many failed authentication attempts', code: 'busy' });
    }
    assertUnauthorized(await auth.check(req({ authorization: basic(USER, 'nope') }, NO_QUERY, '198.51.100.1')), 'Invalid credentials');
    clock.t += 50_000; // the window has passed
    assert.equal((await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP))).ok, true);
  });

  it('refuses Basic when no username or password hash is configured', async () => {
    for (const overrides of [{ username: '' }, { passwordHash: '' }]) {
      const { auth } = make(overrides);
      assertUnauthorized(await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP)), 'Scan the QR code or authenticate with Basic Auth');
    }
  });

  it('treats a corrupt password hash as a wrong password', async () => {
    const { auth } = make({ passwordHash: 'not-a-bcrypt-hash' });
    assertUnauthorized(await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP)), 'Invalid credentials');
  });

  it('accepts the session cookie among others without looking at Basic', async () => {
    // A hash bcrypt cannot verify: only the cookie can let this request in.
    const { auth } = make({ passwordHash: 'not-a-bcrypt-hash' });
    assert.deepEqual(await auth.check(req({ cookie: `theme=dark; tui-session=${TOKEN}; x=1` }, NO_QUERY, IP)), { ok: true, byToken: true });
    assert.deepEqual(await auth.check(req({ cookie: `tui-session=${TOKEN}` }, NO_QUERY, IP)), { ok: true, byToken: true });
  });

  it('refuses a wrong or empty session cookie', async () => {
    const { auth } = make();
    const wrong = await auth.check(req({ cookie: 'tui-session=wrong' }, NO_QUERY, IP));
    assertUnauthorized(wrong, 'Invalid credentials');
    assert.equal(refused(wrong).failure, true, 'a wrong cookie is a guess');
    assert.equal(
      refused(wrong).reply.headers?.['Set-Cookie'],
      'tui-session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0',
      'and the browser is told to drop it',
    );
    assertUnauthorized(await auth.check(req({ cookie: `xtui-session=${TOKEN}` }, NO_QUERY, IP)), 'Scan the QR code or authenticate with Basic Auth');
    const { auth: noToken } = make({ sessionToken: '' });
    assertUnauthorized(await noToken.check(req({ cookie: 'tui-session=' }, NO_QUERY, IP)), 'Scan the QR code or authenticate with Basic Auth');
    assertUnauthorized(await noToken.check(req({}, new URLSearchParams({ token: '' }), IP)), 'Scan the QR code or authenticate with Basic Auth');
  });

  it('accepts ?token=, sets the cookie and clears the IP from the limiter', async () => {
    const { auth } = make();
    for (let i = 0; i < 4; i++) await auth.check(req({ authorization: basic(USER, 'nope') }, NO_QUERY, IP));
    assert.ok(auth.limiter.retryAfterSecs(IP) === 0 && !auth.limiter.isEmpty, 'four failures on record, not yet locked out');
    const out = await auth.check(req({}, new URLSearchParams({ token: TOKEN }), IP));
    assert.deepEqual(out, { ok: true, setCookie: `tui-session=${TOKEN}; HttpOnly; SameSite=Strict; Path=/; Max-Age=3600`, byToken: true });
    assert.equal(auth.limiter.retryAfterSecs(IP), 0);
    assert.equal((await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP))).ok, true);
  });

  it('says Secure on the cookies it hands out when the request came over TLS or an https proxy', async () => {
    const { auth } = make();
    const token = new URLSearchParams({ token: TOKEN });
    const cookie = async (request: AuthRequest) => {
      const out = await auth.check(request);
      assert.equal(out.ok, true);
      return (out as { setCookie?: string }).setCookie ?? '';
    };
    assert.doesNotMatch(await cookie(req({}, token, IP)), /Secure/);
    assert.match(await cookie({ ...req({}, token, IP), tls: true }), /; Secure$/);
    assert.match(await cookie(req({ 'x-forwarded-proto': 'HTTPS' }, token, IP)), /; Secure$/);
    assert.match(
      await cookie({ ...req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP), tls: true }),
      /; Secure$/,
      'Basic passed: the cookie it sets too',
    );
    assert.doesNotMatch(await cookie(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP)), /Secure/);
  });

  it('refuses a wrong ?token= and counts it', async () => {
    const { auth } = make();
    const out = await auth.check(req({}, new URLSearchParams({ token: 'guess' }), IP));
    assertUnauthorized(out, 'Invalid credentials');
    assert.equal(refused(out).failure, true);
    assert.equal(refused(out).reply.headers?.['Set-Cookie'], undefined, 'no cookie was sent: none to expire');
  });

  it('locks an address out after N wrong tokens or cookies, for every credential, the right ones included', async () => {
    const { auth, clock } = make();
    for (let i = 0; i < 3; i++) assertUnauthorized(await auth.check(req({}, new URLSearchParams({ token: `guess-${i}` }), IP)), 'Invalid credentials');
    for (let i = 0; i < 2; i++) assertUnauthorized(await auth.check(req({ cookie: `tui-session=guess-${i}` }, NO_QUERY, IP)), 'Invalid credentials');
    for (const request of [
      req({}, new URLSearchParams({ token: TOKEN }), IP),
      req({ cookie: `tui-session=${TOKEN}` }, NO_QUERY, IP),
      req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP),
      req({}, new URLSearchParams({ token: 'guess-9' }), IP),
    ]) {
      const r = refused(await auth.check(request)).reply;
      assert.equal(r.status, 429, 'locked out: a right credential gets the same answer as a wrong one');
      assert.ok(Number(r.headers?.['Retry-After']) > 0);
    }
    assert.equal((await auth.check(req({}, new URLSearchParams({ token: TOKEN }), '198.51.100.1'))).ok, true, 'another address is not locked out');
    assert.equal((await auth.login(USER, PASSWORD, IP, false)).ok, false, '/auth/login shares the lockout');
    clock.t += 60_001;
    assert.equal((await auth.check(req({ cookie: `tui-session=${TOKEN}` }, NO_QUERY, IP))).ok, true, 'the window has passed');
  });

  it('judges a request that carries Basic by Basic: a stale cookie beside the right password is no failure', async () => {
    const { auth } = make();
    for (let i = 0; i < 6; i++) {
      assert.equal((await auth.check(req({ cookie: 'tui-session=stale', authorization: basic(USER, PASSWORD) }, NO_QUERY, IP))).ok, true);
    }
    assert.ok(auth.limiter.isEmpty);
    const out = await auth.check(req({ cookie: 'tui-session=stale', authorization: basic(USER, 'nope') }, NO_QUERY, IP));
    assertUnauthorized(out, 'Invalid credentials');
    const limiter = auth.limiter as unknown as { failures: Map<string, number[]> };
    assert.equal(limiter.failures.get(IP)?.length, 1, 'one failure per request, not one per credential');
  });

  it('bypasses auth for private addresses only when lanAuthBypass is on', async () => {
    const privateIps = [
      '10.1.2.3',
      '192.168.0.10',
      '172.16.0.1',
      '172.31.255.254',
      '127.0.0.1',
      '169.254.10.1',
      '::1',
      'fd12:3456::1',
      'fc00::1',
      'fe80::1',
      'febf::1',
    ];
    const publicIps = ['8.8.8.8', '100.64.0.1', '11.0.0.1', '172.15.0.1', '172.32.0.1', '192.169.0.1', '2001:db8::1', 'fec0::1', 'fe8::1'];
    const { auth: on } = make({ lanAuthBypass: true });
    for (const ip of privateIps) assert.deepEqual(await on.check(req({}, NO_QUERY, ip)), { ok: true }, ip);
    for (const ip of publicIps) assertUnauthorized(await on.check(req({}, NO_QUERY, ip)), 'Scan the QR code or authenticate with Basic Auth');
    const { auth: off } = make({ lanAuthBypass: false });
    for (const ip of privateIps) assertUnauthorized(await off.check(req({}, NO_QUERY, ip)), 'Scan the QR code or authenticate with Basic Auth');
  });

  it('remembers a verified header for 60 s after its last use, on the injected clock', async () => {
    const { auth, clock, verifications } = makeCounting();
    const ok = async (): Promise<boolean> => (await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP))).ok;
    assert.equal(await ok(), true);
    for (let i = 0; i < 3; i++) {
      clock.t += 59_000;
      assert.equal(await ok(), true);
    }
    assert.equal(verifications(), 1, 'each use within 60 s of the last one is served from the cache');
    clock.t += 60_001;
    assert.equal(await ok(), true);
    assert.equal(verifications(), 2, '60 s unused: verified again');
  });

  it('runs one verification for requests that arrive together with the same header', async () => {
    const { auth, verifications } = makeCounting();
    const header = { authorization: basic(USER, PASSWORD) };
    const outcomes = await Promise.all(Array.from({ length: 16 }, () => auth.check(req(header, NO_QUERY, IP))));
    assert.deepEqual(
      outcomes.map((o) => o.ok),
      Array(16).fill(true),
    );
    assert.equal(verifications(), 1);
    const wrong = { authorization: basic(USER, 'wrong') };
    const refusals = await Promise.all(Array.from({ length: 3 }, () => auth.check(req(wrong, NO_QUERY, IP))));
    for (const r of refusals) assertUnauthorized(r, 'Invalid credentials');
    assert.equal(verifications(), 2, 'the wrong header was checked once for the three requests');
    assert.equal(auth.limiter.retryAfterSecs(IP), 0, 'three failures stay under the limit of five');
    await auth.check(req(wrong, NO_QUERY, IP));
    await auth.check(req(wrong, NO_QUERY, IP));
    assert.ok(auth.limiter.retryAfterSecs(IP) > 0, 'every refused request counts as a failure');
  });

  it('forgets a verified header when the password hash changes', async () => {
    const { auth, settings } = make();
    assert.equal((await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP))).ok, true);
    settings.passwordHash = await hash('another one', { cost: 4 });
    assertUnauthorized(await auth.check(req({ authorization: basic(USER, PASSWORD) }, NO_QUERY, IP)), 'Invalid credentials');
    assert.equal((await auth.check(req({ authorization: basic(USER, 'another one') }, NO_QUERY, IP))).ok, true);
  });
});

describe('TcpAuth reads only what it needs', () => {
  it('reads no peer address and no query for a cached Basic check while no failure is on record', async () => {
    const { auth } = makeCounting();
    const first = watchedReq({ authorization: basic(USER, PASSWORD) });
    assert.equal((await auth.check(first.request)).ok, true);
    const cached = watchedReq({ authorization: basic(USER, PASSWORD) });
    assert.equal((await auth.check(cached.request)).ok, true);
    assert.deepEqual(cached.reads, { address: 0, query: 0 }, 'no session token configured: ?token= is not looked at either');
  });

  it('reads the address once a failure is on record, and for a failure itself', async () => {
    const { auth } = makeCounting();
    const wrong = watchedReq({ authorization: basic(USER, 'nope') });
    assertUnauthorized(await auth.check(wrong.request), 'Invalid credentials');
    assert.equal(wrong.reads.address, 1, 'the failure is recorded against the address');
    const next = watchedReq({ authorization: basic(USER, PASSWORD) });
    assert.equal((await auth.check(next.request)).ok, true);
    assert.equal(next.reads.address, 1, 'a failure is on record: the lockout is checked by address');
  });

  it('reads the address for the LAN bypass and the query when a session token exists', async () => {
    const { auth } = make({ lanAuthBypass: true });
    const lan = watchedReq({});
    assertUnauthorized(await auth.check(lan.request), 'Scan the QR code or authenticate with Basic Auth');
    assert.equal(lan.reads.address, 1);
    assert.equal(lan.reads.query, 1, 'a session token is configured: ?token= is looked at');
  });
});

describe('safeEqual', () => {
  it('compares contents, whatever the lengths', () => {
    assert.equal(safeEqual('secret', 'secret'), true);
    assert.equal(safeEqual('', ''), true);
    assert.equal(safeEqual('secret', 'secreT'), false);
    assert.equal(safeEqual('secret', 'secret1'), false);
    assert.equal(safeEqual('', 'x'), false);
  });
});

it('carriesNoCredential: only a request that check() could never accept skips it', () => {
  const { auth, settings } = make();
  assert.equal(auth.carriesNoCredential(req({}, NO_QUERY, IP)), true, 'nothing sent');
  assert.equal(auth.carriesNoCredential(req({ authorization: basic(USER, 'wrong') }, NO_QUERY, IP)), false, 'Basic, even wrong, is checked');
  assert.equal(auth.carriesNoCredential(req({ cookie: `tui-session=${TOKEN}` }, NO_QUERY, IP)), false, 'a session cookie is checked');
  assert.equal(auth.carriesNoCredential(req({}, new URLSearchParams({ token: 'x' }), IP)), false, 'a ?token= is checked');
  assert.equal(auth.carriesNoCredential(req({ cookie: 'other=1' }, NO_QUERY, IP)), true, 'an unrelated cookie is nothing');
  settings.lanAuthBypass = true;
  assert.equal(auth.carriesNoCredential(req({}, NO_QUERY, '192.168.1.2')), false, 'the LAN bypass may authenticate anyone');
});
