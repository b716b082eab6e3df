// The opt-in TCP listener on a real tuicd: Basic Auth everywhere but /health, rate limit, no loopback
// bypass, and restarts driven by PUT /config that never touch the socket.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const basic = (user: string, pw: string) => 'Basic ' + Buffer.from(`${user}:${pw}`).toString('base64');

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('TCP listener and Basic Auth', () => {
  let t: Tuicd;
  before(async () => {
    // Cost 4 keeps the fixture fast; the server verifies whatever cost the hash carries.
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } } });
  });
  after(() => t.stop());

  it('serves /health without auth as {ok, version} only; with credentials it names the TCP listener', async () => {
    const anonymous = await t.tcp('GET', '/health');
    assert.equal(anonymous.status, 200);
    assert.deepEqual(Object.keys(anonymous.json()).sort(), ['ok', 'version']);
    const r = await t.tcp('GET', '/health', undefined, { Authorization: basic(USER, PASSWORD) });
    assert.equal(r.status, 200);
    assert.equal(r.json().listeners.tcp.port, t.tcpPort);
  });

  it('answers 401 with the realm to a loopback caller without credentials (no loopback bypass)', async () => {
    const r = await t.tcp('GET', '/stats');
    assert.equal(r.status, 401);
    assert.equal(r.headers['www-authenticate'], 'Basic realm="TUICommander"');
    assert.deepEqual(r.json(), { error: 'Scan the QR code or authenticate with Basic Auth', code: 'unauthorized' });
  });

  it('answers 200 with the right credentials, and the socket needs none', async () => {
    const ok = await t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, PASSWORD) });
    assert.equal(ok.status, 200);
    assert.equal(ok.json().max_sessions, 500);
    assert.equal((await t.socket('GET', '/stats')).status, 200);
  });

  it('refuses SSE on TCP without credentials and streams with them', async () => {
    const denied = await t.tcp('GET', '/events');
    assert.equal(denied.status, 401);
    const sse = await SseClient.open({ host: '127.0.0.1', port: t.tcpPort!, path: '/events', headers: { Authorization: basic(USER, PASSWORD) } });
    try {
      assert.equal(sse.status, 200);
      await t.socket('PUT', '/config', JSON.stringify({ suggest_followups: false }));
      await sse.waitFor((e) => e.event === 'config-changed');
    } finally {
      sse.close();
    }
  });

  it('counts wrong passwords per IP: the 6th try inside the window gets 429 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, `wrong-${i}`) });
      assert.equal(r.status, 401);
      assert.deepEqual(r.json(), { error: 'Invalid credentials', code: 'unauthorized' });
    }
    const limited = await t.tcp('GET', '/stats', undefined, { Authorization: basic(USER, PASSWORD) });
    assert.equal(limited.status, 429);
    const retry = Number(limited.headers['retry-after']);
    assert.ok(retry > 0 && retry <= 301, `Retry-After ${retry}`);
    assert.deepEqual(limited.json(), { error: 'Too many failed authentication attempts', code: 'busy' });
    assert.equal((await t.tcp('GET', '/health')).status, 200, '/health stays public while limited');
    assert.equal((await t.socket('GET', '/stats')).status, 200, 'the socket is never limited');
  });
});

describe('remote access toggled through PUT /config', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start();
  });
  after(() => t.stop());

  it('starts, moves and stops only the TCP listener; the socket and its streams live on', async () => {
    const health0 = (await t.socket('GET', '/health')).json();
    assert.equal(health0.listeners.tcp, null);
    const sse = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
    try {
      assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { enabled: true, port: 0 } } }))).status, 200);
      const tcp1 = await waitForTcp(t, (tcp) => tcp !== null);
      assert.equal((await t.tcp('GET', '/health', undefined, {}, tcp1.port)).status, 200);

      // A fixed free port: take one the kernel hands out, then ask tuicd to move there.
      const target = await freePort();
      assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { port: target } } }))).status, 200);
      const tcp2 = await waitForTcp(t, (tcp) => tcp !== null && tcp.port === target);
      assert.equal(tcp2.port, target);
      assert.equal(await portAnswers(tcp1.port), false, 'the old port is closed');

      assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { enabled: false } } }))).status, 200);
      await waitForTcp(t, (tcp) => tcp === null);
      assert.equal(await portAnswers(target), false, 'remote access off closes the port');

      const health1 = (await t.socket('GET', '/health')).json();
      assert.equal(health1.instance_id, health0.instance_id, 'same process, socket never rebound');
      const changes = sse.events.filter((e) => e.event === 'config-changed');
      assert.ok(changes.length >= 3, 'the SSE stream on the socket saw every save');
      await t.waitForStderr(/TCP listener stopped; socket listener untouched/);
      await t.waitForStderr(/TCP listener started/);
    } finally {
      sse.close();
    }
  });
});

async function waitForTcp(t: Tuicd, pred: (tcp: { port: number } | null) => boolean): Promise<{ port: number }> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const tcp = (await t.socket('GET', '/health')).json().listeners.tcp as { port: number } | null;
    if (pred(tcp)) return tcp as { port: number };
    if (Date.now() > deadline) throw new Error(`TCP listener never reached the expected state: ${JSON.stringify(tcp)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

describe('TCP port selection', () => {
  it('TUIC_PORT overrides the configured port for this process without saving it', async () => {
    const port = await freePort();
    const t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 1 } } }, env: { TUIC_PORT: String(port) } });
    try {
      assert.equal(t.tcpPort, port);
      const cfg = (await t.socket('GET', '/config')).json();
      assert.equal(cfg.services.server.port, 1, 'the saved port is untouched');
    } finally {
      await t.stop();
    }
  });

  it('walks to port+1 when the configured port is taken', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    // Find a port whose successor is free too, hold the first, and ask tuicd for it.
    let port = 0;
    for (let i = 0; i < 20 && port === 0; i++) {
      const candidate = await freePort();
      if (candidate >= 65535) continue;
      const ok = await new Promise<boolean>((resolve) => {
        blocker.once('error', () => resolve(false));
        blocker.listen(candidate, '127.0.0.1', () => resolve(true));
      });
      if (ok) port = candidate;
    }
    assert.ok(port > 0);
    try {
      const t = await Tuicd.start({ config: { services: { server: { enabled: true, port } } } });
      try {
        assert.ok(t.tcpPort === port + 1 || t.tcpPort === port + 2, `bound ${t.tcpPort} after ${port} was taken`);
      } finally {
        await t.stop();
      }
    } finally {
      blocker.close();
    }
  });
});
