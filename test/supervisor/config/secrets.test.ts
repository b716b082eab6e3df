import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { ConfigStore } from '../../../supervisor/config/configStore.js';
import { normalizeConfig } from '../../../supervisor/config/normalize.js';
import { redactForClient } from '../../../supervisor/config/secrets.js';

const SECRETS = {
  password_hash: '$2b$12$SECRETHASHVALUEaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  session_token: 'session-SECRET-0123456789',
  relay_token: 'relay-SECRET-abcdef',
  vapid_private_key: 'vapid-SECRET-zyxwvu',
};

function configWithSecrets() {
  return normalizeConfig(
    {
      extra_top_level: { keep: true },
      services: {
        auth: { username: 'me', password_hash: SECRETS.password_hash, session_token: SECRETS.session_token },
        relay: { enabled: true, token: SECRETS.relay_token },
        push: { vapid_private_key: SECRETS.vapid_private_key, vapid_public_key: 'PUBLIC' },
      },
    },
    { strictTls: false },
  );
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tuicd-config-secrets-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('redactForClient: no secret value appears anywhere in the serialized output', () => {
  const config = configWithSecrets();
  const serialized = JSON.stringify(redactForClient(config));
  for (const value of Object.values(SECRETS)) {
    assert.equal(serialized.includes(value), false, `leaked ${value}`);
  }
  // The control: the unredacted config does contain them, so the search above can fail.
  const raw = JSON.stringify(config);
  for (const value of Object.values(SECRETS)) assert.ok(raw.includes(value));
});

test('redactForClient: removes the four keys and exposes *_exists flags; other fields stay', () => {
  const client = redactForClient(configWithSecrets()) as any;
  assert.deepEqual(
    Object.keys(client.services.auth).filter((k) => k.includes('password') || k.includes('token')),
    ['session_token_duration_secs', 'password_hash_exists', 'session_token_exists'],
  );
  assert.equal(client.services.auth.password_hash_exists, true);
  assert.equal(client.services.auth.session_token_exists, true);
  assert.equal('token' in client.services.relay, false);
  assert.equal(client.services.relay.token_exists, true);
  assert.equal('vapid_private_key' in client.services.push, false);
  assert.equal(client.services.push.vapid_private_key_exists, true);
  assert.equal(client.services.push.vapid_public_key, 'PUBLIC');
  assert.equal(client.services.auth.username, 'me');
  assert.deepEqual(client.extra_top_level, { keep: true });
});

test('redactForClient: empty secrets give false flags, and the input is not mutated', () => {
  const config = normalizeConfig({}, { strictTls: false });
  const before = JSON.stringify(config);
  const client = redactForClient(config) as any;
  assert.equal(client.services.auth.password_hash_exists, false);
  assert.equal(client.services.auth.session_token_exists, false);
  assert.equal(client.services.relay.token_exists, false);
  assert.equal(client.services.push.vapid_private_key_exists, false);
  assert.equal(JSON.stringify(config), before);
});

test('GET then PUT of the redacted config keeps every secret and changes nothing', async () => {
  const path = join(dir, 'config.json');
  await writeFile(path, JSON.stringify(configWithSecrets()));
  const store = new ConfigStore({ path });
  const loaded = await store.load();
  const { config, changed } = await store.update(redactForClient(loaded));
  assert.deepEqual(changed.paths, []);
  assert.equal(config.services.auth.password_hash, SECRETS.password_hash);
  assert.equal(config.services.auth.session_token, SECRETS.session_token);
  assert.equal(config.services.relay.token, SECRETS.relay_token);
  assert.equal(config.services.push.vapid_private_key, SECRETS.vapid_private_key);
});
