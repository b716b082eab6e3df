/**
 * The session family's declared routes (queue, process, diagnostics) against a real tuicd: a body
 * the schema refuses gets 400 invalid_input naming the field, the domain's refusals carry their
 * code, and the live answers match the schemas GET /openapi.json publishes for them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Compile } from 'typebox/compile';

import { sessionSuite } from '../../helpers/sessionSuite.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('session queue, process and diagnostics routes: schemas and refusals', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-route-schemas-');
  const queue = (id: string, body: unknown) => suite.t.socket('POST', `/sessions/${encodeURIComponent(id)}/queue`, JSON.stringify(body), JSON_TYPE);

  it('POST /sessions/:id/queue: a wrong body is 400 invalid_input naming the field; the rest keep their texts and gain a code', async () => {
    const shell = await suite.create();
    for (const [body, field, error] of [
      [{ text: 5 }, 'text', 'text must be a non-empty string'],
      [{ text: ' \t ' }, 'text', 'text must be a non-empty string'],
      [{ text: '' }, 'text', 'text must be a non-empty string'],
      [{}, 'text', 'text is required'],
      [{ text: 'ls', idempotencyKey: 5 }, 'idempotencyKey', 'idempotencyKey must be a string of 1 to 128 bytes'],
      [{ text: 'ls', idempotencyKey: '' }, 'idempotencyKey', 'idempotencyKey must be a string of 1 to 128 bytes'],
      [{ text: 'ls', idempotencyKey: 'k'.repeat(129) }, 'idempotencyKey', 'idempotencyKey must be a string of 1 to 128 bytes'],
      [['ls'], '', 'body must be a JSON object'],
    ] as const) {
      const r = await queue(shell.session_id, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field, in: 'body' }, JSON.stringify(body));
    }
    // Over the limits in bytes, not in characters: the handler counts them.
    const key = await queue(shell.session_id, { text: 'ls', idempotencyKey: 'é'.repeat(65) });
    assert.deepEqual(key.json(), { error: 'idempotencyKey must be a string of 1 to 128 bytes', code: 'invalid_input', field: 'idempotencyKey' });
    const long = await queue(shell.session_id, { text: 'é'.repeat(32 * 1024 + 1) });
    assert.deepEqual(long.json(), { error: 'text is 65538 bytes; the limit is 65536', code: 'invalid_input', field: 'text' });

    const notAgent = await queue(shell.session_id, { text: 'ls' });
    assert.deepEqual([notAgent.status, notAgent.json()], [400, { error: 'Session is not running an agent', code: 'invalid_input' }]);
    const unknown = await queue('no-such-session', { text: 'ls' });
    assert.deepEqual([unknown.status, unknown.json()], [404, { error: 'Session not found', code: 'not_found' }]);

    // Started as codex, its program gone: the queue refuses an exited session.
    const gone = await suite.create({ agent_type: 'codex', shell: '/bin/sh', args: ['-c', 'exit 0'] });
    await until('exited', async () => ((await suite.raw(gone.session_id)).exit_code === 0 ? true : undefined));
    const exited = await queue(gone.session_id, { text: 'ls' });
    assert.deepEqual(exited.json(), { error: 'Session has exited', code: 'conflict' });
  });

  it("GET and DELETE /sessions/:id/queue answer what the document says, an unknown session's 404 with its code", async () => {
    const doc = (await suite.t.socket('GET', '/openapi.json')).json();
    const answer = (path: string, method: string) => {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} is in the document`);
      return Compile(op.responses['200'].content['application/json'].schema);
    };
    const s = await suite.create();
    for (const [method, path, docPath] of [
      ['GET', `/sessions/${s.session_id}/queue`, '/sessions/{id}/queue'],
      ['DELETE', `/sessions/${s.session_id}/queue`, '/sessions/{id}/queue'],
      ['DELETE', `/sessions/${s.session_id}/queue/cmd-1`, '/sessions/{id}/queue/{cmdId}'],
      ['GET', '/process/stats', '/process/stats'],
      ['GET', '/diagnostics/capture', '/diagnostics/capture'],
    ] as const) {
      const r = await suite.t.socket(method, path);
      assert.equal(r.status, 200, `${method} ${path}: ${r.text}`);
      const check = answer(docPath, method.toLowerCase());
      assert.ok(check.Check(r.json()), `${method} ${path}: ${r.text.slice(0, 300)} matches ${docPath}`);
    }
    assert.deepEqual((await suite.t.socket('GET', `/sessions/${s.session_id}/queue`)).json(), []);
    assert.equal((await suite.t.socket('DELETE', `/sessions/${s.session_id}/queue`)).text, '0');
    assert.equal((await suite.t.socket('DELETE', `/sessions/${s.session_id}/queue/cmd-1`)).text, 'false');
    const stats = (await suite.t.socket('GET', '/process/stats')).json<Array<{ kind: string; session_id?: string }>>();
    assert.ok(
      stats.some((p) => p.kind === 'session' && p.session_id === s.session_id),
      'the session is listed',
    );
    for (const [method, path] of [
      ['GET', '/sessions/no-such-session/queue'],
      ['DELETE', '/sessions/no-such-session/queue'],
      ['DELETE', '/sessions/no-such-session/queue/cmd-1'],
    ] as const) {
      const r = await suite.t.socket(method, path);
      assert.deepEqual([r.status, r.json()], [404, { error: 'Session not found', code: 'not_found' }], `${method} ${path}`);
    }
    const monitor = doc.paths['/process/monitor'].get;
    assert.deepEqual(Object.keys(monitor.responses['200'].content), ['text/html']);
    assert.match((await suite.t.socket('GET', '/process/monitor')).text, /^<!doctype html>/);
    for (const [path, tag] of [
      ['/sessions/{id}/queue', 'sessions'],
      ['/process/stats', 'monitoring'],
      ['/process/monitor', 'monitoring'],
      ['/diagnostics/capture', 'sessions'],
    ] as const) {
      for (const op of Object.values(doc.paths[path]) as Array<{ tags: string[] }>) assert.deepEqual(op.tags, [tag], path);
    }
  });

  it('POST /sessions documents every field it takes, and refuses what the document calls invalid', async () => {
    const doc = (await suite.t.socket('GET', '/openapi.json')).json();
    const body = doc.paths['/sessions'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(Object.keys(body.properties).sort(), [
      'agent_type',
      'alias',
      'args',
      'cols',
      'cwd',
      'display_name',
      'env',
      'keep_open',
      'rows',
      'session_id',
      'shell',
      'tuic_session',
    ]);
    const check = Compile(body);
    for (const bad of [{ rows: 0 }, { session_id: '..' }, { env: { 'A-B': 'x' } }, { agent_type: 'emacs' }, { keep_open: 1 }]) {
      assert.equal(check.Check(bad), false, JSON.stringify(bad));
      const r = await suite.t.socket('POST', '/sessions', JSON.stringify({ cwd: suite.work, ...bad }), JSON_TYPE);
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.json().code, 'invalid_input');
    }
    assert.equal(check.Check({ rows: 30, cols: null, session_id: 'tab-1', env: { A_1: 'x' }, agent_type: 'claude', keep_open: true }), true);
  });
});
