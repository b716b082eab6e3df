// The tuicd binary end to end: CLI flags, the start line, status by a real connect, and the socket's life.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { MAIN_JS, Tuicd } from '../helpers/tuicdProcess.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tuicd-life-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('tuicd CLI', () => {
  it('prints help and version', async () => {
    const help = await Tuicd.runToExit(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--config-dir DIR/);
    assert.match(help.stdout, /status/);
    const version = await Tuicd.runToExit(['--version']);
    assert.equal(version.code, 0);
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(version.stdout.trim(), `tuicd ${pkg.version}`);
  });

  it('refuses an unknown flag with exit 2', async () => {
    const r = await Tuicd.runToExit(['--bogus']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bogus/);
  });

  it('status says not running, then running, by a real connect', async () => {
    const dir = tempDir();
    const before = await Tuicd.runToExit(['status', '--config-dir', dir]);
    assert.equal(before.code, 1);
    assert.match(before.stdout, /not running/);
    const t = await Tuicd.start({ configDir: dir });
    try {
      const alive = await Tuicd.runToExit(['status', '--config-dir', dir, '--json']);
      assert.equal(alive.code, 0);
      assert.equal(JSON.parse(alive.stdout).ok, true);
    } finally {
      await t.stop();
    }
  });

  it('prints one start line naming the socket, which is owner-only, and answers /health', async () => {
    const t = await Tuicd.start();
    try {
      assert.equal(t.socketPath, join(t.configDir, 'mcp.sock'));
      assert.equal(t.stdout.trim().split('\n').length, 1);
      assert.equal(statSync(t.socketPath).mode & 0o777, 0o600);
      const health = await t.socket('GET', '/health');
      assert.equal(health.status, 200);
      const h = health.json();
      assert.equal(h.ok, true);
      assert.equal(h.listeners.socket.path, t.socketPath);
      assert.equal(h.listeners.tcp, null);
      assert.match(h.instance_id, /^[0-9a-f-]{36}$/);
      assert.equal(typeof h.uptime_secs, 'number');
      assert.ok(existsSync(join(t.configDir, 'config.schema.json')), 'writes config.schema.json for editors');
    } finally {
      await t.stop();
    }
    assert.equal(existsSync(t.socketPath), false, 'a clean stop removes its own socket');
  });

  it('reports the credential store in /health: the vault file, with the reason, when no keyring answers', async () => {
    const t = await Tuicd.start({ env: { TUIC_CREDENTIAL_STORE: '', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/tuicd-test-bus' } });
    try {
      const store = (await t.socket('GET', '/health')).json().credential_store;
      assert.equal(store.backend, 'file');
      assert.match(store.reason, /vault|keyring|Secret Service|D-Bus/i);
    } finally {
      await t.stop();
    }
  });

  it('gives a named instance a short deterministic socket in the temp dir', async () => {
    const dir = tempDir();
    const a = await Tuicd.start({ configDir: dir, args: ['--instance', 'work'] });
    const path = a.socketPath;
    await a.stop();
    assert.ok(path.startsWith(tmpdir()), path);
    assert.ok(Buffer.byteLength(path) < 104, path);
    const b = await Tuicd.start({ configDir: dir, args: ['--instance', 'work'] });
    try {
      assert.equal(b.socketPath, path, 'same instance, same path');
    } finally {
      await b.stop();
    }
  });

  it('refuses a corrupt config.json, naming the file and the parse error, without touching it', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, '{"services": {"server": ');
    const r = await Tuicd.runToExit(['--config-dir', dir]);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(file), r.stderr);
    assert.match(r.stderr, /JSON/i);
    assert.equal(readFileSync(file, 'utf8'), '{"services": {"server": ');
  });
});

describe('unix socket lifecycle', () => {
  it('reclaims a stale socket left by a kill -9', async () => {
    const dir = tempDir();
    const first = await Tuicd.start({ configDir: dir });
    first.child.kill('SIGKILL');
    await first.exited;
    assert.ok(existsSync(first.socketPath), 'kill -9 leaves the socket file behind');
    const second = await Tuicd.start({ configDir: dir });
    try {
      assert.equal((await second.socket('GET', '/health')).status, 200);
      await second.waitForStderr(/stale socket/);
    } finally {
      await second.stop();
    }
  });

  it('never steals a live socket: a second tuicd exits non-zero and the first keeps serving', async () => {
    const dir = tempDir();
    const first = await Tuicd.start({ configDir: dir });
    try {
      const id = (await first.socket('GET', '/health')).json().instance_id;
      const second = await Tuicd.runToExit(['--config-dir', dir]);
      assert.notEqual(second.code, 0);
      assert.match(second.stderr, /already answering/);
      const again = await first.socket('GET', '/health');
      assert.equal(again.status, 200);
      assert.equal(again.json().instance_id, id, 'the same process still answers');
    } finally {
      await first.stop();
    }
  });

  it('npm-style start via the bin path works with TUIC_CONFIG_DIR', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [MAIN_JS], { env: { ...process.env, TUIC_CONFIG_DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const deadline = Date.now() + 15000;
    while (!out.includes('serving on') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    assert.match(out, new RegExp(`serving on unix socket ${join(dir, 'mcp.sock').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });
});
