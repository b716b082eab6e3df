/**
 * services.tls on a real tuicd: the TCP port answers HTTPS and plain HTTP alike (REST, SSE,
 * WebSocket viewers), cookies say Secure only over TLS, a broken handshake or garbage costs only its
 * own connection, a bad certificate stops the listener's start naming the file, and PUT /config
 * turns TLS on and off by rebinding the TCP listener. Certificates come from the real openssl.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';

import { hash } from '@node-rs/bcrypt';

import { until } from '../../helpers/poll.js';
import { CertDir, httpsRequest, httpsSse, type TestCert } from '../../helpers/tlsCert.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { WsViewer } from '../../helpers/wsViewer.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const TOKEN = 'tls-test-session-token-5e6f7a8b';
const BASIC = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const JSON_HEADERS = { 'Content-Type': 'application/json' };

type TcpHealth = { host: string; port: number; tls: boolean } | null;

async function tcpHealth(t: Tuicd): Promise<TcpHealth> {
  return (await t.socket('GET', '/health')).json().listeners.tcp as TcpHealth;
}

/** Polls /health on the socket until the TCP listener is in the state `ok` wants (a rebind is asynchronous). */
function waitForTcp(t: Tuicd, ok: (tcp: TcpHealth) => boolean, what: string): Promise<TcpHealth> {
  return until(() => tcpHealth(t), ok, what);
}

/**
 * Writes `bytes` on a fresh connection and resolves with whatever the server sent back once the
 * connection closed: after the server hung up (`wait`), after the client did (`hangUp`), or as soon
 * as an HTTP answer's head arrived (`answer`).
 */
function rawExchange(port: number, bytes: Buffer, end: 'wait' | 'hangUp' | 'answer'): Promise<Buffer> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    const done = () => resolve(Buffer.concat(got));
    sock.on('error', () => undefined);
    sock.on('data', (d: Buffer) => {
      got.push(d);
      if (end === 'answer' && Buffer.concat(got).includes('\r\n\r\n')) {
        sock.destroy();
        done();
      }
    });
    sock.on('close', done);
    sock.write(bytes);
    if (end === 'hangUp') sock.end();
  });
}

