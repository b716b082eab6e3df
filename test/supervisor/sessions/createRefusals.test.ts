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
      assert.match(r.json().error, /session_id must be/);
      assert.ok(r.text.length < 600, 'the answer quotes at most 200 characters of the input');
    }
    for (const session_id of ['tab-1', 'agent:claude.2', 'x'.repeat(128), 'A_b']) {
      const r = await create({ session_id });
      assert.equal(r.status, 201, `${session_id}: ${r.text}`);
      assert.equal(r.json().session_id, session_id);
      await suite.t.socket('DELETE', `/sessions/${session_id}`);
    }
  });

  it('fields of the wrong type are refused by name', async () => {
    for (const [body, field] of [
      [{ args: 'x' }, 'args'],
      [{ args: [1] }, 'args'],
      [{ shell: 7 }, 'shell'],
      [{ cwd: {} }, 'cwd'],
      [{ alias: 'a'.repeat(100_000) }, 'alias'],
      [{ tuic_session: ['t'] }, 'tuic_session'],
    ] as const) {
      const r = await create(body);
      assert.equal(r.status, 400, `${field}: ${r.text}`);
      assert.match(r.json().error, new RegExp(`^${field} must be`));
      assert.ok(r.text.length < 600);
    }
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
