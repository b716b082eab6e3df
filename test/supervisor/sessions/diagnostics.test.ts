// Raw PTY capture end to end: a real tuicd, its pty host and /bin/sh; the .tcap files read back.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';
import { CaptureConstants, parseCapture } from '../../../workers/pty/captureWriter.js';

async function waitUntil<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`${what} not reached within ${timeoutMs} ms: ${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

type Status = {
  enabled: boolean;
  session_id: string | null;
  dir: string | null;
  sessions: Array<{ session_id: string; path: string; bytes: number; full: boolean; error?: string }>;
};

describe('raw PTY capture (/diagnostics/capture)', () => {
  let t: Tuicd;
  const work = mkdtempSync(join(tmpdir(), 'tuicd-capture-e2e-'));
  before(async () => {
    t = await Tuicd.start({ env: { SHELL: '/bin/sh' } });
  });
  after(async () => {
    await t.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const create = async () => {
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh' }));
    assert.equal(r.status, 201, r.text);
    return (r.json() as { session_id: string }).session_id;
  };
  const write = async (id: string, data: string) => assert.equal((await t.socket('POST', `/sessions/${id}/write`, JSON.stringify({ data }))).status, 200);
  const capture = async (body: object) => t.socket('POST', '/diagnostics/capture', JSON.stringify(body));
  const status = async () => (await t.socket('GET', '/diagnostics/capture')).json() as Status;
  const records = (path: string) => (existsSync(path) ? parseCapture(readFileSync(path)).records : []);

  it('is off by default', async () => {
    const s = await status();
    assert.equal(s.enabled, false);
    assert.deepEqual(s.sessions, []);
    assert.equal(s.dir, join(t.configDir, 'captures'));
  });

  it('captures one session: typed input as an in record, its echo and output as out records, timestamps rising; others untouched', async () => {
    const a = await create();
    const b = await create();
    const on = await capture({ enabled: true, session_id: a });
    assert.equal(on.status, 200, on.text);
    const started = on.json() as Status;
    assert.equal(started.enabled, true);
    assert.equal(started.session_id, a);
    const path = join(t.configDir, 'captures', `${a}.tcap`);
    assert.deepEqual(
      started.sessions.map((x) => [x.session_id, x.path]),
      [[a, path]],
    );

    await write(a, 'echo hi\n');
    await write(b, 'echo other\n');
    // The line `hi`, or `# hi` when the shell's first prompt came after the typed line's echo (typed before the prompt).
    const hiLine = /^(?:[#$] )?hi\r?$/m;
    const recs = await waitUntil(
      () => records(path),
      (r) => hiLine.test(Buffer.concat(r.filter((x) => x.direction === 'out').map((x) => x.bytes)).toString()),
      10_000,
      'captured output',
    );
    const input = recs.filter((r) => r.direction === 'in');
    assert.deepEqual(
      input.map((r) => r.bytes.toString()),
      ['echo hi\n'],
      'the write arrives as one in record, boundary kept',
    );
    const out = Buffer.concat(recs.filter((r) => r.direction === 'out').map((r) => r.bytes)).toString();
    assert.match(out, hiLine);
    for (let i = 1; i < recs.length; i++) assert.ok(recs[i]!.ns >= recs[i - 1]!.ns, 'timestamps never go back');
    assert.ok(!existsSync(join(t.configDir, 'captures', `${b}.tcap`)), 'the other session is not captured');

    const s = await status();
    assert.equal(s.enabled, true);
    assert.equal(s.sessions.length, 1);
    assert.equal(s.sessions[0]!.bytes, statSync(path).size);
    assert.ok(s.sessions[0]!.bytes > 0);

    const off = await capture({ enabled: false });
    assert.equal(off.status, 200);
    assert.equal((off.json() as Status).enabled, false);
    const size = statSync(path).size;
    await write(a, 'echo after-stop\n');
    await waitUntil(
      async () => (await t.socket('GET', `/sessions/${a}/output?limit=65536`)).json().data as string,
      (d) => d.includes('after-stop\r\n'),
      10_000,
      'output',
    );
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(statSync(path).size, size, 'disable stops the file growing');
    assert.equal((await status()).enabled, false);
  });

  it('captures every session, new ones too, with fresh files per enable; caps a flood at 512 KiB', async () => {
    const old = await create();
    const on = await capture({ enabled: true });
    assert.equal(on.status, 200, on.text);
    assert.equal((on.json() as Status).session_id, null);
    const fresh = await create();
    await write(old, 'echo from-old\n');
    await write(fresh, 'head -c 2000000 /dev/zero | tr "\\0" a; echo; echo flood-$((1+1))-done\n');
    const dir = join(t.configDir, 'captures');
    await waitUntil(
      () => records(join(dir, `${old}.tcap`)),
      (r) => r.some((x) => x.bytes.toString().includes('from-old\r\n')),
      10_000,
      'old session captured',
    );
    // Wait for the shell's computed marker, not the echo of the typed command line.
    await waitUntil(
      async () => (await t.socket('GET', `/sessions/${fresh}/output?limit=200`)).json().data as string,
      (d) => d.includes('flood-2-done'),
      20_000,
      'flood finished',
    );
    const s = await status();
    const entry = s.sessions.find((x) => x.session_id === fresh);
    assert.ok(entry, 'a session created after the enable is captured');
    assert.equal(entry.full, true);
    const size = statSync(join(dir, `${fresh}.tcap`)).size;
    assert.equal(entry.bytes, size);
    assert.ok(size <= CaptureConstants.MAX_BYTES && size > CaptureConstants.MAX_BYTES - 70 * 1024, `${size} bytes`);
    const recs = records(join(dir, `${fresh}.tcap`));
    // The shell's prompt may be read before the command is written: look for the in record, not at index 0.
    const typed = recs.findIndex((r) => r.direction === 'in' && r.bytes.toString().startsWith('head -c 2000000'));
    assert.ok(typed >= 0, 'the typed command is recorded as input');
    assert.ok(recs.slice(typed + 1).some((r) => r.direction === 'out' && r.bytes.includes(0x61)));
    assert.equal((await capture({ enabled: false })).status, 200);

    // A new enable truncates: the old file starts over.
    assert.equal((await capture({ enabled: true, session_id: fresh })).status, 200);
    assert.ok(statSync(join(dir, `${fresh}.tcap`)).size < 200, 'fresh file per enable');
    assert.equal((await capture({ enabled: false })).status, 200);
  });

  it('refuses bad bodies and unknown sessions', async () => {
    assert.equal((await capture({ enabled: false })).status, 200);
    const missing = await capture({});
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.json(), { error: 'enabled is required', code: 'invalid_input', field: 'enabled', in: 'body' });
    for (const [body, field, error] of [
      [{ enabled: 'yes' }, 'enabled', 'enabled must be true or false'],
      [{ enabled: true, session_id: 7 }, 'session_id', 'session_id must be a non-empty string'],
      [{ enabled: true, session_id: '' }, 'session_id', 'session_id must be a non-empty string'],
    ] as const) {
      const r = await capture(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field, in: 'body' });
    }
    const unknown = await capture({ enabled: true, session_id: 'no-such-session' });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json(), { error: 'Session not found', code: 'not_found' });
    assert.equal((await status()).enabled, false);
  });
});

describe('raw PTY capture with a relative TUIC_CAPTURE_DIR', () => {
  it('answers {enabled:false, error} and captures nothing', async () => {
    const t = await Tuicd.start({ env: { SHELL: '/bin/sh', TUIC_CAPTURE_DIR: 'relative/captures' } });
    try {
      const r = await t.socket('POST', '/diagnostics/capture', JSON.stringify({ enabled: true }));
      assert.equal(r.status, 400);
      assert.deepEqual(r.json(), { error: 'TUIC_CAPTURE_DIR must be absolute', code: 'invalid_input', enabled: false });
      assert.equal(((await t.socket('GET', '/diagnostics/capture')).json() as Status).enabled, false);
    } finally {
      await t.stop();
    }
  });
});