describe('TLS and plain HTTP on one TCP port', { timeout: 60_000 }, () => {
  const certs = new CertDir();
  let cert: TestCert;
  let t: Tuicd;
  let port: number;
  const work = mkdtempSync(join(tmpdir(), 'tuicd-tls-work-'));

  before(async () => {
    cert = certs.make();
    const password_hash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      env: { SHELL: '/bin/sh' },
      config: {
        services: {
          server: { enabled: true, port: 0 },
          auth: { username: USER, password_hash, session_token: TOKEN },
          tls: { mode: 'manual', cert_path: cert.certPath, key_path: cert.keyPath },
        },
      },
    });
    port = t.tcpPort!;
  });
  after(async () => {
    await t?.stop();
    certs.remove();
    rmSync(work, { recursive: true, force: true });
  });

  const https = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    httpsRequest(cert.cert, port, method, path, body, headers);

  it('the same port answers HTTPS (with the configured certificate) and plain HTTP', async () => {
    assert.match(t.stdout, new RegExp(`and https://127\\.0\\.0\\.1:${port} \\(one port`));
    // On uWS the TCP listener alone moves to the node engine; the socket stays on uWS.
    if (/\(http engine uws:/.test(t.stdout)) assert.match(t.stdout, /tcp on http engine node: node:http \+ ws for the TLS listener/);
    const secure = await https('GET', '/health', undefined, { Authorization: BASIC });
    assert.equal(secure.status, 200);
    assert.deepEqual(secure.json().listeners.tcp, { host: '127.0.0.1', port, tls: true });
    assert.equal((await t.tcp('GET', '/health')).status, 200);
    // Auth works the same way over both.
    assert.equal((await https('GET', '/stats')).status, 401);
    assert.equal((await https('GET', '/stats', undefined, { Authorization: BASIC })).status, 200);
    assert.equal((await t.tcp('GET', '/stats', undefined, { Authorization: BASIC })).status, 200);
    // A body over TLS reaches the handler whole.
    const hashed = await https('POST', '/auth/hash-password', JSON.stringify({ password: 'x'.repeat(60) }), { ...JSON_HEADERS, Authorization: BASIC });
    assert.equal(hashed.status, 200, hashed.text);
    assert.match(hashed.json().hash, /^\$2[aby]\$/);
  });

  it("a WebSocket over wss streams a session's output and takes typing; plain ws works on the same port", async () => {
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh' }));
    assert.equal(created.status, 201, created.text);
    const id = created.json().session_id as string;
    const streamPath = `/sessions/${encodeURIComponent(id)}/stream`;
    const secure = await WsViewer.open(`wss://127.0.0.1:${port}${streamPath}`, { headers: { Authorization: BASIC }, ca: cert.cert });
    const plain = await WsViewer.open(`ws://127.0.0.1:${port}${streamPath}`, { headers: { Authorization: BASIC } });
    try {
      await t.socket('POST', `/sessions/${encodeURIComponent(id)}/write`, JSON.stringify({ data: 'echo over-$((6*7))-tls\n' }));
      await secure.waitFor(() => secure.text().includes('over-42-tls'), 10_000, 'output over wss');
      await plain.waitFor(() => plain.text().includes('over-42-tls'), 10_000, 'output over ws');
      secure.ws.send('echo typed-$((40+2))-wss\n');
      await secure.waitFor(() => secure.text().includes('typed-42-wss'), 10_000, 'typing over wss echoed');
    } finally {
      secure.close();
      plain.close();
      await t.socket('DELETE', `/sessions/${encodeURIComponent(id)}`);
    }
    await assert.rejects(WsViewer.open(`wss://127.0.0.1:${port}${streamPath}`, { ca: cert.cert }), /401/, 'the upgrade asks for credentials over TLS too');
  });

  it('streams SSE over HTTPS', async () => {
    const sse = await httpsSse(cert.cert, port, '/events', { Authorization: BASIC });
    try {
      assert.equal(sse.status, 200);
      await t.socket('PUT', '/config', JSON.stringify({ suggest_followups: false }));
      await sse.waitFor((e) => e.event === 'config-changed');
    } finally {
      sse.close();
    }
  });

  it('the session cookie says Secure over TLS and not over plain HTTP', async () => {
    const body = JSON.stringify({ username: USER, password: PASSWORD });
    const overTls = await https('POST', '/auth/login', body, { ...JSON_HEADERS, Origin: `https://127.0.0.1:${port}` });
    assert.equal(overTls.status, 200, overTls.text);
    assert.match(String(overTls.headers['set-cookie']), new RegExp(`^tui-session=${TOKEN}; HttpOnly; SameSite=Strict; Path=/; Max-Age=\\d+; Secure$`));
    const plain = await t.tcp('POST', '/auth/login', body, { ...JSON_HEADERS, Origin: `http://127.0.0.1:${port}` });
    assert.equal(plain.status, 200, plain.text);
    assert.match(String(plain.headers['set-cookie']), /^tui-session=/);
    assert.doesNotMatch(String(plain.headers['set-cookie']), /Secure/);
    // The cookie a ?token= link sets, and the logout that drops it, follow the same rule.
    assert.match(String((await https('GET', `/stats?token=${TOKEN}`)).headers['set-cookie']), /; Secure$/);
    assert.doesNotMatch(String((await t.tcp('GET', `/stats?token=${TOKEN}`)).headers['set-cookie']), /Secure/);
    assert.match(String((await https('POST', '/auth/logout')).headers['set-cookie']), /Max-Age=0; Secure$/);
  });

  it("garbage and broken handshakes drop only their own connection; another client's stream goes on", async () => {
    const sse = await httpsSse(cert.cert, port, '/events', { Authorization: BASIC });
    try {
      assert.equal(sse.status, 200);
      // A TLS record header followed by junk: the handshake fails and the server hangs up.
      const junkAfterTls = await rawExchange(port, Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x20]), Buffer.alloc(64, 0xab)]), 'wait');
      assert.ok(!junkAfterTls.includes('HTTP/1.1'), 'no HTTP answer inside a TLS connection');
      // A ClientHello cut short, then the client hangs up.
      await rawExchange(port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), 'hangUp');
      // Binary garbage that is no TLS: the HTTP parser refuses it with a JSON error.
      const binary = await rawExchange(port, Buffer.concat([Buffer.from([0x00, 0xff, 0x13, 0x37]), Buffer.from(' / HTTP/1.1\r\n\r\n')]), 'answer');
      assert.match(binary.toString('latin1'), /^HTTP\/1\.1 4\d\d /);
      // A client that does not trust the certificate aborts the handshake itself.
      const distrust = await new Promise<Error>((resolve) => {
        const s = tlsConnect({ host: '127.0.0.1', port });
        s.once('error', resolve);
        s.once('secureConnect', () => resolve(new Error('the handshake succeeded')));
      });
      assert.match(distrust.message, /self[- ]signed|unable to verify/i);

      await t.socket('PUT', '/config', JSON.stringify({ suggest_followups: true }));
      await sse.waitFor((e) => e.event === 'config-changed', 10_000);
      assert.equal(sse.ended, false, 'the SSE stream is still open');
      assert.equal((await https('GET', '/health')).status, 200);
      assert.equal((await t.tcp('GET', '/health')).status, 200);
      assert.equal(t.child.exitCode, null, 'tuicd is still running');
    } finally {
      sse.close();
    }
  });
});

