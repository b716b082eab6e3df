// mcp-upstreams.json persistence: load, the locked three-way save, refusals that write nothing,
// tokens moved to the credential store, and plans that reach the hub in disk order.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ApiError } from '../../../shared/apiError.js';
import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { CredentialStore, STORE_ENV } from '../../../supervisor/secrets/credentialStore.js';
import type { UpstreamDiffPlan } from '../../../supervisor/upstreams/configDiff.js';
import { UpstreamApplyError, UpstreamIdConflictError, UpstreamStore } from '../../../supervisor/upstreams/upstreamStore.js';

const OWN_PORT = 9876;
const ctx = { ownPort: OWN_PORT };

const http = (id: string, extra: object = {}) => ({ id, name: id, transport: { type: 'http', url: `https://${id}.example/mcp` }, ...extra });
const ids = (config: { servers: Array<{ id: string }> }) => config.servers.map((s) => s.id);

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-upstreams-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function fileCredentials(configDir: string): Promise<CredentialStore> {
  return CredentialStore.open({ configDir, env: { ...process.env, [STORE_ENV]: 'file' } });
}

/** A store with no credential store: enough for every test that carries no token. */
function storeIn(configDir: string): UpstreamStore {
  return new UpstreamStore({ configDir, credentials: () => null });
}

const fileOf = (dir: string) => join(dir, 'mcp-upstreams.json');
const onDisk = (dir: string) => JSON.parse(readFileSync(fileOf(dir), 'utf8'));

test('a missing file loads as no servers and is not created', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  assert.deepEqual(await store.load(), { servers: [] });
  assert.deepEqual(store.get(), { servers: [] });
  assert.equal(existsSync(fileOf(dir)), false);
});

test('a save round-trips with defaults applied, and the legacy o_auth2 tag is written as oauth2', async (t) => {
  const dir = tempDir(t);
  writeFileSync(
    fileOf(dir),
    JSON.stringify({ servers: [{ id: 'o', name: 'o', transport: { type: 'http', url: 'https://o.example' }, auth: { type: 'o_auth2', client_id: 'cid' } }] }),
  );
  const store = storeIn(dir);
  const loaded = await store.load();
  assert.deepEqual(loaded.servers[0], {
    id: 'o',
    name: 'o',
    transport: { type: 'http', url: 'https://o.example' },
    enabled: true,
    timeout_secs: 30,
    auth: { type: 'oauth2', client_id: 'cid', scopes: [] },
  });
  const stdio = { id: 's', name: 's', transport: { type: 'stdio', command: 'node' } };
  const { after } = await store.save(loaded, { servers: [...loaded.servers, stdio] }, ctx);
  assert.deepEqual(after.servers[1], { id: 's', name: 's', transport: { type: 'stdio', command: 'node', args: [], env: {} }, enabled: true, timeout_secs: 30 });
  assert.deepEqual(onDisk(dir), after, 'the file holds exactly what the save returned');
  assert.equal(onDisk(dir).servers[0].auth.type, 'oauth2');
  assert.deepEqual(await storeIn(dir).load(), after, 'a fresh store (another process) reads the same config');
  assert.deepEqual(store.get(), after);
});

test('a corrupt file is refused with its path named, by load and by save, and left intact', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  for (const text of ['{"servers": [', '{"servers": 5}']) {
    writeFileSync(fileOf(dir), text);
    const named = (err: unknown) => err instanceof SupervisorError && err.code === ErrorCode.CONFIG_CORRUPT && err.message.includes(fileOf(dir));
    await assert.rejects(store.load(), named);
    await assert.rejects(store.read(), named);
    await assert.rejects(store.save({ servers: [] }, { servers: [http('a')] }, ctx), named);
    assert.equal(readFileSync(fileOf(dir), 'utf8'), text, 'never overwritten');
  }
});

