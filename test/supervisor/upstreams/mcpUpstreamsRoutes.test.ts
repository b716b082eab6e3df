// The /mcp/upstreams routes on a real HttpServer (unix socket, plus TCP for the auth gate), with
// the real UpstreamStore and a file-backed CredentialStore; the hub is a recording UpstreamControl
// (the end-to-end tests with the real hub worker live with the hub).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { bindTcp, bindUnix, closeTcp, closeUnix, type TcpBinding, type UnixBinding } from '../../../supervisor/http/listeners.js';
import { HttpServer } from '../../../supervisor/http/server.js';
import { mcpUpstreamsRoutes } from '../../../supervisor/routes/mcpUpstreams.js';
import { CredentialStore, STORE_ENV } from '../../../supervisor/secrets/credentialStore.js';
import type { UpstreamDiffPlan } from '../../../supervisor/upstreams/configDiff.js';
import { UpstreamNotFoundError, type UpstreamControl } from '../../../supervisor/upstreams/upstreamControl.js';
import type { UpstreamStatusRow } from '../../../supervisor/upstreams/upstreamStatus.js';
import { UpstreamStore } from '../../../supervisor/upstreams/upstreamStore.js';
import { httpRequest, type HttpAnswer } from '../../helpers/tuicdProcess.js';
import { testTcpAuth } from '../../helpers/testAuth.js';
import { testEngine } from '../../helpers/httpEngine.js';

const OWN_PORT = 9876;
const BEARER = 'route-bearer-secret-31c7';
const HEADER_VALUE = 'route-header-secret-80d2';
const HEADER_REF = '0b7c1f2e-9a4d-4c3b-8e6f-1a2b3c4d5e6f';

/** Records what the routes ask of the hub; `failApply` makes the next applyPlan reject. */
class RecordingControl implements UpstreamControl {
  plans: UpstreamDiffPlan[] = [];
  reconnects: string[] = [];
  known = new Set<string>();
  /** A message (a plain Error) or the error itself. */
  failApply: string | Error | null = null;
  rows: UpstreamStatusRow[] = [
    {
      name: 'alpha',
      // The cast: shared/protocol/upstreamServer.ts builds the status union from an array, so its static type is `never` (reported).
      status: 'ready' as UpstreamStatusRow['status'],
      transport: { type: 'http', url: 'https://alpha.example/mcp' },
      tool_count: 1,
      tools: ['echo'],
      metrics: { call_count: 2, error_count: 0, last_latency_ms: 5 },
      last_error: null,
      pid: null,
    },
  ];

  async applyPlan(plan: UpstreamDiffPlan): Promise<void> {
    if (this.failApply !== null) {
      const failure = this.failApply;
      this.failApply = null;
      throw typeof failure === 'string' ? new Error(failure) : failure;
    }
    this.plans.push(plan);
    for (const s of plan.disconnect) this.known.delete(s.name);
    for (const r of plan.reconnect) {
      this.known.delete(r.before.name);
      this.known.add(r.after.name);
    }
    for (const s of plan.connect) this.known.add(s.name);
  }

  async reconnect(name: string): Promise<void> {
    if (!this.known.has(name)) throw new UpstreamNotFoundError(name);
    this.reconnects.push(name);
  }

  async status(): Promise<UpstreamStatusRow[]> {
    return this.rows;
  }
}

const http = (id: string, name = id, extra: object = {}) => ({ id, name, transport: { type: 'http', url: `https://${name}.example/mcp` }, ...extra });

