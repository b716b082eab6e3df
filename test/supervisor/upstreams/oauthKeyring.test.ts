/**
 * OAuth tokens with a real Secret Service: tuicd runs inside scripts/withKeyring.sh (a private
 * D-Bus session and a throwaway gnome-keyring), authorizes an upstream against a real
 * authorization server (test/fixtures/upstreams/oauthUpstream.ts), and not one byte of any token
 * (access or refresh) or of the registration's client id is in any file under the config dir: the
 * vault only records that the secrets live in the keyring.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { STORE_ENV } from '../../../supervisor/secrets/credentialStore.js';
import { OAuthUpstream } from '../../fixtures/upstreams/oauthUpstream.js';
import { waitFor } from '../../helpers/poll.js';
import { httpRequest } from '../../helpers/tuicdProcess.js';
import { httpServer, writeUpstreams } from '../../helpers/upstreamServers.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SCRIPT = join(REPO_ROOT, 'scripts', 'withKeyring.sh');
const MAIN = join(REPO_ROOT, 'dist', 'supervisor', 'main.js');

function missingTools(): string | false {
  if (process.platform !== 'linux') return 'Linux only (Secret Service via gnome-keyring)';
  const found = spawnSync('sh', ['-c', 'command -v dbus-run-session && command -v dbus-send && command -v gnome-keyring-daemon'], { stdio: 'ignore' });
  return found.status === 0 ? false : 'needs dbus-run-session and gnome-keyring-daemon: apt-get install -y gnome-keyring dbus';
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...filesUnder(path));
    else if (st.isFile()) out.push(path);
  }
  return out;
}

describe('OAuth tokens in a real Secret Service', { skip: missingTools(), timeout: 120_000 }, () => {
  let up: OAuthUpstream;
  let root: string;
  let configDir: string;
  let child: ChildProcess;
  let stdout = '';
  let socketPath = '';
  const socket = (method: string, path: string, body?: unknown) =>
    httpRequest(
      { socketPath, method, path, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      body === undefined ? undefined : JSON.stringify(body),
    );
  const statusOf = async () => ((await socket('GET', '/mcp/upstream-status')).json().upstreams as Array<{ status: string }>)[0]!.status;

  before(async () => {
    up = await OAuthUpstream.start();
    root = mkdtempSync(join(tmpdir(), 'tuicd-oauth-keyring-'));
    configDir = join(root, 'config');
    const home = join(root, 'home');
    for (const d of [configDir, home]) spawnSync('mkdir', ['-p', d]);
    writeUpstreams(configDir, [httpServer('guarded', up.mcpUrl)]);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, HISTFILE: '/dev/null', TUIC_BIND_HOST: '127.0.0.1', TUIC_LOG_LEVEL: 'info' };
    delete env[STORE_ENV];
    delete env['DBUS_SESSION_BUS_ADDRESS'];
    // Its own process group: the bus, the keyring daemon and tuicd all go with one kill.
    child = spawn(SCRIPT, [process.execPath, MAIN, '--config-dir', configDir], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    await waitFor(() => /serving on unix socket (\S+)/.test(stdout), 'tuicd serving', 60_000);
    socketPath = /serving on unix socket (\S+)/.exec(stdout)![1]!;
  });
  after(async () => {
    if (child?.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('close', r)));
    }
    await up?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('authorizes, works, and leaves no token byte in any file under the config dir', async () => {
    const backend = async () => (await socket('GET', '/health')).json().credential_store.backend as string;
    await waitFor(async () => (await backend()) !== 'probing', 'the keyring probe', 20_000);
    assert.equal(await backend(), 'secret-service');
    await waitFor(async () => (await statusOf()) === 'needs_auth', 'needs_auth', 20_000);
    const started = await socket('POST', '/mcp/upstreams/oauth/start', { name: 'guarded' });
    assert.equal(started.status, 200, started.text);
    const res = await fetch(started.json().authorization_url, { redirect: 'manual' });
    const page = await fetch(res.headers.get('location')!);
    assert.equal(page.status, 200, await page.text());
    await waitFor(async () => (await statusOf()) === 'ready', 'ready', 20_000);
    const call = await socket('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'guarded__whoami', arguments: {} } });
    const clientId = JSON.parse(call.text).result.content[0].text as string;
    assert.ok(up.provider.clients.has(clientId), call.text);

    const secrets = [...up.provider.access.keys(), ...up.provider.refresh.keys(), clientId];
    const files = filesUnder(configDir);
    assert.ok(files.some((f) => f.endsWith('vault.json')));
    for (const file of files) {
      const text = readFileSync(file, 'latin1');
      for (const secret of secrets) assert.ok(!text.includes(secret), `${file} holds a secret`);
    }
    const index = JSON.parse(readFileSync(join(configDir, 'vault.json'), 'utf8'));
    assert.deepEqual(index.secrets, {}, 'nothing in the vault itself');
    assert.deepEqual(Object.keys(index.keyring).sort(), ['guarded', 'guarded/oauth-client']);
    for (const secret of secrets) assert.ok(!stdout.includes(secret), 'a secret in the log');
  });
});
