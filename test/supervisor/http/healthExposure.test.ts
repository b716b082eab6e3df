// Issue 26 item 7 on a real tuicd: GET /health over TCP without credentials says it is alive and
// which version, nothing more (no paths, no versions of Node or uWS, no counts, no uptime); with
// credentials that pass, and on the unix socket, it gives the full answer. Both shapes are what
// GET /openapi.json says the route answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';
import { Compile } from 'typebox/compile';

import { Tuicd } from '../../helpers/tuicdProcess.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const TOKEN = 'tok-health-0123456789abcdef0123';
const basic = (user: string, pw: string) => 'Basic ' + Buffer.from(`${user}:${pw}`).toString('base64');

describe('GET /health over TCP', () => {
  let t: Tuicd;
  let matchesSchema: (value: unknown) => boolean;
  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash, session_token: TOKEN } } },
    });
    const doc = (await t.socket('GET', '/openapi.json')).json();
    const check = Compile(doc.paths['/health'].get.responses['200'].content['application/json'].schema);
    matchesSchema = (value) => check.Check(value);
  });
  after(() => t.stop());

  it('answers {ok, version} only to a caller without credentials', async () => {
    const r = await t.tcp('GET', '/health');
    assert.equal(r.status, 200);
    const version = (await t.socket('GET', '/api/version')).json().version;
    assert.deepEqual(r.json(), { ok: true, version });
    for (const secret of [t.configDir, t.socketPath, t.home, process.version]) assert.ok(!r.text.includes(secret), `${secret} leaked: ${r.text}`);
    assert.ok(matchesSchema(r.json()), 'the OpenAPI schema describes the anonymous answer');
  });

  it('answers {ok, version} to wrong credentials, never a refusal', async () => {
    const r = await t.tcp('GET', '/health', undefined, { Authorization: basic(USER, 'wrong') });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.json()).sort(), ['ok', 'version']);
  });

  it('gives the full answer with Basic, the session cookie or ?token=, as on the socket', async () => {
    const onSocket = (await t.socket('GET', '/health')).json();
    assert.equal(onSocket.socket_path, t.socketPath);
    assert.ok(matchesSchema(onSocket), 'the OpenAPI schema describes the full answer');
    for (const [what, path, headers] of [
      ['Basic', '/health', { Authorization: basic(USER, PASSWORD) }],
      ['cookie', '/health', { Cookie: `tui-session=${TOKEN}` }],
      ['token', `/health?token=${TOKEN}`, {}],
    ] as const) {
      const r = await t.tcp('GET', path, undefined, headers);
      assert.equal(r.status, 200, what);
      const body = r.json();
      assert.equal(body.socket_path, t.socketPath, what);
      assert.equal(body.instance_id, onSocket.instance_id, what);
      assert.equal(body.build.node, process.version, what);
      assert.equal(body.listeners.tcp.port, t.tcpPort, what);
    }
  });
});
