// The real Secret Service: a child runs fixtures/secretServiceChild.js inside scripts/withKeyring.sh
// (private D-Bus session + throwaway gnome-keyring), so the rest of the suite needs no D-Bus.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

import { STORE_ENV } from '../../../supervisor/secrets/credentialStore.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SCRIPT = join(REPO_ROOT, 'scripts', 'withKeyring.sh');
const CHILD = fileURLToPath(new URL('./fixtures/secretServiceChild.js', import.meta.url));
const APT_PACKAGES = 'gnome-keyring dbus';
/** Bus + keyring start, a few node start-ups (loaded CI box) and a dozen D-Bus round trips. */
const CHILD_TIMEOUT_MS = 60_000;
const KILL_GRACE_MS = 3_000;

function missingTools(): string | false {
  if (process.platform !== 'linux') return 'Linux only (Secret Service via gnome-keyring)';
  const found = spawnSync('sh', ['-c', 'command -v dbus-run-session && command -v dbus-send && command -v gnome-keyring-daemon'], { stdio: 'ignore' });
  return found.status === 0 ? false : `needs dbus-run-session and gnome-keyring-daemon: apt-get install -y ${APT_PACKAGES}`;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs the child in its own process group, and kills the whole group (bus, keyring) if it hangs. */
function runInKeyring(args: string[]): Promise<Run> {
  const env = { ...process.env };
  delete env[STORE_ENV];
  delete env['DBUS_SESSION_BUS_ADDRESS'];
  const child = spawn(SCRIPT, [process.execPath, CHILD, ...args], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // ESRCH: the whole group already exited.
    }
  };
  let killTimer: NodeJS.Timeout | undefined;
  // SIGTERM first so withKeyring.sh stops the daemon and removes its temp dir; SIGKILL if that hangs too.
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup('SIGTERM');
    killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
  }, CHILD_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stdout, stderr: `cannot run ${SCRIPT}: ${err.message}`, timedOut: false });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name));
}

describe('CredentialStore on a real Secret Service', () => {
  const skip = missingTools();
  it('probes, stores in the keyring, and keeps the secret out of every file', { skip, timeout: CHILD_TIMEOUT_MS + KILL_GRACE_MS + 5_000 }, async () => {
    const root = await mkdtemp(join(tmpdir(), 'tuicd-secret-service-'));
    try {
      const configDir = join(root, 'config');
      const secret = `tuicd-test-${randomBytes(12).toString('hex')}`;
      const run = await runInKeyring([configDir, secret]);
      assert.equal(run.timedOut, false, `the keyring child hung:\n${run.stderr}`);
      assert.equal(run.code, 0, `keyring child failed (${run.signal ?? run.code}):\n${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /^OK$/m);
      const files = await filesUnder(configDir);
      assert.ok(
        files.some((f) => f.endsWith('vault.json')),
        'the vault index exists',
      );
      for (const file of files) {
        assert.ok(!(await readFile(file, 'utf8')).includes(secret), `${file} holds the secret`);
      }
      const index = JSON.parse(await readFile(join(configDir, 'vault.json'), 'utf8'));
      assert.deepEqual(index.keyring, { session_token: 'secret-service' });
      assert.deepEqual(index.secrets, {});
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