describe('/mcp/upstreams routes', () => {
  let dir: string;
  let credentials: CredentialStore;
  let store: UpstreamStore;
  const control = new RecordingControl();
  let unix: UnixBinding;
  let tcp: TcpBinding;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-upstream-routes-'));
    credentials = await CredentialStore.open({ configDir: dir, env: { ...process.env, [STORE_ENV]: 'file' } });
    store = new UpstreamStore({ configDir: dir, credentials: () => credentials });
    await store.load();
    const passwordHash = await hash('pw', { cost: 4 });
    const auth = testTcpAuth(passwordHash);
    const server = new HttpServer({
      engine: testEngine(),
      routes: mcpUpstreamsRoutes({ store, control, credentials: () => credentials, ownPort: () => OWN_PORT }),
      limits: () => ({ maxBodyBytes: 1024 * 1024, requestTimeoutMs: 10_000 }),
      auth,
    });
    unix = await bindUnix(server.createApp('socket').app, join(dir, 't.sock'));
    tcp = await bindTcp(server.createApp('tcp').app, '127.0.0.1', 0);
  });

  after(() => {
    closeUnix(unix);
    closeTcp(tcp);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Content-Length is explicit: node:http silently drops the body of a DELETE without it. */
  const call = (method: string, path: string, body?: unknown): Promise<HttpAnswer> => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers = text === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) };
    return httpRequest({ socketPath: unix.path, method, path, headers }, text);
  };
  const fileText = () => readFileSync(join(dir, 'mcp-upstreams.json'), 'utf8');

  it('PUT saves, applies the plan to the hub and answers JSON null; GET lists the file without secrets', async () => {
    const put = await call('PUT', '/mcp/upstreams', {
      base: { servers: [] },
      config: { servers: [http('a1', 'alpha', { auth: { type: 'bearer', token: BEARER } })] },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.text, 'null');
    assert.match(String(put.headers['content-type']), /application\/json/);
    assert.deepEqual(
      control.plans.at(-1)!.connect.map((s) => s.name),
      ['alpha'],
    );
    assert.equal(await credentials.get('alpha'), BEARER);
    assert.equal(fileText().includes(BEARER), false);

    const get = await call('GET', '/mcp/upstreams');
    assert.equal(get.status, 200);
    assert.equal(get.text.includes(BEARER), false);
    assert.deepEqual(get.json(), {
      servers: [
        {
          id: 'a1',
          name: 'alpha',
          transport: { type: 'http', url: 'https://alpha.example/mcp' },
          enabled: true,
          timeout_secs: 30,
          auth: { type: 'bearer', token: '' },
        },
      ],
    });
  });

  it('PUT answers 400 with every validation error, or a duplicate id, and writes nothing', async () => {
    const before = fileText();
    const plans = control.plans.length;
    const { servers } = (await call('GET', '/mcp/upstreams')).json();
    const bad = await call('PUT', '/mcp/upstreams', {
      base: { servers },
      config: { servers: [...servers, http('b1', 'Beta'), { id: 'c1', name: 'gamma', transport: { type: 'http', url: `http://127.0.0.1:${OWN_PORT}` } }] },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json(), {
      error:
        "Invalid upstream config: Name 'Beta' is invalid: must contain only lowercase letters, digits, hyphens, and underscores; " +
        `URL 'http://127.0.0.1:${OWN_PORT}' points to this TUIC instance (circular proxy)`,
      code: 'invalid_input',
    });
    // A huge name is refused by length and quoted to 200 characters, not echoed whole.
    const huge = await call('PUT', '/mcp/upstreams', { base: { servers }, config: { servers: [...servers, http('h1', 'h'.repeat(500_000))] } });
    assert.equal(huge.status, 400);
    assert.ok(huge.text.length < 1000, `${huge.text.length} bytes`);
    assert.match(huge.json().error, /Name 'h{200}… \(499800 more characters\)' is invalid: must be at most 64 characters/);
    const dup = await call('PUT', '/mcp/upstreams', { base: { servers }, config: { servers: [...servers, http('d1'), http('d1', 'delta')] } });
    assert.equal(dup.status, 400);
    assert.deepEqual(dup.json(), { error: "Duplicate upstream id 'd1' in requested configuration", code: 'invalid_input' });
    // The body's shape is checked before the store sees it: the field is named, the wording kept.
    for (const [body, field, error] of [
      [{ config: { servers: [] } }, 'base', 'base is required'],
      [{ base: { servers: [] } }, 'config', 'config is required'],
      [undefined, 'base', 'base is required'],
      [{ base: ['wrong'], config: { servers: [] } }, 'base', 'Invalid upstream config: base must be an object with servers'],
      [{ base: { servers: [] }, config: 'x' }, 'config', 'Invalid upstream config: requested must be an object with servers'],
      [{ base: { servers: [] }, config: { servers: 'x' } }, 'config.servers', 'Invalid upstream config: requested.servers must be an array'],
      [{ base: { servers: {} }, config: { servers: [] } }, 'base.servers', 'Invalid upstream config: base.servers must be an array'],
    ] as const) {
      const r = await call('PUT', '/mcp/upstreams', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field, in: 'body' });
    }
    const notJson = await call('PUT', '/mcp/upstreams', '{"base":');
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json().code, 'invalid_input');
    assert.match(notJson.json().error, /^request body is not valid JSON/);
    assert.equal(fileText(), before);
    assert.equal(control.plans.length, plans, 'nothing applied to the hub');
  });

  it('PUT answers 409 for a concurrent same-id add (file untouched), 500 for a hub that refuses the plan, 503 + Retry-After for a hub past its restart budget (the file is saved each time)', async () => {
    const seen = (await call('GET', '/mcp/upstreams')).json();
    // Another client adds e1 first; this one, still holding the old copy, adds e1 too.
    assert.equal((await call('PUT', '/mcp/upstreams', { base: seen, config: { servers: [...seen.servers, http('e1', 'epsilon')] } })).status, 200);
    const conflict = await call('PUT', '/mcp/upstreams', { base: seen, config: { servers: [...seen.servers, http('e1', 'eta')] } });
    assert.equal(conflict.status, 409);
    assert.deepEqual(conflict.json(), { error: "Upstream id 'e1' was added concurrently; reload before adding it again", code: 'conflict' });
    assert.equal(JSON.parse(fileText()).servers.find((s: { id: string }) => s.id === 'e1').name, 'epsilon', 'the first add is kept');

    control.failApply = 'hub worker is not running';
    const latest = (await call('GET', '/mcp/upstreams')).json();
    const failed = await call('PUT', '/mcp/upstreams', { base: latest, config: { servers: [...latest.servers, http('z1', 'zeta')] } });
    assert.equal(failed.status, 500);
    assert.match(failed.json().error, /saved, but applying it to the running hub failed: hub worker is not running/);
    assert.equal(failed.json().code, 'internal');
    assert.ok(fileText().includes('"zeta"'));

    // A hub past its restart budget is the server being unavailable for a while, not a failure: 503 + Retry-After.
    control.failApply = new SupervisorError(ErrorCode.WORKER_EXITED, 'the upstream hub starts again in 7s with every saved upstream', { retry_after_s: 7 });
    const current = (await call('GET', '/mcp/upstreams')).json();
    const later = await call('PUT', '/mcp/upstreams', { base: current, config: { servers: [...current.servers, http('y1', 'ypsilon')] } });
    assert.equal(later.status, 503, later.text);
    assert.equal(later.headers['retry-after'], '7');
    assert.equal(later.json().code, 'unavailable');
    assert.match(later.json().error, /saved, but applying it to the running hub failed: the upstream hub starts again in 7s/);
    assert.ok(fileText().includes('"ypsilon"'));
  });

  it('reconnect: 200 null for a known upstream, 404 for an unknown one, 400 without a name', async () => {
    const ok = await call('POST', '/mcp/upstreams/reconnect', { name: 'alpha' });
    assert.equal(ok.status, 200);
    assert.equal(ok.text, 'null');
    assert.deepEqual(control.reconnects, ['alpha']);
    const missing = await call('POST', '/mcp/upstreams/reconnect', { name: 'nope' });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json(), { error: "Upstream 'nope' not found", code: 'not_found' });
    for (const [body, error] of [
      [{}, 'name is required'],
      [undefined, 'name is required'],
      [{ name: '' }, "missing 'name'"],
      [{ name: 7 }, "missing 'name'"],
      [{ name: ['alpha'] }, "missing 'name'"],
    ] as const) {
      const r = await call('POST', '/mcp/upstreams/reconnect', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field: 'name', in: 'body' });
    }
    assert.deepEqual(control.reconnects, ['alpha'], 'a refused body reconnects nothing');
  });

  it('GET /mcp/upstream-status returns the hub rows', async () => {
    const r = await call('GET', '/mcp/upstream-status');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { upstreams: control.rows });
  });

  it('credential routes write and delete through the credential store and never echo a value', async () => {
    const set = await call('POST', '/mcp/upstreams/credential', { name: 'omega', token: BEARER });
    assert.equal(set.status, 200);
    assert.equal(set.text, 'null');
    assert.equal(await credentials.get('omega'), BEARER);
    const header = { name: 'X-Api-Key', credential_ref: HEADER_REF };
    assert.equal((await call('POST', '/mcp/upstreams/credential', { name: 'omega', token: HEADER_VALUE, header })).status, 200);
    assert.equal(await credentials.get(`omega/header/${HEADER_REF}`), HEADER_VALUE);
    assert.equal(await credentials.get('omega'), BEARER, 'the header value has its own account');

    const refusals: Array<[unknown, string, string]> = [
      [{ token: HEADER_VALUE }, 'name', 'name is required'],
      [{ name: 7, token: HEADER_VALUE }, 'name', "missing 'name'"],
      [{ name: '', token: HEADER_VALUE }, 'name', "missing 'name'"],
      [{ name: 'Omega', token: HEADER_VALUE }, 'name', "Name 'Omega' is invalid: must contain only lowercase letters, digits, hyphens, and underscores"],
      [{ name: 'omega' }, 'token', 'token is required'],
      [{ name: 'omega', token: '' }, 'token', "missing 'token'"],
      [{ name: 'omega', token: { value: HEADER_VALUE } }, 'token', "missing 'token'"],
      [
        { name: 'omega', token: HEADER_VALUE, header: { name: 'X-Api-Key', credential_ref: 'not-a-uuid' } },
        'header',
        "'header' must be {name, credential_ref} with a UUID credential_ref",
      ],
      [{ name: 'omega', token: HEADER_VALUE, header: 'X-Api-Key' }, 'header', "'header' must be {name, credential_ref} with a UUID credential_ref"],
      // Bounded: a 1 MB token is not stored, a 1 MB name is not echoed.
      [{ name: 'omega', token: 't'.repeat(64 * 1024 + 1) }, 'token', "'token' must be at most 65536 bytes"],
      // Bytes, not characters: 40,000 three-byte characters are 120,000 bytes.
      [{ name: 'omega', token: '€'.repeat(40_000) }, 'token', "'token' must be at most 65536 bytes"],
      [
        { name: 'o'.repeat(1_000_000), token: HEADER_VALUE },
        'name',
        `Name '${'o'.repeat(200)}… (999800 more characters)' is invalid: must be at most 64 characters`,
      ],
      [
        { name: 'O'.repeat(60) + '!', token: HEADER_VALUE },
        'name',
        `Name '${'O'.repeat(60)}!' is invalid: must contain only lowercase letters, digits, hyphens, and underscores`,
      ],
    ];
    for (const [body, field, error] of refusals) {
      const r = await call('POST', '/mcp/upstreams/credential', body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 200));
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field, in: 'body' });
      assert.equal(r.text.includes(HEADER_VALUE), false);
    }
    assert.equal(await credentials.get('omega'), BEARER, 'no refused body stored anything');

    const del = await call('DELETE', '/mcp/upstreams/credential', { name: 'omega', header });
    assert.equal(del.status, 200);
    assert.equal(del.text, 'null');
    assert.equal(await credentials.get(`omega/header/${HEADER_REF}`), null);
    assert.equal(await credentials.get('omega'), BEARER);
    assert.equal((await call('DELETE', '/mcp/upstreams/credential', { name: 'omega' })).status, 200);
    assert.equal(await credentials.get('omega'), null);
    for (const [body, field, error] of [
      [{}, 'name', 'name is required'],
      [{ name: 42 }, 'name', "missing 'name'"],
      [{ name: 'omega', header: ['X-Api-Key'] }, 'header', "'header' must be {name, credential_ref} with a UUID credential_ref"],
    ] as const) {
      const r = await call('DELETE', '/mcp/upstreams/credential', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field, in: 'body' });
    }
  });

  it('credential routes answer 503 unavailable while no credential store is open; a bad body is still refused first', async () => {
    const server = new HttpServer({
      engine: testEngine(),
      routes: mcpUpstreamsRoutes({ store, control, credentials: () => null, ownPort: () => OWN_PORT }),
      limits: () => ({ maxBodyBytes: 1024 * 1024, requestTimeoutMs: 10_000 }),
      auth: testTcpAuth(),
    });
    const closed = await bindUnix(server.createApp('socket').app, join(dir, 'closed.sock'));
    try {
      for (const [method, body] of [
        ['POST', { name: 'omega', token: BEARER }],
        ['DELETE', { name: 'omega' }],
      ] as const) {
        const text = JSON.stringify(body);
        const headers = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) };
        const r = await httpRequest({ socketPath: closed.path, method, path: '/mcp/upstreams/credential', headers }, text);
        assert.equal(r.status, 503, `${method}: ${r.text}`);
        assert.deepEqual(r.json(), { error: 'no credential store is open', code: 'unavailable' });
        assert.equal(r.text.includes(BEARER), false);
      }
      const bad = JSON.stringify({ name: 'Omega', token: BEARER });
      const r = await httpRequest(
        {
          socketPath: closed.path,
          method: 'POST',
          path: '/mcp/upstreams/credential',
          headers: { 'Content-Type': 'application/json', 'Content-Length': String(bad.length) },
        },
        bad,
      );
      assert.equal(r.status, 400);
      assert.equal(r.json().field, 'name');
    } finally {
      closeUnix(closed);
    }
  });

  it('on TCP every route sits behind the listener’s auth: an unauthenticated save is refused and writes nothing', async () => {
    const before = fileText();
    const target = { host: '127.0.0.1', port: tcp.port };
    const body = JSON.stringify({ base: { servers: [] }, config: { servers: [http('t1', 'tau')] } });
    for (const [method, path, payload] of [
      ['PUT', '/mcp/upstreams', body],
      ['POST', '/mcp/upstreams/credential', JSON.stringify({ name: 'tau', token: BEARER })],
      ['GET', '/mcp/upstreams', undefined],
    ] as const) {
      const headers = payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) };
      const r = await httpRequest({ ...target, method, path, headers }, payload);
      assert.equal(r.status, 401, `${method} ${path}`);
    }
    assert.equal(fileText(), before);
    assert.equal(await credentials.get('tau'), null);
    const authed = await httpRequest({
      ...target,
      method: 'GET',
      path: '/mcp/upstreams',
      headers: { Authorization: 'Basic ' + Buffer.from('admin:pw').toString('base64') },
    });
    assert.equal(authed.status, 200);
  });
});
