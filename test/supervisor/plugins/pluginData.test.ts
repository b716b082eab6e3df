/** Plugin data files on a real tuicd: read and write inside plugins/<id>/data/, every way out refused. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { PLUGIN_DEV_GUIDE } from '../../../supervisor/mcp/tools/pluginDevGuide.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

let t: Tuicd;
let dataDir: string;
before(async () => {
  t = await Tuicd.start();
  dataDir = join(t.configDir, 'plugins', 'notes', 'data');
  writeFileSync(join(t.configDir, 'secret.txt'), 'outside the sandbox');
});
after(async () => {
  await t?.stop();
});

const get = (path: string) => t.socket('GET', path);
const post = (path: string, body: string) => t.socket('POST', path, body, { 'content-type': 'application/json' });

test('a data file written by POST reads back with its content type; directories are created inside the data dir', async () => {
  const w1 = await post('/api/plugins/notes/data/state/today.json', '{"items":[1,2]}');
  assert.equal(w1.status, 200, w1.text);
  assert.deepEqual(w1.json(), { ok: true });
  assert.equal(readFileSync(join(dataDir, 'state', 'today.json'), 'utf8'), '{"items":[1,2]}');
  const r1 = await get('/api/plugins/notes/data/state/today.json');
  assert.equal(r1.status, 200);
  assert.match(String(r1.headers['content-type']), /^application\/json/);
  assert.equal(r1.text, '{"items":[1,2]}');

  assert.equal((await post('/api/plugins/notes/data/readme.txt', 'plain words')).status, 200);
  const r2 = await get('/api/plugins/notes/data/readme.txt');
  assert.match(String(r2.headers['content-type']), /^text\/plain/);
  assert.equal(r2.text, 'plain words');
  // An encoded name that stays inside is fine.
  assert.equal((await get('/api/plugins/notes/data/state%2Ftoday.json')).text, '{"items":[1,2]}');
});

test('a missing file, a directory and an unknown plugin answer 404', async () => {
  assert.equal((await get('/api/plugins/notes/data/nope.txt')).status, 404);
  assert.equal((await get('/api/plugins/notes/data/state')).status, 404);
  const r = await get('/api/plugins/ghost/data/a.txt');
  assert.equal(r.status, 404);
  assert.match(r.json().error, /plugin data file not found: a.txt/);
});

test('traversal is refused: .., encoded .., absolute, encoded absolute, a bad plugin id; nothing outside is read or written', async () => {
  await post('/api/plugins/notes/data/x.txt', 'x');
  const attempts = [
    '/api/plugins/notes/data/../../../secret.txt',
    '/api/plugins/notes/data/state/../../../../secret.txt',
    '/api/plugins/notes/data/%2e%2e/%2e%2e/%2e%2e/secret.txt',
    '/api/plugins/notes/data/..%2f..%2f..%2fsecret.txt',
    '/api/plugins/notes/data//etc/passwd',
    '/api/plugins/notes/data/%2Fetc%2Fpasswd',
    '/api/plugins/notes/data/./x.txt',
    '/api/plugins/notes/data/a%00b',
    '/api/plugins/notes/data/..%5c..%5csecret.txt',
  ];
  for (const path of attempts) {
    const r = await get(path);
    assert.equal(r.status, 400, `${path}: ${r.status} ${r.text}`);
    assert.equal(r.json().code, 'invalid_input', path);
    assert.doesNotMatch(r.text, /outside the sandbox/);
    const w = await post(path, 'pwned');
    assert.equal(w.status, 400, `POST ${path}: ${w.status} ${w.text}`);
  }
  assert.match((await get('/api/plugins/notes/data/../../../secret.txt')).json().error, /Path traversal is not allowed/);
  assert.equal(readFileSync(join(t.configDir, 'secret.txt'), 'utf8'), 'outside the sandbox');
  for (const id of ['..', '.hidden', '%2e%2e']) {
    const r = await get(`/api/plugins/${id}/data/secret.txt`);
    assert.equal(r.status, 400, `${id}: ${r.text}`);
  }
});

test('symlinks out of the data dir are refused for reads, and a linked directory is not written through', async () => {
  mkdirSync(dataDir, { recursive: true });
  symlinkSync(join(t.configDir, 'secret.txt'), join(dataDir, 'leak.txt'));
  symlinkSync(t.configDir, join(dataDir, 'up'));
  const r1 = await get('/api/plugins/notes/data/leak.txt');
  assert.equal(r1.status, 400, r1.text);
  assert.match(r1.json().error, /resolves outside the plugin data directory/);
  const r2 = await get('/api/plugins/notes/data/up/secret.txt');
  assert.equal(r2.status, 400, r2.text);
  const w = await post('/api/plugins/notes/data/up/planted.txt', 'pwned');
  assert.equal(w.status, 400, w.text);
  assert.equal(existsSync(join(t.configDir, 'planted.txt')), false);
  // Writing over a link replaces the link inside the directory; its target is untouched.
  assert.equal((await post('/api/plugins/notes/data/leak.txt', 'replaced')).status, 200);
  assert.equal(readFileSync(join(t.configDir, 'secret.txt'), 'utf8'), 'outside the sandbox');
  assert.equal((await get('/api/plugins/notes/data/leak.txt')).text, 'replaced');
});

test('GET /plugins/docs is the plugin_dev_guide text; GET /plugins/list lists manifests with their directory as id', async () => {
  const docs = await get('/plugins/docs');
  assert.equal(docs.status, 200);
  assert.deepEqual(docs.json(), { content: PLUGIN_DEV_GUIDE });
  mkdirSync(join(t.configDir, 'plugins', 'clock'), { recursive: true });
  writeFileSync(join(t.configDir, 'plugins', 'clock', 'manifest.json'), JSON.stringify({ id: 'wrong', name: 'Clock', version: '1.0.0' }));
  mkdirSync(join(t.configDir, 'plugins', 'broken'), { recursive: true });
  writeFileSync(join(t.configDir, 'plugins', 'broken', 'manifest.json'), '{nope');
  const list = await get('/plugins/list');
  assert.equal(list.status, 200);
  assert.deepEqual(list.json(), [{ id: 'clock', name: 'Clock', version: '1.0.0' }]);
});
