/**
 * The config's client schemas against the store itself: GET /config's schema accepts what the store
 * hands out (defaults, a full config, foreign keys, TLS on), and PUT /config's partial schema never
 * calls a body invalid that the store saves, while every body it calls invalid the store refuses.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { validatorOf } from '../../../shared/schemaCheck.js';
import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { ClientConfigSchema, ConfigPatchSchema } from '../../../supervisor/config/clientSchema.js';
import { ConfigStore } from '../../../supervisor/config/configStore.js';
import { redactForClient } from '../../../supervisor/config/secrets.js';
import { CertDir } from '../../helpers/tlsCert.js';

const certs = new CertDir();
let root: string;
let n = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'tuicd-client-schema-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
  certs.remove();
});

const ON_DISK = { my_extension: { a: 1 }, services: { server: { enabled: true } } };

async function freshStore(initial: unknown = ON_DISK): Promise<ConfigStore> {
  const dir = await mkdtemp(join(root, `t${n++}-`));
  const path = join(dir, 'config.json');
  await writeFile(path, JSON.stringify(initial));
  const store = new ConfigStore({ path });
  await store.load();
  return store;
}

const answerCheck = validatorOf(ClientConfigSchema);
const patchCheck = validatorOf(ConfigPatchSchema);

function assertAnswerValid(value: unknown, what: string): void {
  assert.ok(answerCheck.Check(value), `${what}: ${JSON.stringify(answerCheck.Errors(value))}`);
}

test('GET /config: the redacted config validates, secrets replaced by their flags', async () => {
  assertAnswerValid(redactForClient((await freshStore({})).get()), 'defaults');
  const store = await freshStore();
  const cert = certs.make('client-schema');
  await store.update({
    my_extension: { x: [1, 2] },
    shell: '/bin/zsh',
    services: {
      auth: { username: 'bob', password_hash: '$2b$04$abcdefghijklmnopqrstuuN0tARealHashButSecretValue1234', session_token: 'tok' },
      relay: { token: 'relay' },
      push: { vapid_private_key: 'k', vapid_public_key: 'p' },
      tls: { mode: 'manual', cert_path: cert.certPath, key_path: cert.keyPath },
    },
  });
  const answer = redactForClient(store.get());
  assertAnswerValid(answer, 'everything set');
  // The secret itself is not in the schema: an answer that carried one would not validate.
  const leaked = structuredClone(answer) as { services: { auth: Record<string, unknown> } };
  leaked.services.auth['password_hash'] = 'x';
  assert.equal(answerCheck.Check(leaked), true, 'extra keys are allowed (foreign keys come back)…');
  const flagless = structuredClone(answer) as { services: { auth: Record<string, unknown> } };
  delete flagless.services.auth['password_hash_exists'];
  assert.equal(answerCheck.Check(flagless), false, '…but every flag is required');
  const secretSchema = (ClientConfigSchema.properties['services'] as { properties: { auth: { properties: Record<string, unknown> } } }).properties.auth
    .properties;
  assert.equal(secretSchema['password_hash'], undefined, 'the schema does not describe the secret');
  assert.deepEqual(
    Object.keys(secretSchema).filter((k) => k.endsWith('_exists')),
    ['password_hash_exists', 'session_token_exists'],
  );
});

/** Bodies the store saves; the patch schema must accept each. */
const SAVED: unknown[] = [
  {},
  { collapse_tools: true },
  { services: { auth: { username: 'bob' } } },
  { disabled_native_tools: [], services: { server: { allowed_hosts: ['box.tailnet'] } } },
  { disabled_native_tools: null, shell: null, services: { auth: { username: null }, server: null } },
  { shell: '/bin/zsh', font_size: 13.5 },
  { my_extension: { b: 2 } },
  { services: { auth: { password_hash: '', session_token_exists: false } } },
  { services: { auth: { password_hash_exists: 'whatever' }, relay: { token_exists: 1 } } },
  { services: { push: { vapid_private_key: null } } },
  { services: { tls: { mode: 'off' } } },
  { services: { tls: null } },
  { services: { tls: { mode: 'off', cert_path: 'ignored' } } },
];

/** Bodies the patch schema calls invalid; the store must refuse each. */
const REFUSED_BY_SCHEMA: unknown[] = [
  [],
  'x',
  null,
  { collapse_tools: 'yes' },
  { mcp_port: 70000 },
  { mcp_port: 1.5 },
  { font_size: 0 },
  { shell: 5 },
  { disabled_native_tools: 'debug' },
  { disabled_native_tools: [1] },
  { disabled_native_tools: ['a', null] },
  { services: 5 },
  { services: [] },
  { services: { server: { port: -1 } } },
  { services: { server: { allowed_hosts: [''] } } },
  { services: { auth: 'bob' } },
  { services: { auth: { session_token_duration_secs: 0 } } },
  { services: { tls: 'manual' } },
  { services: { tls: { mode: 'acme' } } },
  { services: { tls: { mode: 'manual', cert_path: '' } } },
  { services: { relay: { enabled: 'no' } } },
];

async function saves(body: unknown): Promise<boolean> {
  const store = await freshStore();
  try {
    await store.update(body);
    return true;
  } catch (err) {
    if (err instanceof SupervisorError && err.code === ErrorCode.CONFIG_INVALID) return false;
    throw err;
  }
}

test('PUT /config: the partial schema accepts every body the store saves', async () => {
  for (const body of SAVED) {
    assert.equal(await saves(body), true, `the store saves ${JSON.stringify(body)}`);
    assert.ok(patchCheck.Check(body), `${JSON.stringify(body)}: ${JSON.stringify(patchCheck.Errors(body))}`);
  }
});

test('PUT /config: every body the partial schema calls invalid, the store refuses', async () => {
  for (const body of REFUSED_BY_SCHEMA) {
    assert.equal(patchCheck.Check(body), false, `the schema refuses ${JSON.stringify(body)}`);
    assert.equal(await saves(body), false, `the store refuses ${JSON.stringify(body)}`);
  }
});

test('PUT /config: what only the store refuses (said in the route description)', async () => {
  // An unknown key (not already on disk), and a TLS setting whose files do not load.
  for (const body of [{ prot: 1 }, { services: { tls: { mode: 'manual', cert_path: '/nope/c.pem', key_path: '/nope/k.pem' } } }]) {
    assert.ok(patchCheck.Check(body), JSON.stringify(body));
    assert.equal(await saves(body), false, JSON.stringify(body));
  }
});