test('validation collects every error with the exact text and writes nothing', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  await store.load();
  const requested = {
    servers: [
      { id: 'id-1', name: 'Bad Name', transport: { type: 'http', url: 'ftp://files.example' } },
      { id: 'id-2', name: 'tool', transport: { type: 'stdio', command: ' ' } },
      { id: 'id-3', name: 'tool', transport: { type: 'http', url: `http://localhost:${OWN_PORT}/mcp` } },
      { id: 'id-4', name: '', transport: { type: 'http', url: '' } },
    ],
  };
  await assert.rejects(store.save({ servers: [] }, requested, ctx), (err: unknown) => {
    assert.ok(err instanceof ApiError && err.code === 'invalid_input');
    assert.equal(
      err.message,
      'Invalid upstream config: ' +
        [
          "Name 'Bad Name' is invalid: must contain only lowercase letters, digits, hyphens, and underscores",
          "URL 'ftp://files.example' must use http:// or https:// scheme",
          "Server 'id-2' has an empty stdio command",
          "Duplicate server name: 'tool'",
          `URL 'http://localhost:${OWN_PORT}/mcp' points to this TUIC instance (circular proxy)`,
          "Server 'id-4' has an empty name",
        ].join('; '),
    );
    return true;
  });
  assert.equal(existsSync(fileOf(dir)), false, 'nothing written');
  assert.deepEqual(store.get(), { servers: [] }, 'the view is unchanged');

  await assert.rejects(store.save({ servers: [] }, { servers: [{ id: 'x', name: 'x', transport: { type: 'smoke' } }] }, ctx), {
    message: 'Invalid upstream config: servers[0].transport.type must be "http" or "stdio"',
  });
  await assert.rejects(
    store.save({ servers: [] }, { servers: [{ name: 'x' }] }, ctx),
    /Invalid upstream config: requested\.servers\[0\] needs a non-empty string id/,
  );
  await assert.rejects(store.save([], { servers: [] }, ctx), /Invalid upstream config: base must be an object with servers/);
  assert.equal(existsSync(fileOf(dir)), false);
});

test('duplicate ids are refused naming where they are: base, requested or current', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  await assert.rejects(store.save({ servers: [http('a'), http('a')] }, { servers: [] }, ctx), { message: "Duplicate upstream id 'a' in base configuration" });
  await assert.rejects(store.save({ servers: [] }, { servers: [http('b'), http('b')] }, ctx), {
    message: "Duplicate upstream id 'b' in requested configuration",
  });
  const doubled = JSON.stringify({ servers: [http('c'), http('c', { name: 'c2' })] });
  writeFileSync(fileOf(dir), doubled);
  await assert.rejects(store.save({ servers: [] }, { servers: [http('d')] }, ctx), (err: unknown) => {
    assert.ok(err instanceof ApiError && err.code === 'invalid_input');
    assert.equal(err.message, "Duplicate upstream id 'c' in current configuration");
    return true;
  });
  assert.equal(readFileSync(fileOf(dir), 'utf8'), doubled);
});

test('two processes: a stale save keeps the concurrent addition, and the same id added twice is a conflict', async (t) => {
  const dir = tempDir(t);
  const a = storeIn(dir);
  const b = storeIn(dir);
  await a.load();
  await b.load();
  await b.save({ servers: [] }, { servers: [http('theirs')] }, ctx);
  const mine = await a.save({ servers: [] }, { servers: [http('mine')] }, ctx);
  assert.deepEqual(ids(onDisk(dir)).sort(), ['mine', 'theirs']);
  assert.deepEqual(ids(mine.before), ['theirs'], 'before = the file under the lock, with the other process’s addition');
  assert.deepEqual(mine.plan.connect.map((s) => s.id).sort(), ['mine', 'theirs'], 'this process’s hub never had theirs: the plan brings it up to the file');

  const written = readFileSync(fileOf(dir), 'utf8');
  await assert.rejects(b.save({ servers: [http('theirs')] }, { servers: [http('theirs'), http('mine', { name: 'other' })] }, ctx), (err: unknown) => {
    assert.ok(err instanceof UpstreamIdConflictError);
    assert.equal(err.code, 'conflict');
    assert.equal(err.message, "Upstream id 'mine' was added concurrently; reload before adding it again");
    return true;
  });
  assert.equal(readFileSync(fileOf(dir), 'utf8'), written, 'the conflict writes nothing');
});

