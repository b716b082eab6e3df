// GET/PUT /config, monitoring routes and secret hygiene on a real tuicd.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { verify } from '@node-rs/bcrypt';

import { Tuicd } from '../helpers/tuicdProcess.js';
import { PtyConstants } from '../../shared/protocol/pty.js';

const SECRETS = {
  password_hash: '$2b$04$abcdefghijklmnopqrstuuN0tARealHashButSecretValue1234',
  session_token: 'sess-token-4a7e0f1c9b2d',
  relay_token: 'relay-token-77c1e8d0aa',
  vapid_private_key: 'vapid-private-5b3f9e2c',
};

function readLogs(configDir: string): string {
  const dir = join(configDir, 'logs');
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}

describe('config routes', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 } } } });
  });
  after(() => t.stop());

  it('a partial PUT keeps every untouched field (saving part of the config must not switch remote access off)', async () => {
    const r = await t.socket('PUT', '/config', JSON.stringify({ services: { auth: { username: 'bob' } } }));
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { ok: true });
    const cfg = (await t.socket('GET', '/config')).json();
    assert.equal(cfg.services.auth.username, 'bob');
    assert.equal(cfg.services.server.enabled, true, 'remote access still on');
    const onDisk = JSON.parse(readFileSync(join(t.configDir, 'config.json'), 'utf8'));
    assert.equal(onDisk.services.server.enabled, true);
    assert.equal(onDisk.services.auth.username, 'bob');
  });

  it('arrays replace and null resets a field to its default', async () => {
    await t.socket('PUT', '/config', JSON.stringify({ disabled_native_tools: ['debug'] }));
    assert.deepEqual((await t.socket('GET', '/config')).json().disabled_native_tools, ['debug']);
    await t.socket('PUT', '/config', JSON.stringify({ disabled_native_tools: null, services: { auth: { username: null } } }));
    const cfg = (await t.socket('GET', '/config')).json();
    assert.deepEqual(cfg.disabled_native_tools, ['config', 'debug']);
    assert.equal(cfg.services.auth.username, '');
  });

  it('refuses an invalid body with 400 naming the field, and writes nothing', async () => {
    const file = join(t.configDir, 'config.json');
    const before = readFileSync(file, 'utf8');
    const bad = await t.socket('PUT', '/config', JSON.stringify({ services: { server: { port: 'eighty' } } }));
    assert.equal(bad.status, 400);
    assert.match(bad.json().error, /^Invalid config: services\.server\.port: /);
    assert.equal(bad.json().code, 'invalid_input');
    assert.equal(bad.json().field, 'services.server.port');
    const notJson = await t.socket('PUT', '/config', '{"services":');
    assert.equal(notJson.status, 400);
    assert.match(notJson.json().error, /not valid JSON/);
    assert.equal(notJson.json().code, 'invalid_input');
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  it('refuses a wrong-typed field anywhere in the body, naming it, and a body that is not an object', async () => {
    const file = join(t.configDir, 'config.json');
    const before = readFileSync(file, 'utf8');
    const cases: Array<[unknown, string]> = [
      [{ collapse_tools: 'yes' }, 'collapse_tools'],
      [{ disabled_native_tools: 'debug' }, 'disabled_native_tools'],
      [{ disabled_native_tools: [1] }, 'disabled_native_tools[0]'],
      [{ font_size: 0 }, 'font_size'],
      [{ services: { auth: 'bob' } }, 'services.auth'],
      [{ services: { auth: { auth_rate_limit_max: -1 } } }, 'services.auth.auth_rate_limit_max'],
      [{ services: { tls: { mode: 'acme' } } }, 'services.tls.mode'],
      [[], ''],
      ['x', ''],
    ];
    for (const [body, field] of cases) {
      const r = await t.socket('PUT', '/config', JSON.stringify(body));
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.json().code, 'invalid_input', JSON.stringify(body));
      assert.equal(r.json().field, field, JSON.stringify(body));
      assert.equal(r.json().in, 'body');
    }
    assert.equal(readFileSync(file, 'utf8'), before, 'nothing written');
  });

  it('never returns a secret from GET /config, and never logs one', async () => {
    const put = await t.socket(
      'PUT',
      '/config',
      JSON.stringify({
        services: {
          auth: { password_hash: SECRETS.password_hash, session_token: SECRETS.session_token },
          relay: { token: SECRETS.relay_token },
          push: { vapid_private_key: SECRETS.vapid_private_key },
        },
      }),
    );
    assert.equal(put.status, 200, put.text);
    // A login attempt carrying a password must not leak into the logs either. Auth changes rebind
    // TCP, and with port 0 that means a new port: ask /health where it is now.
    await new Promise((r) => setTimeout(r, 200));
    const port = (await t.socket('GET', '/health')).json().listeners.tcp.port as number;
    const denied = await t.tcp('GET', '/stats', undefined, { Authorization: 'Basic ' + Buffer.from('bob:hunter2-plaintext').toString('base64') }, port);
    assert.equal(denied.status, 401);
    const text = (await t.socket('GET', '/config')).text;
    for (const value of Object.values(SECRETS)) assert.ok(!text.includes(value), `GET /config leaked ${value}`);
    const cfg = JSON.parse(text);
    assert.equal(cfg.services.auth.password_hash_exists, true);
    assert.equal(cfg.services.auth.session_token_exists, true);
    assert.equal(cfg.services.relay.token_exists, true);
    assert.equal(cfg.services.push.vapid_private_key_exists, true);
    assert.equal(cfg.services.auth.password_hash, undefined);
    await new Promise((r) => setTimeout(r, 300)); // pino writes from a worker thread
    const logs = readLogs(t.configDir) + t.stderr;
    assert.match(logs, /config saved/, 'the save was logged');
    for (const value of [...Object.values(SECRETS), 'hunter2-plaintext']) assert.ok(!logs.includes(value), `logs leaked ${value}`);
  });

  it('GET /stats, /metrics as JSON and as Prometheus text', async () => {
    const stats = (await t.socket('GET', '/stats')).json();
    assert.deepEqual(stats, {
      active_sessions: 0,
      max_sessions: 500,
      available_slots: 500,
      closed_sessions: 0,
      closed_bytes: 0,
      closed_budget_bytes: PtyConstants.TOMBSTONE_BUDGET_BYTES,
      session_bytes: [],
    });
    const m = (await t.socket('GET', '/metrics')).json();
    assert.equal(typeof m.total_spawned, 'number');
    assert.ok(typeof m.http_requests_total === 'object' && m.http_requests_total['listener=socket,status=200'] > 0);
    const prom = await t.socket('GET', '/metrics?format=prometheus');
    assert.match(String(prom.headers['content-type']), /^text\/plain/);
    assert.match(prom.text, /# TYPE tuicd_http_requests_total counter/);
    assert.match(prom.text, /tuicd_http_requests_total\{listener="socket",status="200"\} \d+/);
    const viaAccept = await t.socket('GET', '/metrics', undefined, { Accept: 'text/plain' });
    assert.match(viaAccept.text, /# HELP tuicd_uptime_seconds/);
  });

  it('POST /auth/hash-password returns a cost-12 bcrypt hash of the password', async () => {
    const r = await t.socket('POST', '/auth/hash-password', JSON.stringify({ password: 's3cret' }));
    assert.equal(r.status, 200);
    const h = r.json().hash as string;
    assert.match(h, /^\$2[aby]\$12\$/);
    assert.equal(await verify('s3cret', h), true);
    assert.equal((await t.socket('POST', '/auth/hash-password', JSON.stringify({}))).status, 400);
    for (const path of ['/auth/hash-password', '/config/hash-password']) {
      const wrongType = await t.socket('POST', path, JSON.stringify({ password: 12345678 }));
      assert.equal(wrongType.status, 400);
      assert.deepEqual(wrongType.json(), { error: 'password is required', code: 'invalid_input', field: 'password', in: 'body' });
      const long = await t.socket('POST', path, JSON.stringify({ password: 'é'.repeat(37) }));
      assert.equal(long.status, 400, 'bcrypt reads 72 bytes: 74 are refused, not cut');
      assert.deepEqual(long.json(), { error: 'password must be at most 72 bytes', code: 'invalid_input', field: 'password', in: 'body' });
    }
  });
});

describe('two processes saving different fields concurrently', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-shared-cfg-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('loses neither save', async () => {
    // Two named instances share one config dir (own sockets, same config.json).
    const a = await Tuicd.start({ configDir: dir, args: ['--instance', 'left'] });
    const b = await Tuicd.start({ configDir: dir, args: ['--instance', 'right'] });
    try {
      assert.notEqual(a.socketPath, b.socketPath);
      const rounds = 10;
      // Each process saves its own field in order; the two run at the same time.
      const saveAll = async (t: Tuicd, body: (i: number) => object) => {
        for (let i = 0; i < rounds; i++) assert.equal((await t.socket('PUT', '/config', JSON.stringify(body(i)))).status, 200);
      };
      await Promise.all([
        saveAll(a, (i) => ({ services: { auth: { username: `user-${i}` } } })),
        saveAll(b, (i) => ({ services: { server: { max_sessions: 100 + i } } })),
      ]);
      const onDisk = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      assert.equal(onDisk.services.auth.username, `user-${rounds - 1}`);
      assert.equal(onDisk.services.server.max_sessions, 100 + rounds - 1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
