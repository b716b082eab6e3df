// GET/POST/DELETE /logs on a real tuicd: round trip with filters, the 1000-entry bound, clearing,
// a 400 that names the problem for every bad input (with nothing stored), and Basic Auth on TCP.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { Tuicd } from '../../helpers/tuicdProcess.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const basic = (user: string, pw: string) => 'Basic ' + Buffer.from(`${user}:${pw}`).toString('base64');

describe('/logs routes', () => {
  let t: Tuicd;
  const post = (body: unknown) => t.socket('POST', '/logs', typeof body === 'string' ? body : JSON.stringify(body));
  const get = async (query = '') => {
    const r = await t.socket('GET', `/logs${query}`);
    assert.equal(r.status, 200, r.text);
    return r.json<Array<Record<string, unknown>>>();
  };

  before(async () => {
    // Cost 4 keeps the fixture fast; the server verifies whatever cost the hash carries.
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash, auth_rate_limit_max: 0 } } },
    });
  });
  after(() => t.stop());
  beforeEach(async () => {
    assert.equal((await t.socket('DELETE', '/logs')).status, 200);
  });

  it('POST stores an entry that GET returns with id, timestamp, level, source, message and data_json', async () => {
    const beforeMs = Date.now();
    const r = await post({ level: 'error', source: 'network', message: 'request failed', data_json: '{"status":500}' });
    assert.equal(r.status, 200, r.text);
    const { ok, entry } = r.json();
    assert.equal(ok, true);
    assert.equal(typeof entry.id, 'number');
    assert.ok(entry.timestamp_ms >= beforeMs && entry.timestamp_ms <= Date.now(), `timestamp_ms ${entry.timestamp_ms}`);
    assert.deepEqual(await get(), [entry]);
    assert.deepEqual(Object.keys(entry).sort(), ['data_json', 'id', 'level', 'message', 'source', 'timestamp_ms']);
    assert.equal(entry.data_json, '{"status":500}');
    // Without data_json (absent or null) the field is left out.
    const bare = (await post({ level: 'info', source: 'app', message: 'no data', data_json: null })).json().entry;
    assert.equal('data_json' in bare, false);
    assert.ok(bare.id > entry.id, 'ids grow');
  });

  it('GET filters by level and source, then keeps the newest `limit`, oldest first; limit=0 is all', async () => {
    const seed: Array<[string, string, string]> = [
      ['info', 'git', 'g1'],
      ['error', 'git', 'g2'],
      ['warn', 'terminal', 't1'],
      ['error', 'terminal', 't2'],
      ['error', 'git', 'g3'],
      ['debug', 'eval_js', 'js1'],
    ];
    for (const [level, source, message] of seed) assert.equal((await post({ level, source, message })).status, 200);
    const messages = (entries: Array<Record<string, unknown>>) => entries.map((e) => e['message']);
    assert.deepEqual(messages(await get()), ['g1', 'g2', 't1', 't2', 'g3', 'js1']);
    assert.deepEqual(messages(await get('?limit=0')), ['g1', 'g2', 't1', 't2', 'g3', 'js1']);
    assert.deepEqual(messages(await get('?limit=2')), ['g3', 'js1']);
    assert.deepEqual(messages(await get('?level=error')), ['g2', 't2', 'g3']);
    assert.deepEqual(messages(await get('?source=git')), ['g1', 'g2', 'g3']);
    assert.deepEqual(messages(await get('?level=error&source=git')), ['g2', 'g3']);
    assert.deepEqual(messages(await get('?level=error&source=terminal&limit=1')), ['t2']);
    // The documented read-back: the newest eval_js entry, though other entries came after it.
    await post({ level: 'info', source: 'app', message: 'later' });
    assert.deepEqual(messages(await get('?source=eval_js&limit=1')), ['js1']);
    assert.deepEqual(await get('?source=dictation'), []);
    // Empty parameters are no filter.
    assert.equal((await get('?level=&source=&limit=')).length, 7);
  });

  it('an entry identical to the newest one is folded into it with repeat_count', async () => {
    const body = { level: 'warn', source: 'github', message: 'rate limited' };
    const first = (await post(body)).json().entry;
    await post(body);
    const third = (await post(body)).json().entry;
    assert.equal(third.id, first.id);
    assert.equal(third.repeat_count, 2);
    await post({ ...body, message: 'something else' });
    await post(body);
    const entries = await get();
    assert.deepEqual(
      entries.map((e) => [e['message'], e['repeat_count']]),
      [
        ['rate limited', 2],
        ['something else', undefined],
        ['rate limited', undefined],
      ],
    );
  });

  it('keeps only the newest 1000 entries: the oldest are dropped first', async () => {
    const TOTAL = 1005;
    // Batches of concurrent posts: fast, while the batches themselves keep a known order.
    for (let start = 0; start < TOTAL; start += 25) {
      const batch = [];
      for (let i = start; i < Math.min(start + 25, TOTAL); i++)
        batch.push(post({ level: 'info', source: 'store', message: `entry ${String(i).padStart(4, '0')}` }));
      for (const r of await Promise.all(batch)) assert.equal(r.status, 200, r.text);
    }
    const entries = await get();
    assert.equal(entries.length, 1000);
    const messages = entries.map((e) => e['message'] as string);
    const expected = Array.from({ length: TOTAL }, (_, i) => `entry ${String(i).padStart(4, '0')}`).slice(TOTAL - 1000);
    assert.deepEqual([...messages].sort(), expected, 'entries 0..4 are gone, 5..1004 are all there');
    const ids = entries.map((e) => e['id'] as number);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'oldest first',
    );
    assert.equal((await get('?limit=1000')).length, 1000);
    assert.equal((await get('?limit=5000')).length, 1000);
  });

  it('DELETE clears the ring and says how many entries went; ids keep counting', async () => {
    await post({ level: 'info', source: 'config', message: 'a' });
    const last = (await post({ level: 'info', source: 'config', message: 'b' })).json().entry;
    const r = await t.socket('DELETE', '/logs');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { ok: true, cleared: 2 });
    assert.deepEqual(await get(), []);
    assert.deepEqual((await t.socket('DELETE', '/logs')).json(), { ok: true, cleared: 0 });
    const next = (await post({ level: 'info', source: 'config', message: 'c' })).json().entry;
    assert.ok(next.id > last.id, `id ${next.id} after ${last.id}`);
  });

  it('refuses every bad POST body with 400 naming the problem, and stores nothing', async () => {
    const good = { level: 'info', source: 'app', message: 'fine' };
    // [case, body, error, the field named (undefined: the body as a whole)]
    const cases: Array<[string, unknown, RegExp, string?]> = [
      ['empty body', '', /request body is empty/],
      ['not JSON', '{"level":', /not valid JSON/],
      ['JSON null', 'null', /^body must be a JSON object$/, ''],
      ['an array', [good], /^body must be a JSON object$/, ''],
      ['a string', '"hello"', /^body must be a JSON object$/, ''],
      ['missing level', { source: 'app', message: 'm' }, /^level is required$/, 'level'],
      ['unknown level', { ...good, level: 'fatal' }, /^level must be one of debug, info, warn, error, got "fatal"$/, 'level'],
      ['level in capitals', { ...good, level: 'INFO' }, /level must be one of .*got "INFO"/, 'level'],
      ['level a number', { ...good, level: 3 }, /level must be one of .*got "3"$/, 'level'],
      ['null level', { ...good, level: null }, /level must be one of .*got "null"$/, 'level'],
      ['missing source', { level: 'info', message: 'm' }, /^source is required$/, 'source'],
      ['unknown source', { ...good, source: 'kernel' }, /^source must be one of app, .*eval_js, got "kernel"$/, 'source'],
      ['source an object', { ...good, source: { name: 'app' } }, /source must be one of .*got "\{\\"name\\":\\"app\\"\}"$/, 'source'],
      ['missing message', { level: 'info', source: 'app' }, /^message is required$/, 'message'],
      ['null message', { ...good, message: null }, /^message must be a string$/, 'message'],
      ['empty message', { ...good, message: '' }, /^message must not be empty$/, 'message'],
      ['message a number', { ...good, message: 42 }, /^message must be a string$/, 'message'],
      ['message too long', { ...good, message: 'x'.repeat(16 * 1024 + 1) }, /^message must be at most 16384 characters$/, 'message'],
      [
        'data_json an object',
        { ...good, data_json: { status: 500 } },
        /^data_json must be a string holding JSON text \(e\.g\. JSON\.stringify\(data\)\)/,
        'data_json',
      ],
      ['data_json not JSON text', { ...good, data_json: '{status:500}' }, /^data_json is not valid JSON text: /, 'data_json'],
      ['data_json too long', { ...good, data_json: JSON.stringify('y'.repeat(64 * 1024)) }, /^data_json must be .*of at most 65536 characters/, 'data_json'],
      ['a misspelt field', { ...good, dataJson: '{}' }, /^dataJson is not a known field$/, 'dataJson'],
    ];
    for (const [name, body, error, field] of cases) {
      const r = await post(body);
      assert.equal(r.status, 400, `${name}: ${r.text}`);
      assert.match(r.json().error, error, name);
      assert.equal(r.json().code, 'invalid_input', name);
      assert.equal(r.json().field, field, name);
    }
    assert.deepEqual(await get(), [], 'no bad body stored anything');
    // The same good body goes in: the refusals were about the input, not the route.
    assert.equal((await post(good)).status, 200);
    assert.equal((await get()).length, 1);
  });

  it('refuses a bad GET query with 400 naming the parameter', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?limit=-1', /^limit must be a non-negative integer \(0 means all\), got "-1"$/],
      ['?limit=abc', /^limit must be a non-negative integer/],
      ['?limit=1.5', /^limit must be a non-negative integer .*got "1.5"$/],
      ['?limit=99999999999999999999', /^limit must be a non-negative integer/],
      ['?level=fatal', /^level must be one of debug, info, warn, error, got "fatal"$/],
      ['?source=kernel', /^source must be one of app, .*got "kernel"$/],
    ];
    for (const [query, error] of cases) {
      const r = await t.socket('GET', `/logs${query}`);
      assert.equal(r.status, 400, `${query}: ${r.text}`);
      assert.match(r.json().error, error, query);
      assert.equal(r.json().code, 'invalid_input', query);
      assert.equal(r.json().in, 'query', query);
    }
  });

  it('on TCP every method needs Basic Auth (401 without it, nothing stored or cleared), and works with it', async () => {
    const body = JSON.stringify({ level: 'info', source: 'app', message: 'over tcp' });
    for (const [method, payload] of [
      ['GET', undefined],
      ['POST', body],
      ['DELETE', undefined],
    ] as const) {
      const r = await t.tcp(method, '/logs', payload);
      assert.equal(r.status, 401, `${method} without credentials`);
      const wrong = await t.tcp(method, '/logs', payload, { Authorization: basic(USER, 'wrong') });
      assert.equal(wrong.status, 401, `${method} with a wrong password`);
    }
    assert.deepEqual(await get(), [], 'the refused POSTs stored nothing');
    const auth = { Authorization: basic(USER, PASSWORD) };
    // On TCP a body must say it is JSON (browsers send text/plain cross-site without a preflight).
    assert.equal((await t.tcp('POST', '/logs', body, auth)).status, 415);
    const stored = await t.tcp('POST', '/logs', body, { ...auth, 'Content-Type': 'application/json' });
    assert.equal(stored.status, 200, stored.text);
    const listed = await t.tcp('GET', '/logs', undefined, auth);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.json().map((e: { message: string }) => e.message),
      ['over tcp'],
    );
    assert.equal((await t.tcp('DELETE', '/logs')).status, 401);
    assert.equal((await get()).length, 1, 'the refused DELETE cleared nothing');
    assert.deepEqual((await t.tcp('DELETE', '/logs', undefined, auth)).json(), { ok: true, cleared: 1 });
  });
});