describe('services.tls with bad files and through PUT /config', { timeout: 60_000 }, () => {
  const certs = new CertDir();
  let cert: TestCert;
  before(() => {
    cert = certs.make();
  });
  after(() => certs.remove());

  it('a missing certificate fails the TCP listener at start with a message naming the file; the socket serves', async () => {
    const missing = join(certs.dir, 'missing-cert.pem');
    const t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, tls: { mode: 'manual', cert_path: missing, key_path: cert.keyPath } } },
    });
    try {
      assert.equal(t.tcpPort, null);
      await t.waitForStderr(/TCP listener not started \(TLS certificate file \S+ \(services\.tls\.cert_path\): not found\); serving on the unix socket only/);
      assert.ok(t.stderr.includes(missing), t.stderr.slice(-500));
      assert.equal(await tcpHealth(t), null);
    } finally {
      await t.stop();
    }
  });

  it('renewed files at the same paths are served to new connections without a save; a broken renewal keeps the old ones', async () => {
    const first = certs.make('renew-first');
    const renewed = certs.make('renew-second');
    const live = { cert: join(certs.dir, 'live-cert.pem'), key: join(certs.dir, 'live-key.pem') };
    copyFileSync(first.certPath, live.cert);
    copyFileSync(first.keyPath, live.key);
    const t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, tls: { mode: 'manual', cert_path: live.cert, key_path: live.key } } },
    });
    try {
      const port = t.tcpPort!;
      const trusting = (c: TestCert) =>
        httpsRequest(c.cert, port, 'GET', '/health').then(
          (r) => r.status,
          (err: Error) => err.message,
        );
      assert.equal(await trusting(first), 200);
      assert.notEqual(await trusting(renewed), 200, 'the second certificate is not served yet');
      // As a renewal tool does it: new files renamed over the old paths, key and certificate one after the other.
      copyFileSync(renewed.keyPath, `${live.key}.new`);
      copyFileSync(renewed.certPath, `${live.cert}.new`);
      renameSync(`${live.key}.new`, live.key);
      renameSync(`${live.cert}.new`, live.cert);
      await until(
        () => trusting(renewed),
        (status) => status === 200,
        'the renewed certificate served',
        30_000,
      );
      assert.notEqual(await trusting(first), 200, 'the first certificate is no longer served');
      await t.waitForStderr(/TLS certificate files changed: new connections use them/);
      assert.equal(t.stderr.match(/TLS certificate files changed: new connections use them/g)?.length, 1, 'one renewal, logged once');
      assert.equal(t.tcpPort, port);

      writeFileSync(live.cert, 'not a certificate\n');
      await t.waitForStderr(
        /"reason":"TLS certificate file [^"]*live-cert\.pem \(services\.tls\.cert_path\): not a PEM certificate.*"msg":"TLS certificate files changed but do not load; still serving the previous ones"/,
        30_000,
      );
      assert.equal(await trusting(renewed), 200, 'still serving the last good certificate');
    } finally {
      await t.stop();
    }
  });

  it('turning TLS on, breaking it, fixing it and turning it off each rebind only the TCP listener', async () => {
    const t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 } } } });
    try {
      const instance = (await t.socket('GET', '/health')).json().instance_id as string;
      assert.equal((await tcpHealth(t))?.tls, false);
      const put = async (tls: object) => {
        const r = await t.socket('PUT', '/config', JSON.stringify({ services: { tls } }));
        assert.equal(r.status, 200, r.text);
      };
      const on = { mode: 'manual', cert_path: cert.certPath, key_path: cert.keyPath };

      await put(on);
      const first = await waitForTcp(t, (tcp) => tcp?.tls === true, 'TLS on');
      assert.equal((await httpsRequest(cert.cert, first!.port, 'GET', '/health')).status, 200);
      assert.equal((await t.tcp('GET', '/health', undefined, {}, first!.port)).status, 200);

      // A save naming a key that does not load is refused; the listener stays as it was.
      const refused = await t.socket('PUT', '/config', JSON.stringify({ services: { tls: { ...on, key_path: join(certs.dir, 'absent.pem') } } }));
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, /services\.tls\.key_path: TLS key file .*absent\.pem.*not found/);
      assert.equal((await tcpHealth(t))?.port, first!.port, 'the TLS listener was not touched');

      // A key that loaded when saved and is gone at the next rebind takes the listener down.
      const missingKey = join(certs.dir, 'removed-key.pem');
      copyFileSync(cert.keyPath, missingKey);
      const starts = () => (t.stderr.match(/TCP listener started/g) ?? []).length;
      const startsBefore = starts();
      await put({ ...on, key_path: missingKey });
      await until(
        async () => starts(),
        (n) => n > startsBefore,
        'rebound with the copied key',
      );
      unlinkSync(missingKey);
      const rebind = await t.socket('PUT', '/config', JSON.stringify({ services: { server: { ipv6_enabled: true } } }));
      assert.equal(rebind.status, 200, rebind.text);
      await waitForTcp(t, (tcp) => tcp === null, 'the listener down after the key vanished');
      await t.waitForStderr(/TCP listener failed to rebind/);
      await t.waitForStderr(new RegExp(`TLS key file ${missingKey.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(services\\.tls\\.key_path\\): not found`));
      // The socket's /health says why remote access is down, naming the file.
      assert.match(
        (await t.socket('GET', '/health')).json().listeners.tcp_error,
        new RegExp(`TLS key file ${missingKey.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*not found`),
      );

      await put(on);
      const fixed = await waitForTcp(t, (tcp) => tcp?.tls === true, 'TLS back on');
      assert.equal((await t.socket('GET', '/health')).json().listeners.tcp_error, undefined, 'no error once it is up again');
      assert.equal((await httpsRequest(cert.cert, fixed!.port, 'GET', '/health')).status, 200);

      await put({ mode: 'off' });
      const off = await waitForTcp(t, (tcp) => tcp !== null && tcp.tls === false, 'TLS off');
      assert.equal((await t.tcp('GET', '/health', undefined, {}, off!.port)).status, 200);
      assert.equal((await t.socket('GET', '/health')).json().instance_id, instance, 'same process, the socket never rebound');
    } finally {
      await t.stop();
    }
  });
});
