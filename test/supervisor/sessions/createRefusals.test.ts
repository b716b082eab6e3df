/**
 * POST /sessions answers a bad request with 400 naming the field, and a dead pty host with 503 and
 * Retry-After, never 500: a shell that cannot start or a cwd that cannot be entered is the
 * request's fault; a session_id must be safe in URLs, logs and file names.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };

describe('POST /sessions refusals', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-create-');
  const create = (body: object) => suite.t.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh', cwd: suite.work, ...body }), JSON_TYPE);

  it('a shell or cwd that cannot run is a 400 that says why, and no session is left', async () => {
    const before = (await suite.t.socket('GET', '/sessions')).json<unknown[]>().length;
    for (const [body, why] of [
      [{ shell: '/nonexistent' }, /Failed to spawn "\/nonexistent": cannot start/],
      [{ shell: '/etc/passwd' }, /not an executable file/],
      [{ shell: '/tmp' }, /not an executable file/],
      [{ cwd: '/nonexistent' }, /Working directory does not exist/],
      [{ cwd: '/etc/passwd' }, /not a directory/],
      [{ cwd: 'relative/dir' }, /absolute path/],
    ] as const) {
      const r = await create(body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.json().error, why);
    }
    assert.equal((await suite.t.socket('GET', '/sessions')).json<unknown[]>().length, before);
  });

  it('session_id must be 1–128 characters of [A-Za-z0-9._:-], and not a path step', async () => {
    for (const session_id of ['../../etc', 'a/b', '', 'x'.repeat(129), '..', '.', 'tab 1', 'é', '\ud800', 42, null]) {
      const r = await create({ session_id });
      assert.equal(r.status, 400, `${JSON.stringify(session_id)}: ${r.text}`);
      assert.match(r.json().error, /^session_id must be 1-128 characters of A-Z a-z 0-9 \. _ : - \(and not only dots\), got /);
      assert.equal(r.json().field, 'session_id');
      assert.ok(r.text.length < 600, 'the answer quotes at most 200 characters of the input');
    }
    for (const session_id of ['tab-1', 'agent:claude.2', 'x'.repeat(128), 'A_b']) {
      const r = await create({ session_id });
      assert.equal(r.status, 201, `${session_id}: ${r.text}`);
      assert.equal(r.json().session_id, session_id);
      await suite.t.socket('DELETE', `/sessions/${session_id}`);
    }
  });

  it('fields of the wrong type are refused by name: 400 invalid_input, the field and where it was', async () => {
    const before = (await suite.t.socket('GET', '/sessions')).json<unknown[]>().length;
    for (const [body, field, error] of [
      [{ args: 'x' }, 'args', /^args must be an array of strings, got "x"$/],
      [{ args: [1] }, 'args[0]', /^args must be an array of strings, got "1"$/],
      [{ shell: 7 }, 'shell', /^shell must be a string, got "7"$/],
      [{ cwd: {} }, 'cwd', /^cwd must be a string, got "\{\}"$/],
      [{ alias: 'a'.repeat(100_000) }, 'alias', /^alias must be a string of at most 256 characters, got "a{10}/],
      [{ tuic_session: ['t'] }, 'tuic_session', /^tuic_session must be a string of at most 256 characters, got "\[\\"t\\"\]"$/],
      [{ display_name: 'd'.repeat(257) }, 'display_name', /^display_name must be a string of at most 256 characters/],
      [{ rows: 'x' }, 'rows', /^rows must be between 1 and 500, got x$/],
      [{ cols: 2.5 }, 'cols', /^cols must be between 1 and 500, got 2.5$/],
      [{ agent_type: 5 }, 'agent_type', /^agent_type must be one of claude, gemini, opencode, aider, codex, amp, cursor, goose, grok, droid, pi; got "5"$/],
      [{ keep_open: 'yes' }, 'keep_open', /^keep_open must be a boolean, got "yes"$/],
      [{ env: 'A=1' }, 'env', /^env must be an object of names to strings, got "A=1"$/],
      [{ env: ['A'] }, 'env', /^env must be an object of names to strings/],
      [{ env: { '1BAD': 'x' } }, 'env.1BAD', /^env names must be letters, digits and _, not starting with a digit$/],
      [{ env: { A: 1 } }, 'env.A', /^env values must be strings without NUL$/],
      [{ env: { A: 'a\u0000b' } }, 'env.A', /^env values must be strings without NUL$/],
      [{ session_id: 42 }, 'session_id', /^session_id must be 1-128 characters/],
    ] as const) {
      const r = await create(body);
      assert.equal(r.status, 400, `${field}: ${r.text}`);
      const answer = r.json();
      assert.match(answer.error, error, field);
      assert.deepEqual({ ...answer, error: undefined }, { error: undefined, code: 'invalid_input', field, in: 'body' }, field);
      assert.ok(r.text.length < 600);
    }
    for (const body of ['[]', '"x"', '7']) {
      const r = await suite.t.socket('POST', '/sessions', body, JSON_TYPE);
      assert.deepEqual(r.json(), { error: 'body must be a JSON object', code: 'invalid_input', field: '', in: 'body' }, body);
    }
    assert.equal((await suite.t.socket('GET', '/sessions')).json<unknown[]>().length, before, 'no session was started');
  });

  it('null takes the default where it did, and env is checked for what no schema says', async () => {
    const made = await create({ rows: null, cols: null, agent_type: null, env: null });
    assert.equal(made.status, 201, made.text);
    const { session_id } = made.json<{ session_id: string }>();
    const info = (await suite.t.socket('GET', '/sessions'))
      .json<Array<{ session_id: string; rows: number; cols: number }>>()
      .find((s) => s.session_id === session_id);
    assert.deepEqual([info?.rows, info?.cols], [24, 80]);
    await suite.t.socket('DELETE', `/sessions/${session_id}`);

    const reserved = await create({ env: { TUIC_SESSION: 'x' } });
    assert.equal(reserved.status, 400);
    assert.deepEqual(reserved.json(), {
      error: 'env may not set TUIC_SESSION: tuicd sets it to name the session',
      code: 'invalid_input',
      field: 'env.TUIC_SESSION',
    });
    const many = await create({ env: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, 'x'])) });
    assert.deepEqual(many.json(), { error: 'env has 65 variables; at most 64', code: 'invalid_input', field: 'env' });
    const long = await create({ env: { BIG: 'é'.repeat(16 * 1024 + 1) } });
    assert.deepEqual(long.json(), { error: 'env BIG must be a string of at most 32768 bytes without NUL', code: 'invalid_input', field: 'env.BIG' });
  });

  it('while the pty host restarts after dying, POST /sessions gets 503 with Retry-After, never 500', async () => {
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const stats = (await suite.t.socket('GET', '/process/stats')).json<Array<{ kind: string; pid: number }>>();
      const host = stats.find((p) => p.kind === 'pty-host');
      assert.ok(host, 'the pty host is listed');
      process.kill(host.pid, 'SIGKILL');
      const r = await create({});
      statuses.push(r.status);
      assert.notEqual(r.status, 500, r.text);
      if (r.status === 503) assert.match(String(r.headers['retry-after']), /^\d+$/, 'says when to retry');
      else assert.equal(r.status, 201, r.text);
      // Wait for the new host before the next round.
      for (let i = 0; i < 100 && (await create({})).status !== 201; i++) await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(statuses.includes(503), `a request right after the kill met the dead host at least once: ${statuses.join(', ')}`);
  });
});
