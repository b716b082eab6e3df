import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';

import { SupervisorError } from '../../../shared/errors.js';
import { ConfigStore, type ConfigChangeEvent } from '../../../supervisor/config/configStore.js';
import { CertDir } from '../../helpers/tlsCert.js';

let root: string;
let n = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'tuicd-config-update-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshStore(initial?: unknown): Promise<{ store: ConfigStore; path: string }> {
  const dir = await mkdtemp(join(root, `t${n++}-`));
  const path = join(dir, 'config.json');
  if (initial !== undefined) await writeFile(path, JSON.stringify(initial));
  const store = new ConfigStore({ path });
  await store.load();
  return { store, path };
}

async function readDisk(path: string): Promise<any> {
  return JSON.parse(await readFile(path, 'utf8'));
}

test('a partial save keeps untouched fields (an auth save must not turn remote access off)', async () => {
  const { store, path } = await freshStore({ services: { server: { enabled: true, port: 7000 } }, collapse_tools: true });
  await store.update({ services: { auth: { username: 'x' } } });
  const disk = await readDisk(path);
  assert.equal(disk.services.server.enabled, true);
  assert.equal(disk.services.server.port, 7000);
  assert.equal(disk.collapse_tools, true);
  assert.equal(disk.services.auth.username, 'x');
  const reloaded = await new ConfigStore({ path }).load();
  assert.equal(reloaded.services.server.enabled, true);
  assert.equal(reloaded.services.auth.username, 'x');
});

test('arrays replace wholesale and [] clears a list', async () => {
  const { store, path } = await freshStore({ disabled_native_tools: ['config', 'debug', 'repo'] });
  const { config } = await store.update({ disabled_native_tools: ['ui'] });
  assert.deepEqual(config.disabled_native_tools, ['ui']);
  await store.update({ disabled_native_tools: [] });
  assert.deepEqual((await readDisk(path)).disabled_native_tools, []);
});

test('null clears: a field returns to its default, a nullable field to null, a foreign key disappears', async () => {
  const { store, path } = await freshStore({ mcp_port: 1234, shell: '/bin/zsh', legacy_thing: 1, services: { server: { port: 1 } } });
  const { config } = await store.update({ mcp_port: null, shell: null, legacy_thing: null, services: { server: { port: null } } });
  assert.equal(config.mcp_port, 3845);
  assert.equal(config.shell, null);
  assert.equal(config.services.server.port, 9876);
  const disk = await readDisk(path);
  assert.equal('legacy_thing' in disk, false);
  assert.equal(disk.mcp_port, 3845);
});

test('a type mismatch throws CONFIG_INVALID naming the field; the file and memory stay unchanged', async () => {
  const { store, path } = await freshStore({ services: { server: { enabled: true } } });
  const bytes = await readFile(path, 'utf8');
  const before = store.get();
  const cases: [unknown, RegExp][] = [
    [{ services: { server: { port: 'abc' } } }, /^Invalid config: services\.server\.port: must be integer$/],
    [{ services: { server: { port: 65536 } } }, /^Invalid config: services\.server\.port: must be <= 65535$/],
    [{ services: { auth: 'nope' } }, /^Invalid config: services\.auth: must be object$/],
    [{ shell: 42 }, /^Invalid config: shell: must be string or null$/],
    [{ disabled_native_tools: 'config' }, /^Invalid config: disabled_native_tools: must be array$/],
    [{ services: { server: { prot: 1 } } }, /^Invalid config: services\.server\.prot: unknown field$/],
    [{ brand_new_top_level: 1 }, /^Invalid config: brand_new_top_level: unknown field$/],
    [{ services: { tls: { mode: 'manual', cert_path: '/c' } } }, /^Invalid config: services\.tls\.key_path: is required$/],
    [{ services: { tls: { mode: 'acme' } } }, /^Invalid config: services\.tls\.mode: must be "off" or "manual"$/],
    [[1, 2], /^Invalid config: \(root\): must be a JSON object$/],
  ];
  for (const [partial, message] of cases) {
    await assert.rejects(store.update(partial), (err: unknown) => {
      assert.ok(err instanceof SupervisorError, String(err));
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, message);
      return true;
    });
  }
  assert.equal(await readFile(path, 'utf8'), bytes);
  assert.equal(store.get(), before);
  assert.deepEqual(await readdir(dirname(path)), ['config.json']);
});

