import assert from 'node:assert/strict';
import { access, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { SupervisorError } from '../../../shared/errors.js';
import { ConfigStore } from '../../../supervisor/config/configStore.js';

let root: string;
let n = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'tuicd-config-load-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh directory per test; returns the config.json path inside it. */
async function freshPath(contents?: string): Promise<string> {
  const dir = await mkdtemp(join(root, `t${n++}-`));
  const path = join(dir, 'config.json');
  if (contents !== undefined) await writeFile(path, contents);
  return path;
}

test('missing file loads the defaults and creates nothing', async () => {
  const dir = join(root, 'never-created');
  const store = new ConfigStore({ path: join(dir, 'config.json') });
  const config = await store.load();
  assert.equal(config.mcp_server_enabled, true);
  assert.equal(config.mcp_port, 3845);
  assert.equal(config.collapse_tools, false);
  assert.deepEqual(config.disabled_native_tools, ['config', 'debug']);
  assert.equal(config.progress_tracking, true);
  assert.equal(config.intent_tab_title, true);
  assert.equal(config.suggest_followups, true);
  assert.deepEqual(config.disabled_mcp_agents, []);
  assert.equal(config.ego_executable, '');
  assert.equal(config.ai_terminal_mcp_enabled, false);
  assert.equal(config.shell, null);
  assert.deepEqual(config.services.server, {
    enabled: false,
    port: 9876,
    ipv6_enabled: false,
    max_sessions: 500,
    request_timeout_ms: 301_000,
    max_body_bytes: 2 * 1024 * 1024,
    max_mcp_sessions: 10_000,
    allowed_hosts: [],
    allowed_origins: [],
  });
  assert.deepEqual(config.services.auth, {
    username: '',
    password_hash: '',
    session_token: '',
    session_token_duration_secs: 2_592_000,
    lan_auth_bypass: false,
    auth_rate_limit_max: 5,
    auth_rate_limit_window_secs: 300,
  });
  assert.deepEqual(config.services.tls, { mode: 'off' });
  assert.deepEqual(config.services.relay, { enabled: false, url: '', token: '', session_id: '' });
  assert.deepEqual(config.services.push, {
    enabled: false,
    vapid_private_key: '',
    vapid_public_key: '',
    vapid_subject: 'mailto:noreply@tuicommander.com',
  });
  await assert.rejects(access(dir), { code: 'ENOENT' });
  assert.equal(store.get(), config);
});

test('a file without mcp_server_enabled reads it as true (not the seed serde quirk)', async () => {
  const store = new ConfigStore({ path: await freshPath('{"mcp_port": 4000}') });
  const config = await store.load();
  assert.equal(config.mcp_server_enabled, true);
  assert.equal(config.mcp_port, 4000);
});

test('corrupt JSON throws CONFIG_CORRUPT naming the file and the parse error; bytes untouched', async () => {
  const bytes = '{"mcp_port": 3845,, oops';
  const path = await freshPath(bytes);
  let parseMessage = '';
  try {
    JSON.parse(bytes);
  } catch (err) {
    parseMessage = (err as Error).message;
  }
  const before = await stat(path);
  const store = new ConfigStore({ path });
  const err = await store.load().then(
    () => assert.fail('load must throw'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SupervisorError);
  assert.equal(err.code, 'CONFIG_CORRUPT');
  assert.ok(err.message.includes(path), err.message);
  assert.ok(parseMessage !== '' && err.message.includes(parseMessage), err.message);

  // A save must not "repair" it by overwriting it either.
  await assert.rejects(store.update({ mcp_port: 1 }), { code: 'CONFIG_CORRUPT' });
  assert.equal(await readFile(path, 'utf8'), bytes);
  const afterStat = await stat(path);
  assert.equal(afterStat.ino, before.ino);
  assert.equal(afterStat.mtimeMs, before.mtimeMs);
});

test('schema-invalid file throws CONFIG_INVALID naming the field and the file', async () => {
  const path = await freshPath(JSON.stringify({ services: { server: { port: 70000 } } }));
  await assert.rejects(new ConfigStore({ path }).load(), (err: unknown) => {
    assert.ok(err instanceof SupervisorError);
    assert.equal(err.code, 'CONFIG_INVALID');
    assert.match(err.message, /^Invalid config: services\.server\.port: /);
    assert.ok(err.message.includes(path));
    assert.equal((err.data as { field: string }).field, 'services.server.port');
    return true;
  });
  const typePath = await freshPath(JSON.stringify({ collapse_tools: 'yes' }));
  await assert.rejects(new ConfigStore({ path: typePath }).load(), /Invalid config: collapse_tools: must be boolean/);
  const notObject = await freshPath('[1,2]');
  await assert.rejects(new ConfigStore({ path: notObject }).load(), { code: 'CONFIG_INVALID' });
});

test('session_token_duration_secs 86400 is migrated to 30 days on load; other values are kept', async () => {
  const legacy = await freshPath(JSON.stringify({ services: { auth: { session_token_duration_secs: 86400 } } }));
  assert.equal((await new ConfigStore({ path: legacy }).load()).services.auth.session_token_duration_secs, 2_592_000);
  const custom = await freshPath(JSON.stringify({ services: { auth: { session_token_duration_secs: 3600 } } }));
  assert.equal((await new ConfigStore({ path: custom }).load()).services.auth.session_token_duration_secs, 3600);
  // Load never writes: the migration reaches disk only with the next save.
  assert.match(await readFile(legacy, 'utf8'), /86400/);
});

test('TLS parses leniently on load: an unknown mode reads as off, a valid manual block is kept', async () => {
  const odd = await freshPath(JSON.stringify({ services: { tls: { mode: 'acme', email: 'x@y' } } }));
  assert.deepEqual((await new ConfigStore({ path: odd }).load()).services.tls, { mode: 'off' });
  const manual = { mode: 'manual', cert_path: '/c.pem', key_path: '/k.pem' };
  const ok = await freshPath(JSON.stringify({ services: { tls: manual } }));
  assert.deepEqual((await new ConfigStore({ path: ok }).load()).services.tls, manual);
});

test('unknown keys are kept (top level and nested) and *_exists flags on disk are dropped', async () => {
  const path = await freshPath(
    JSON.stringify({
      hotkeys: { new_tab: 'Ctrl+T' },
      services: { server: { future_knob: 7 }, auth: { session_token_exists: true } },
    }),
  );
  const store = new ConfigStore({ path });
  const loaded = (await store.load()) as unknown as Record<string, any>;
  assert.deepEqual(loaded['hotkeys'], { new_tab: 'Ctrl+T' });
  assert.equal(loaded['services'].server.future_knob, 7);
  assert.equal('session_token_exists' in loaded['services'].auth, false);

  await store.update({ mcp_port: 4001 });
  const disk = JSON.parse(await readFile(path, 'utf8')) as Record<string, any>;
  assert.deepEqual(disk['hotkeys'], { new_tab: 'Ctrl+T' });
  assert.equal(disk['services'].server.future_knob, 7);
  assert.equal(disk['mcp_port'], 4001);
  assert.deepEqual(await readdir(join(path, '..')), ['config.json']);
});

test('get() before load() is a programming error', () => {
  assert.throws(() => new ConfigStore({ path: join(root, 'x', 'config.json') }).get(), /before load/);
});

test('the loaded config is deep-frozen', async () => {
  const config = await new ConfigStore({ path: await freshPath('{}') }).load();
  assert.throws(() => {
    (config.services.server as { port: number }).port = 1;
  }, TypeError);
  assert.throws(() => {
    (config.disabled_native_tools as string[]).push('x');
  }, TypeError);
});