test('a stale save keeps auth another process wrote, and an explicit removal clears it', async (t) => {
  const dir = tempDir(t);
  const a = storeIn(dir);
  const b = storeIn(dir);
  const base = (await a.load()).servers;
  await a.save({ servers: base }, { servers: [http('x')] }, ctx);
  const loaded = await b.load();
  const oauth = { type: 'oauth2', client_id: 'dcr-1', scopes: [] };
  await b.save(loaded, { servers: [{ ...loaded.servers[0]!, auth: oauth }] }, ctx);
  // a still holds the copy without auth; it edits the timeout only.
  const stale = a.get();
  const { after } = await a.save(stale, { servers: [{ ...stale.servers[0]!, timeout_secs: 5 }] }, ctx);
  assert.deepEqual(after.servers[0]!.auth, oauth);
  assert.equal(after.servers[0]!.timeout_secs, 5);
  const current = await b.read();
  const { auth: _dropped, ...withoutAuth } = current.servers[0]!;
  const cleared = await b.save(current, { servers: [withoutAuth] }, ctx);
  assert.equal('auth' in cleared.after.servers[0]!, false);
});

test('Bearer tokens go to the credential store; the file, get() and read() never hold one', async (t) => {
  const dir = tempDir(t);
  const credentials = await fileCredentials(dir);
  const store = new UpstreamStore({ configDir: dir, credentials: () => credentials });
  await store.load();
  const SECRET = 'bearer-secret-7f3a91c2';
  const server = http('api', { auth: { type: 'bearer', token: SECRET } });
  const { after, plan } = await store.save({ servers: [] }, { servers: [server] }, ctx);
  const raw = readFileSync(fileOf(dir), 'utf8');
  assert.equal(raw.includes(SECRET), false, 'the token is not in mcp-upstreams.json');
  assert.deepEqual(JSON.parse(raw).servers[0].auth, { type: 'bearer', token: '' });
  assert.equal(await credentials.get('api'), SECRET, 'account = upstream name');
  for (const view of [after, plan.connect[0]!, store.get(), await store.read()]) assert.equal(JSON.stringify(view).includes(SECRET), false);

  // A token change alone is not a config change: the hub reads the token per request.
  const rotated = await store.save(store.get(), { servers: [http('api', { auth: { type: 'bearer', token: 'rotated-token-2' } })] }, ctx);
  assert.deepEqual(rotated.plan, { disconnect: [], connect: [], reconnect: [] });
  assert.equal(await credentials.get('api'), 'rotated-token-2');

  // A hand-written file holding a token is migrated by the next save, and never shown before that.
  const legacy = 'legacy-plaintext-token-99';
  writeFileSync(fileOf(dir), JSON.stringify({ servers: [http('old', { auth: { type: 'bearer', token: legacy } })] }));
  assert.equal(JSON.stringify(await store.read()).includes(legacy), false);
  const seen = await store.read();
  await store.save(seen, { servers: [...seen.servers, http('new')] }, ctx);
  assert.equal(readFileSync(fileOf(dir), 'utf8').includes(legacy), false);
  assert.equal(await credentials.get('old'), legacy);
});

test('a token with no credential store to hold it refuses the save and writes nothing', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  const SECRET = 'never-written-5521';
  await assert.rejects(store.save({ servers: [] }, { servers: [http('api', { auth: { type: 'bearer', token: SECRET } })] }, ctx), (err: unknown) => {
    assert.match((err as Error).message, /Cannot keep the Bearer token of 'api': no credential store is open/);
    assert.equal((err as Error).message.includes(SECRET), false);
    return true;
  });
  assert.equal(existsSync(fileOf(dir)), false);
});

