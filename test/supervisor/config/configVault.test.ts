/**
 * Config secrets (session token, relay token, VAPID private key) live in the credential store,
 * never in config.json: saves, migration of files older versions wrote, rollback, and a real tuicd.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ConfigStore } from '../../../supervisor/config/configStore.js';
import type { SecretVault } from '../../../supervisor/config/configVault.js';
import { CredentialStore } from '../../../supervisor/secrets/credentialStore.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const SECRETS = {
  services: { auth: { session_token: 'session-token-value-1' }, relay: { token: 'relay-token-value-1' }, push: { vapid_private_key: 'vapid-key-value-1' } },
};
const VALUES = ['session-token-value-1', 'relay-token-value-1', 'vapid-key-value-1'];

async function setup(t: { after(fn: () => void): void }, initial?: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-config-vault-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'config.json');
  if (initial !== undefined) writeFileSync(path, JSON.stringify(initial));
  const credentials = await CredentialStore.open({ configDir: dir, preferKeyring: false, env: {} });
  const store = new ConfigStore({ path });
  await store.load();
  return { dir, path, store, credentials };
}

const fileText = (path: string) => readFileSync(path, 'utf8');

test('a_commit_never_leaves_a_secret_in_the_file: saved secrets go to the store, the view keeps them', async (t) => {
  const { path, store, credentials } = await setup(t);
  await store.attachVault(credentials);
  await store.update(SECRETS);
  for (const v of VALUES) assert.ok(!fileText(path).includes(v), `${v} is not in config.json`);
  assert.equal(store.get().services.auth.session_token, 'session-token-value-1');
  assert.equal(await credentials.get('config/session_token'), 'session-token-value-1');
  assert.equal(await credentials.get('config/relay_token'), 'relay-token-value-1');
  assert.equal(await credentials.get('config/vapid_private_key'), 'vapid-key-value-1');
});

test('secrets a previous version left in config.json move to the store when it is attached', async (t) => {
  const { path, store, credentials } = await setup(t, SECRETS);
  assert.ok(fileText(path).includes('session-token-value-1'), 'precondition: legacy file');
  await store.attachVault(credentials);
  for (const v of VALUES) assert.ok(!fileText(path).includes(v));
  assert.equal(store.get().services.relay.token, 'relay-token-value-1');
  assert.equal(await credentials.get('config/vapid_private_key'), 'vapid-key-value-1');
});

test('an empty secret in a save keeps the stored one; an explicit clear removes it from the store', async (t) => {
  const { store, credentials } = await setup(t);
  await store.attachVault(credentials);
  await store.update(SECRETS);
  await store.update({ services: { auth: { session_token: '', session_token_duration_secs: 60 } } });
  assert.equal(store.get().services.auth.session_token, 'session-token-value-1', 'a redacted round trip wipes nothing');
  assert.equal(await credentials.get('config/session_token'), 'session-token-value-1');
  await store.update({ services: { auth: { session_token_exists: false } } });
  assert.equal(store.get().services.auth.session_token, '');
  assert.equal(await credentials.get('config/session_token'), null);
  assert.equal(await credentials.get('config/relay_token'), 'relay-token-value-1', 'the others stay');
});

test('a secret another process rotated in the store survives this process saving something else', async (t) => {
  const { path, store, credentials } = await setup(t);
  await store.attachVault(credentials);
  await store.update(SECRETS);
  const other = new ConfigStore({ path });
  await other.load();
  await other.attachVault(credentials);
  await other.update({ services: { auth: { session_token: 'rotated-by-the-other-process' } } });
  await store.update({ collapse_tools: true });
  assert.equal(await credentials.get('config/session_token'), 'rotated-by-the-other-process');
  assert.equal(store.get().services.auth.session_token, 'rotated-by-the-other-process');
});

test('failed_multi_secret_commit_restores_every_vault_value when the file write fails', async (t) => {
  const { path, store, credentials } = await setup(t);
  await store.attachVault(credentials);
  await store.update(SECRETS);
  // A vault that, once the secrets are written, turns config.json into a non-empty directory so the rename fails.
  let sabotage = false;
  const vault: SecretVault = {
    get: (n) => credentials.get(n),
    delete: (n) => credentials.delete(n),
    set: async (n, v) => {
      await credentials.set(n, v);
      if (sabotage && n === 'config/vapid_private_key') {
        sabotage = false;
        rmSync(path);
        mkdirSync(join(path, 'blocker'), { recursive: true });
      }
    },
  };
  const saboteur = new ConfigStore({ path });
  await saboteur.load();
  await saboteur.attachVault(vault);
  sabotage = true;
  // collapse_tools changes the file too (a secrets-only save leaves the file text as it was).
  await assert.rejects(
    saboteur.update({ collapse_tools: true, services: { auth: { session_token: 'new-1' }, relay: { token: 'new-2' }, push: { vapid_private_key: 'new-3' } } }),
  );
  assert.equal(await credentials.get('config/session_token'), 'session-token-value-1');
  assert.equal(await credentials.get('config/relay_token'), 'relay-token-value-1');
  assert.equal(await credentials.get('config/vapid_private_key'), 'vapid-key-value-1');
});

test('through a real tuicd: PUT /config puts the token in the store, GET /config shows only the flag, a restart still has it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-config-vault-e2e-'));
  let tuicd = await Tuicd.start({ configDir: dir });
  // Stopped first: a stopping tuicd still writes its log, which would bring the directory back.
  t.after(async () => {
    await tuicd.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const put = await tuicd.socket('PUT', '/config', JSON.stringify({ services: { auth: { session_token: 'e2e-session-token' } } }), {
    'Content-Type': 'application/json',
  });
  assert.equal(put.status, 200, put.text);
  assert.ok(!fileText(join(dir, 'config.json')).includes('e2e-session-token'));
  assert.ok(fileText(join(dir, 'vault.json')).includes('e2e-session-token'), 'the test runs with the file vault');
  await tuicd.stop();
  tuicd = await Tuicd.start({ configDir: dir });
  const got = (await tuicd.socket('GET', '/config')).json();
  assert.equal(got.services.auth.session_token_exists, true);
  assert.equal(got.services.auth.session_token, undefined);
});
