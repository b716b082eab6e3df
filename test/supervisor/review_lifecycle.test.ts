// Review of the supervisor's life: a TCP port in use at start, a signal during start, two starters
// racing for one stale socket. Real tuicd processes and real signals, except the race, which is
// driven through the listener module so its interleaving is the same every run.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { bindUnix, closeUnix } from '../../supervisor/http/listeners.js';
import { testEngine } from '../helpers/httpEngine.js';
import { holdThreePorts } from '../helpers/ports.js';
import { MAIN_JS, Tuicd, httpRequest } from '../helpers/tuicdProcess.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tuicd-rlife-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A unix socket file nobody listens on: what a SIGKILLed server leaves. */
async function staleSocket(path: string): Promise<void> {
  // A listener SIGKILLed in its own process: the file stays, nobody answers on it.
  const child = spawn(
    process.execPath,
    ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`],
    { stdio: 'ignore' },
  );
  await new Promise((resolve) => child.once('exit', resolve));
  assert.ok(existsSync(path), 'stale socket fixture bound');
}

describe('supervisor lifecycle (review)', () => {
  it('keeps serving on the socket when the TCP port is in use at start, and says why TCP is off', async () => {
    const ports = await holdThreePorts();
    let t: Tuicd | undefined;
    try {
      t = await Tuicd.start({ config: { services: { server: { enabled: true, port: ports.base } } } });
      assert.equal(t.tcpPort, null, 'no TCP address in the start line');
      const health = await t.socket('GET', '/health');
      assert.equal(health.status, 200);
      assert.equal(health.json().listeners.tcp, null);
      // stdout and stderr are separate pipes: the start line can be read before the warning.
      await t.waitForStderr(new RegExp(`tuicd: TCP listener not started \\(.*${ports.base}`));
      assert.doesNotMatch(t.stderr, /MaxListenersExceededWarning/, 'each failed bind attempt removes its listeners');
    } finally {
      await ports.close();
      await t?.stop();
    }
  });

  it('a SIGTERM during start still ends with the socket file removed and exit 0', async () => {
    const dir = tempDir();
    const sock = join(dir, 'mcp.sock');
    // The keyring probe (a child process, ~0.5 s with no D-Bus) runs after the socket binds: the signal lands in start.
    const child = spawn(process.execPath, [MAIN_JS, '--config-dir', dir], {
      env: { ...process.env, TUIC_CREDENTIAL_STORE: '', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/tuicd-test-bus', TUIC_BIND_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    const deadline = Date.now() + 15_000;
    while (!existsSync(sock) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    assert.ok(existsSync(sock), 'socket bound');
    const signalledBeforeStartLine = !out.includes('serving on');
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const result = await exited;
    clearTimeout(killer);
    assert.ok(signalledBeforeStartLine, 'the signal arrived before the start line (else this test proves nothing)');
    assert.deepEqual(result, { code: 0, signal: null });
    assert.equal(existsSync(sock), false, 'no socket file left behind');
  });

  it('logs the pty host\'s pid under its own key, not a second "pid" that hides tuicd\'s', async () => {
    const t = await Tuicd.start();
    try {
      const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: t.configDir, shell: '/bin/sh' }));
      assert.equal(created.status, 201, created.text);
      const rows = (await t.socket('GET', '/process/stats')).json() as Array<{ kind: string; pid: number }>;
      const hostPid = rows.find((r) => r.kind === 'pty-host')!.pid;
      await t.waitForStderr(/pty host started/);
      const line = t.stderr.split('\n').find((l) => l.includes('pty host started'))!;
      assert.equal((line.match(/"pid":/g) ?? []).length, 1, line);
      const record = JSON.parse(line) as { pid: number; host_pid: number };
      assert.equal(record.pid, t.child.pid);
      assert.equal(record.host_pid, hostPid);
    } finally {
      await t.stop();
    }
  });

  it('two starters racing for one stale socket: one binds, the other refuses; the winner keeps its socket', async () => {
    const dir = tempDir();
    const path = join(dir, 'mcp.sock');
    await staleSocket(path);
    const apps = [testEngine().createApp(), testEngine().createApp()];
    for (const app of apps)
      app.any((res) => {
        res.end('ok');
      });
    const results = await Promise.allSettled(apps.map((app) => bindUnix(app, path)));
    const bound = results.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof bindUnix>>> => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    try {
      assert.equal(bound.length, 1, 'exactly one starter owns the socket');
      assert.equal(refused.length, 1);
      assert.match(String(refused[0]!.reason), /already answering/);
      const answer = await httpRequest({ socketPath: path, method: 'GET', path: '/' });
      assert.equal(answer.text, 'ok');
    } finally {
      for (const b of bound) closeUnix(b.value);
    }
    assert.equal(existsSync(path), false);
  });
});