test('the file is written owner-only (0600)', { skip: process.platform === 'win32' }, async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  await store.save({ servers: [] }, { servers: [http('a')] }, ctx);
  assert.equal(statSync(fileOf(dir)).mode & 0o777, 0o600);
});

test('the plan: added connect, removed disconnect, changed reconnect, unchanged absent', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  await store.load();
  const first = await store.save({ servers: [] }, { servers: [http('keep'), http('edit'), http('drop')] }, ctx);
  const { plan } = await store.save(first.after, { servers: [http('keep'), http('edit', { timeout_secs: 1 }), http('add')] }, ctx);
  assert.deepEqual(
    plan.connect.map((s) => s.id),
    ['add'],
  );
  assert.deepEqual(
    plan.disconnect.map((s) => s.id),
    ['drop'],
  );
  assert.deepEqual(
    plan.reconnect.map((r) => [r.before.timeout_secs, r.after.timeout_secs]),
    [[30, 1]],
  );
});

test('concurrent_saves_keep_live_registry_in_disk_order', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  await store.load();
  const seeded = await store.save({ servers: [] }, { servers: [http('x')] }, ctx);
  const seen = seeded.after;

  // A live registry the plans are applied to, as the hub would; each apply checks that no later
  // save reached the disk while it runs, and the first apply is held until the second save is queued.
  const registry = new Map(seen.servers.map((s) => [s.id, s]));
  const applied: string[] = [];
  let releaseFirst!: () => void;
  const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
  const applyFor = (label: string, expectedOnDisk: () => string[], hold?: Promise<void>) => async (plan: UpstreamDiffPlan) => {
    await hold;
    assert.deepEqual(ids(onDisk(dir)), expectedOnDisk(), `${label}: the file is still this save's while its plan is applied`);
    for (const s of plan.disconnect) registry.delete(s.id);
    for (const { after } of plan.reconnect) registry.set(after.id, after);
    for (const s of plan.connect) registry.set(s.id, s);
    applied.push(label);
  };

  // Both clients loaded the same copy: one edits x, the other removes it and adds y.
  const edit = store.save(seen, { servers: [http('x', { timeout_secs: 7 })] }, { ...ctx, applyPlan: applyFor('edit', () => ['x'], firstHeld) });
  const replace = store.save(seen, { servers: [http('y')] }, { ...ctx, applyPlan: applyFor('replace', () => ['y']) });
  await new Promise((resolve) => setTimeout(resolve, 50)); // the second save is waiting, not writing
  assert.deepEqual(ids(onDisk(dir)), ['x'], 'the second save has not committed while the first plan is being applied');
  releaseFirst();
  await Promise.all([edit, replace]);

  assert.deepEqual(applied, ['edit', 'replace']);
  assert.deepEqual([...registry.keys()], ids(onDisk(dir)), 'the live registry ends where the disk does');
  assert.deepEqual(ids(store.get()), ['y']);
});

test('a hub that refuses the plan fails the save after the write, and the next save still runs', async (t) => {
  const dir = tempDir(t);
  const store = storeIn(dir);
  await store.load();
  await assert.rejects(
    store.save({ servers: [] }, { servers: [http('a')] }, { ...ctx, applyPlan: () => Promise.reject(new Error('hub is down')) }),
    (err: unknown) => {
      assert.ok(err instanceof UpstreamApplyError);
      assert.match(err.message, /saved, but applying it to the running hub failed: hub is down/);
      assert.equal(err.code, 'internal', 'an unknown hub failure is ours');
      assert.deepEqual(
        err.result.plan.connect.map((s) => s.id),
        ['a'],
      );
      return true;
    },
  );
  assert.deepEqual(ids(onDisk(dir)), ['a']);
  const next = await store.save(store.get(), { servers: [http('a'), http('b')] }, ctx);
  assert.deepEqual(ids(next.after), ['a', 'b']);
});