test('a TLS block whose files do not load is refused, naming the field and the file; nothing is written', async () => {
  const { store, path } = await freshStore({ services: { server: { enabled: true } } });
  const certs = new CertDir();
  try {
    const pair = certs.make('a');
    const other = certs.make('b');
    const bytes = await readFile(path, 'utf8');
    const missing = join(certs.dir, 'absent.pem');
    const cases: [object, RegExp][] = [
      [{ cert_path: pair.certPath, key_path: missing }, /^Invalid config: services\.tls\.key_path: TLS key file .*absent\.pem .*not found$/],
      [{ cert_path: missing, key_path: pair.keyPath }, /^Invalid config: services\.tls\.cert_path: TLS certificate file .*absent\.pem .*not found$/],
      [{ cert_path: pair.certPath, key_path: other.keyPath }, /^Invalid config: services\.tls\.key_path: .*does not match the certificate/],
      [{ cert_path: pair.keyPath, key_path: pair.keyPath }, /^Invalid config: services\.tls\.cert_path: .*not a PEM certificate/],
    ];
    for (const [files, message] of cases) {
      await assert.rejects(store.update({ services: { tls: { mode: 'manual', ...files } } }), (err: unknown) => {
        assert.ok(err instanceof SupervisorError, String(err));
        assert.equal(err.code, 'CONFIG_INVALID');
        assert.match(err.message, message);
        return true;
      });
    }
    assert.equal(await readFile(path, 'utf8'), bytes);
    assert.deepEqual(store.get().services.tls, { mode: 'off' });
  } finally {
    certs.remove();
  }
});

test('a foreign key already on disk may round-trip in a save', async () => {
  const { store, path } = await freshStore({ hotkeys: { a: 1 } });
  await store.update({ hotkeys: { a: 2, b: 3 } });
  assert.deepEqual((await readDisk(path)).hotkeys, { a: 2, b: 3 });
});

test('a valid manual TLS block saves; ports 0 and 65535 are accepted', async () => {
  const { store } = await freshStore();
  const certs = new CertDir();
  try {
    const pair = certs.make();
    const tls = { mode: 'manual', cert_path: pair.certPath, key_path: pair.keyPath };
    assert.deepEqual((await store.update({ services: { tls } })).config.services.tls, tls);
  } finally {
    certs.remove();
  }
  assert.equal((await store.update({ services: { server: { port: 0 } } })).config.services.server.port, 0);
  assert.equal((await store.update({ services: { server: { port: 65535 } } })).config.services.server.port, 65535);
});

test('changed flags: server settings, tools, neither', async () => {
  const { store } = await freshStore();
  let r = await store.update({ services: { server: { port: 9000 } } });
  assert.deepEqual(r.changed, { serverSettings: true, tools: false, paths: ['services.server.port'] });
  r = await store.update({ services: { auth: { password_hash: '$2b$12$abc' } } });
  assert.equal(r.changed.serverSettings, true);
  r = await store.update({ disabled_native_tools: ['debug'] });
  assert.deepEqual(r.changed, { serverSettings: false, tools: true, paths: ['disabled_native_tools'] });
  r = await store.update({ collapse_tools: true });
  assert.equal(r.changed.tools, true);
  r = await store.update({ font_size: 16, services: { server: { max_sessions: 10 } } });
  assert.deepEqual(r.changed, { serverSettings: false, tools: false, paths: ['font_size', 'services.server.max_sessions'] });
  r = await store.update({ font_size: 16 });
  assert.deepEqual(r.changed, { serverSettings: false, tools: false, paths: [] });
});

test('onChange fires after a real change only, and stops after dispose', async () => {
  const { store } = await freshStore();
  const events: ConfigChangeEvent[] = [];
  const sub = store.onChange((e) => events.push(e));
  await store.update({ mcp_port: 5000 });
  await store.update({ mcp_port: 5000 });
  assert.equal(events.length, 1);
  assert.equal(events[0]?.previous.mcp_port, 3845);
  assert.equal(events[0]?.config.mcp_port, 5000);
  sub.dispose();
  await store.update({ mcp_port: 5001 });
  assert.equal(events.length, 1);
});

