/**
 * /agents and agent action=detect against stand-in agent programs on tuicd's PATH:
 * versions, the no-alt-screen flag from --help, the 2 s probe deadline, detect-all without probes,
 * launch args for native scrollback, conversation ids on disk, and 501 for what needs a desktop.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';

describe('/agents', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-agents-routes-'));
  const bin = join(dir, 'bin');
  const home = join(dir, 'home');
  let t: Tuicd;

  const script = (name: string, body: string): void => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };

  before(async () => {
    mkdirSync(bin, { recursive: true });
    mkdirSync(join(home, '.claude', 'projects', '-work-repo'), { recursive: true });
    writeFileSync(join(home, '.claude', 'projects', '-work-repo', 'abc-123.jsonl'), '{}\n');
    mkdirSync(join(home, '.codex', 'sessions', '2026', '12', '03'), { recursive: true });
    writeFileSync(join(home, '.codex', 'sessions', '2026', '12', '03', 'rollout-2026-12-03T10-00-00-def-456.jsonl'), '{}\n');
    script(
      'codex',
      'case "$1" in --version) echo "codex-cli 0.58.1";; --help) echo "Usage: codex [OPTIONS]"; echo "      --no-alt-screen  Keep the inline viewport";; esac',
    );
    script('claude', 'case "$1" in --version) echo "2.1.3 (Claude Code)";; --help) echo "Usage: claude [options]";; esac');
    // Hangs on every probe: the deadline must answer for it.
    script('gemini', 'sleep 20');
    t = await Tuicd.start({ env: { SHELL: '/bin/sh', HOME: home, PATH: `${bin}:/usr/bin:/bin` } });
  });
  after(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const probe = (binary: string) => t.socket('POST', '/agents/detect', JSON.stringify({ binary }));

  it('POST detect: path, version and the no-alt-screen flag; a hanging binary answers within the deadline; a missing one is all null', async () => {
    assert.deepEqual((await probe('codex')).json(), {
      path: join(bin, 'codex'),
      version: '0.58.1',
      supports_no_alt_screen: true,
    });
    assert.deepEqual((await probe('claude')).json(), {
      path: join(bin, 'claude'),
      version: '2.1.3',
      supports_no_alt_screen: false,
    });
    const started = Date.now();
    assert.deepEqual((await probe('gemini')).json(), {
      path: join(bin, 'gemini'),
      version: null,
      supports_no_alt_screen: false,
    });
    assert.ok(Date.now() - started < 6_000, 'two 2 s probes at most');
    assert.deepEqual((await probe('aider')).json(), { path: null, version: null, supports_no_alt_screen: false });
    for (const query of ['', '?binary=']) {
      const r = await t.socket('GET', `/agents/detect${query}`);
      assert.equal(r.status, 400, query);
      assert.equal(r.json().code, 'invalid_input');
      assert.equal(r.json().field, 'binary');
      assert.equal(r.json().in, 'query');
    }
    assert.match((await t.socket('GET', '/agents/detect?binary=')).json().error, /^binary is required \(a name on PATH or an absolute path\)$/);
    for (const body of [{}, { binary: '' }, { binary: 7 }]) {
      const r = await t.socket('POST', '/agents/detect', JSON.stringify(body));
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual([r.json().code, r.json().field, r.json().in], ['invalid_input', 'binary', 'body']);
    }
  });

  it('GET detect runs nothing: the path, and only what a POST found in the same unchanged file', async () => {
    const marker = join(dir, 'ran-probe-me');
    const write = (version: string) =>
      script('probe-me', `touch '${marker}'; case "$1" in --version) echo "probe-me ${version}";; --help) echo "  --no-alt-screen";; esac`);
    write('1.0.0');
    const unprobed = { path: join(bin, 'probe-me'), version: null, supports_no_alt_screen: false };
    assert.deepEqual((await t.socket('GET', '/agents/detect?binary=probe-me')).json(), unprobed);
    assert.deepEqual((await t.socket('GET', `/agents/detect?binary=${encodeURIComponent(join(bin, 'probe-me'))}`)).json(), unprobed);
    assert.equal(existsSync(marker), false, 'a GET ran the binary');
    const probed = { path: join(bin, 'probe-me'), version: '1.0.0', supports_no_alt_screen: true };
    assert.deepEqual((await probe('probe-me')).json(), probed);
    assert.equal(existsSync(marker), true, 'the POST runs it');
    rmSync(marker);
    assert.deepEqual((await t.socket('GET', '/agents/detect?binary=probe-me')).json(), probed, 'the probe is remembered');
    write('2.0.0-longer');
    assert.deepEqual((await t.socket('GET', '/agents/detect?binary=probe-me')).json(), unprobed, 'a changed file is not the one probed');
    assert.equal(existsSync(marker), false, 'a GET ran the binary');
  });

  it('detect-all: paths only, blank names dropped; GET /agents and agent action=detect list what is installed', async () => {
    const all = await t.socket('POST', '/agents/detect-all', JSON.stringify({ binaries: ['codex', ' ', 'aider'] }));
    assert.deepEqual(all.json(), {
      codex: { path: join(bin, 'codex'), version: null, supports_no_alt_screen: false },
      aider: { path: null, version: null, supports_no_alt_screen: false },
    });
    assert.equal((await t.socket('POST', '/agents/detect-all', JSON.stringify({ binaries: 'codex' }))).status, 400);
    const tooMany = await t.socket('POST', '/agents/detect-all', JSON.stringify({ binaries: Array.from({ length: 65 }, (_, i) => `b${i}`) }));
    assert.deepEqual(tooMany.json(), { error: 'binaries must be an array of at most 64 strings', code: 'invalid_input', field: 'binaries', in: 'body' });
    const listed = (await t.socket('GET', '/agents')).json();
    assert.deepEqual(listed.agents.map((a: { name: string }) => a.name).sort(), ['claude', 'codex', 'gemini']);
    const tool = await t.socket(
      'POST',
      '/mcp',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'agent', arguments: { action: 'detect' } } }),
      {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
    );
    const detected = JSON.parse(tool.json().result.content[0].text);
    assert.deepEqual(
      detected.find((a: { name: string }) => a.name === 'codex'),
      { name: 'codex', path: join(bin, 'codex'), version: '0.58.1' },
    );
  });

  it('launch-args: Codex gets --no-alt-screen once; others unchanged', async () => {
    const codex = await t.socket('POST', '/agents/launch-args', JSON.stringify({ agentType: 'codex', binaryPath: join(bin, 'codex'), args: ['--model', 'x'] }));
    assert.deepEqual(codex.json(), ['--no-alt-screen', '--model', 'x']);
    const again = await t.socket(
      'POST',
      '/agents/launch-args',
      JSON.stringify({ agentType: 'codex', binaryPath: join(bin, 'codex'), args: ['--no-alt-screen'] }),
    );
    assert.deepEqual(again.json(), ['--no-alt-screen']);
    const claude = await t.socket('POST', '/agents/launch-args', JSON.stringify({ agentType: 'claude', binaryPath: join(bin, 'claude'), args: ['-c'] }));
    assert.deepEqual(claude.json(), ['-c']);
  });

  it('refuses a wrong-typed body with 400 invalid_input naming the field', async () => {
    const cases: Array<[string, object, string]> = [
      ['/agents/detect-all', { binaries: 'codex' }, 'binaries'],
      ['/agents/detect-all', { binaries: ['codex', 7] }, 'binaries[1]'],
      ['/agents/detect-all', {}, 'binaries'],
      ['/agents/launch-args', { agentType: 'codex', binaryPath: 7, args: [] }, 'binaryPath'],
      ['/agents/launch-args', { agentType: 'codex', binaryPath: '/bin/codex', args: '--model x' }, 'args'],
      ['/agents/launch-args', { binaryPath: '/bin/codex', args: [] }, 'agentType'],
      ['/agents/verify-session', { agentType: 'claude', sessionId: 12, cwd: '/' }, 'sessionId'],
      ['/agents/verify-session', { agentType: 'claude', sessionId: 'abc', cwd: null }, 'cwd'],
      ['/agents/verify-session', { agentType: ['claude'], sessionId: 'abc', cwd: '/' }, 'agentType'],
    ];
    for (const [path, body, field] of cases) {
      const r = await t.socket('POST', path, JSON.stringify(body));
      assert.equal(r.status, 400, `${path} ${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.json().code, 'invalid_input');
      assert.equal(r.json().field, field, `${path} ${JSON.stringify(body)}`);
      assert.equal(r.json().in, 'body');
    }
  });

  it('verify-session: Claude and Codex conversation files; a path-like id is refused', async () => {
    const verify = async (body: object) => (await t.socket('POST', '/agents/verify-session', JSON.stringify(body))).json();
    assert.equal(await verify({ agentType: 'claude', sessionId: 'abc-123', cwd: '/work/repo', envOverrides: {} }), true);
    assert.equal(await verify({ agentType: 'claude', sessionId: 'abc-124', cwd: '/work/repo', envOverrides: {} }), false);
    assert.equal(await verify({ agentType: 'codex', sessionId: 'def-456', cwd: '/anywhere' }), true);
    assert.equal(await verify({ agentType: 'gemini', sessionId: 'abc-123', cwd: '/work/repo' }), false);
    const bad = await t.socket('POST', '/agents/verify-session', JSON.stringify({ agentType: 'claude', sessionId: '../../etc/passwd', cwd: '/' }));
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json(), {
      error: 'sessionId must be 1-128 of A-Z a-z 0-9 . _ -, got ../../etc/passwd',
      code: 'invalid_input',
      field: 'sessionId',
      in: 'body',
    });
  });

  it('open-in-app and ides need a desktop: 501 with the reason', async () => {
    for (const [method, path] of [
      ['POST', '/agents/open-in-app'],
      ['GET', '/agents/ides'],
    ] as const) {
      const r = await t.socket(method, path, method === 'POST' ? JSON.stringify({ path: '/x', app: 'vscode' }) : undefined);
      assert.equal(r.status, 501);
      assert.match(r.json().error, /headless/);
      assert.equal(r.json().code, 'not_implemented');
    }
  });
});
