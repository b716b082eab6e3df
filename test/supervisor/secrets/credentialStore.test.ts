import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { CredentialStore, STORE_ENV, VAULT_FILE_NAME } from '../../../supervisor/secrets/credentialStore.js';

/** The file backend without probing: these tests must not depend on a D-Bus session. */
const FILE_ENV: NodeJS.ProcessEnv = { ...process.env, [STORE_ENV]: 'file' };

let configDir: string;

beforeEach(async () => {
  configDir = join(await mkdtemp(join(tmpdir(), 'tuicd-creds-')), 'config');
});
afterEach(async () => {
  await rm(join(configDir, '..'), { recursive: true, force: true });
});

function openFile(): Promise<CredentialStore> {
  return CredentialStore.open({ configDir, env: FILE_ENV });
}

function isCode(code: string) {
  return (err: unknown): boolean => err instanceof SupervisorError && err.code === code;
}

async function vaultJson(): Promise<{ secrets: Record<string, string>; keyring: Record<string, string>; stale: Record<string, string> }> {
  return JSON.parse(await readFile(join(configDir, VAULT_FILE_NAME), 'utf8'));
}

describe('CredentialStore, file backend', () => {
  it('says it is the file backend and why', async () => {
    const store = await openFile();
    assert.equal(store.backend, 'file');
    assert.match(store.reason ?? '', /TUIC_CREDENTIAL_STORE=file/);
    assert.deepEqual(store.status(), { backend: 'file', reason: store.reason });
    assert.equal(store.vaultPath, join(configDir, VAULT_FILE_NAME));
  });

  it('set / get / has / delete round trip', async () => {
    const store = await openFile();
    assert.equal(await store.get('session_token'), null);
    assert.equal(await store.has('session_token'), false);
    await store.set('session_token', 's3cret');
    assert.equal(await store.get('session_token'), 's3cret');
    assert.equal(await store.has('session_token'), true);
    await store.set('session_token', 'rotated');
    assert.equal(await store.get('session_token'), 'rotated');
    assert.equal(await store.delete('session_token'), true);
    assert.equal(await store.delete('session_token'), false);
    assert.equal(await store.get('session_token'), null);
  });

  it('persists across instances (a restart)', async () => {
    const first = await openFile();
    await first.set('relay_token', 'r1');
    await first.set('vapid_private_key', 'v1');
    await first.set('github/header/0b6c1c5e-0c1a-4d4e-9a55-5b7d3f1f2e10', 'h1');
    const second = await openFile();
    assert.equal(await second.get('relay_token'), 'r1');
    assert.equal(await second.get('vapid_private_key'), 'v1');
    assert.equal(await second.get('github/header/0b6c1c5e-0c1a-4d4e-9a55-5b7d3f1f2e10'), 'h1');
  });

  it('keeps the vault owner-only (0600 file, 0700 dir) with no temp leftovers', { skip: process.platform === 'win32' }, async () => {
    const store = await openFile();
    await Promise.all(['a', 'b', 'c', 'd'].map((n, i) => store.set(n, `value-${i}`)));
    assert.equal((await stat(configDir)).mode & 0o777, 0o700);
    assert.equal((await stat(store.vaultPath)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(configDir), [VAULT_FILE_NAME]);
  });

  it('names with prototype keys are plain names, not inherited properties', async () => {
    const store = await openFile();
    assert.equal(await store.get('toString'), null);
    assert.equal(await store.has('constructor'), false);
    await store.set('constructor', 'c');
    assert.equal(await (await openFile()).get('constructor'), 'c');
  });

  it('rejects bad names and empty values', async () => {
    const store = await openFile();
    for (const name of ['', '__proto__', 'a\nb', 'x'.repeat(257)]) {
      await assert.rejects(store.get(name), TypeError, JSON.stringify(name));
    }
    await assert.rejects(store.set('session_token', ''), /delete\(\) to clear/);
  });

  it('fails to open on a corrupt vault with VAULT_CORRUPT naming the file, leaving it as it was', async () => {
    await (await openFile()).set('session_token', 'x');
    const path = join(configDir, VAULT_FILE_NAME);
    await writeFile(path, 'not json at all');
    await assert.rejects(openFile(), (err: unknown) => isCode(ErrorCode.VAULT_CORRUPT)(err) && (err as Error).message.includes(path));
    assert.equal(await readFile(path, 'utf8'), 'not json at all');
  });

  it('a vault corrupted after open fails reads and writes with VAULT_CORRUPT', async () => {
    const store = await openFile();
    await writeFile(store.vaultPath, '{"version":1,"secrets":{"a":7}}');
    await assert.rejects(store.get('a'), isCode(ErrorCode.VAULT_CORRUPT));
    await assert.rejects(store.set('a', 'b'), isCode(ErrorCode.VAULT_CORRUPT));
    assert.equal(await readFile(store.vaultPath, 'utf8'), '{"version":1,"secrets":{"a":7}}');
  });

  it('refuses an unknown TUIC_CREDENTIAL_STORE value with CONFIG_INVALID naming the variable', async () => {
    await assert.rejects(
      CredentialStore.open({ configDir, env: { ...process.env, [STORE_ENV]: 'vault' } }),
      (err: unknown) => isCode(ErrorCode.CONFIG_INVALID)(err) && (err as Error).message.includes(STORE_ENV),
    );
  });

  it('preferKeyring: false uses the file without probing and says so', async () => {
    const env = { ...process.env };
    delete env[STORE_ENV];
    const started = Date.now();
    const store = await CredentialStore.open({ configDir, env, preferKeyring: false });
    assert.equal(store.backend, 'file');
    assert.match(store.reason ?? '', /disabled by configuration/);
    assert.ok(Date.now() - started < 1_000, 'no probe child was started');
  });
});

describe('CredentialStore, secrets recorded in a keyring that is not in use', () => {
  async function recordInKeyring(records: Record<string, string>): Promise<void> {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    const doc = { version: 1, secrets: { relay_token: 'in-file' }, keyring: records, stale: {} };
    await writeFile(join(configDir, VAULT_FILE_NAME), JSON.stringify(doc), { mode: 0o600 });
  }

  it('get is a KEYRING_UNAVAILABLE error, never null; has stays true (keeps *_exists)', async () => {
    await recordInKeyring({ session_token: 'secret-service', vapid_private_key: 'macos-keychain' });
    const store = await openFile();
    await assert.rejects(store.get('session_token'), (err: unknown) => {
      assert.ok(isCode(ErrorCode.KEYRING_UNAVAILABLE)(err));
      assert.deepEqual((err as SupervisorError).data, { backend: 'secret-service', name: 'session_token' });
      assert.match((err as Error).message, /Secret Service/);
      return true;
    });
    await assert.rejects(store.get('vapid_private_key'), isCode(ErrorCode.KEYRING_UNAVAILABLE));
    assert.equal(await store.has('session_token'), true);
    assert.equal(await store.get('relay_token'), 'in-file');
  });

  it('set moves the secret into the file and marks the keyring copy stale', async () => {
    await recordInKeyring({ session_token: 'secret-service' });
    const store = await openFile();
    await store.set('session_token', 'new-value');
    assert.equal(await store.get('session_token'), 'new-value');
    const doc = await vaultJson();
    assert.deepEqual(doc.keyring, {});
    assert.deepEqual(doc.stale, { session_token: 'secret-service' });
    assert.equal(doc.secrets['session_token'], 'new-value');
  });

  it('delete forgets it now (true) and marks the keyring copy for erasure', async () => {
    await recordInKeyring({ session_token: 'secret-service' });
    const store = await openFile();
    assert.equal(await store.delete('session_token'), true);
    assert.equal(await store.has('session_token'), false);
    assert.equal(await store.get('session_token'), null);
    assert.deepEqual((await vaultJson()).stale, { session_token: 'secret-service' });
  });
});