test('a throwing listener neither fails the save nor starves the next listener', async () => {
  const { store, path } = await freshStore();
  let seen = 0;
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  store.onChange(() => {
    throw new Error('boom');
  });
  store.onChange(() => seen++);
  await store.update({ mcp_port: 6000 });
  await new Promise((r) => setImmediate(r));
  process.off('warning', onWarning);
  assert.equal(seen, 1);
  assert.equal((await readDisk(path)).mcp_port, 6000);
  assert.ok(warnings.some((m) => m.includes('boom')));
});

test('an unchanged save does not rewrite the file', async () => {
  const { store, path } = await freshStore();
  await store.update({ mcp_port: 5000 });
  const first = await stat(path);
  await store.update({ mcp_port: 5000 });
  assert.equal((await stat(path)).ino, first.ino);
});

test('config.json is written with mode 0600, its new directory with 0700', { skip: process.platform === 'win32' }, async () => {
  const dir = join(root, `mode-${n++}`, 'nested');
  const path = join(dir, 'config.json');
  const store = new ConfigStore({ path });
  await store.load();
  await store.update({ services: { auth: { password_hash: '$2b$12$x' } } });
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(dir)).mode & 0o777, 0o700);
  // An existing world-readable file is replaced by a 0600 one on the next save.
  await writeFile(path, '{}', { mode: 0o644 });
  await store.update({ mcp_port: 1 });
  assert.equal((await stat(path)).mode & 0o777, 0o600);
});

test('many saves leave no temp files and no lock behind', async () => {
  const { store, path } = await freshStore();
  for (let i = 0; i < 30; i++) await store.update({ mcp_port: 1000 + i });
  assert.deepEqual(await readdir(dirname(path)), ['config.json']);
  assert.equal((await readDisk(path)).mcp_port, 1029);
});

test('concurrent saves from two stores in one process compose', async () => {
  const seed: Record<string, boolean> = {};
  for (let i = 0; i < 20; i++) {
    seed[`x${i}`] = false;
    seed[`y${i}`] = false;
  }
  const { store: a, path } = await freshStore(seed);
  const b = new ConfigStore({ path });
  await b.load();
  await Promise.all(Array.from({ length: 20 }, (_, i) => [a.update({ [`x${i}`]: true }), b.update({ [`y${i}`]: true })]).flat());
  const disk = await readDisk(path);
  assert.deepEqual(
    Object.keys(seed).filter((k) => disk[k] !== true),
    [],
  );
});

test('secrets: empty keeps, a value replaces, null or *_exists:false clears, flags never reach disk', async () => {
  const { store, path } = await freshStore({
    services: {
      auth: { password_hash: 'HASH', session_token: 'TOKEN' },
      relay: { token: 'RELAY' },
      push: { vapid_private_key: 'VAPID' },
    },
  });
  let { config } = await store.update({
    services: {
      auth: { password_hash: '', session_token: '', session_token_exists: true, password_hash_exists: true },
      relay: { token: '', token_exists: true },
      push: { vapid_private_key: '', vapid_private_key_exists: true },
    },
  });
  assert.equal(config.services.auth.password_hash, 'HASH');
  assert.equal(config.services.auth.session_token, 'TOKEN');
  assert.equal(config.services.relay.token, 'RELAY');
  assert.equal(config.services.push.vapid_private_key, 'VAPID');
  assert.doesNotMatch(await readFile(path, 'utf8'), /_exists/);

  ({ config } = await store.update({ services: { auth: { session_token: 'NEW' }, relay: { token_exists: false } } }));
  assert.equal(config.services.auth.session_token, 'NEW');
  assert.equal(config.services.relay.token, '');
  ({ config } = await store.update({ services: { push: { vapid_private_key: null } } }));
  assert.equal(config.services.push.vapid_private_key, '');
  assert.equal(config.services.auth.password_hash, 'HASH');
});
