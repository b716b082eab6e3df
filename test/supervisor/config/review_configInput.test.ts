// PUT /config on a real tuicd with hostile bodies: refused with 400 and nothing written, never a 500.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';

describe('PUT /config refuses hostile input with 400', () => {
  let t: Tuicd;
  let configPath: string;
  before(async () => {
    t = await Tuicd.start({ config: { collapse_tools: true, my_extension: { a: 1 } } });
    configPath = join(t.configDir, 'config.json');
  });
  after(() => t.stop());

  it('answers 400 for a body nested thousands of levels deep (it overflowed the stack: 500)', async () => {
    const before = await readFile(configPath, 'utf8');
    const depth = 20_000;
    const body = '{"services":{"server":' + '{"x":'.repeat(depth) + '1' + '}'.repeat(depth) + '}}';
    const r = await t.socket('PUT', '/config', body, { 'Content-Type': 'application/json' });
    assert.equal(r.status, 400, r.text);
    // Refused before it is parsed, so nothing can walk it recursively.
    assert.match(r.json().error, /nests deeper than 64 levels/);
    assert.equal(await readFile(configPath, 'utf8'), before, 'nothing written');
    assert.equal((await t.socket('GET', '/config')).json().collapse_tools, true);
  });

  for (const name of ['toString', 'hasOwnProperty', 'constructor', 'valueOf']) {
    it(`refuses "${name}" as an unknown field, like any other key the schema does not know`, async () => {
      const before = await readFile(configPath, 'utf8');
      const r = await t.socket('PUT', '/config', JSON.stringify({ [name]: 'x' }), { 'Content-Type': 'application/json' });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json().error, `Invalid config: ${name}: unknown field`);
      assert.equal(await readFile(configPath, 'utf8'), before, 'nothing written');
      assert.equal(Object.hasOwn((await t.socket('GET', '/config')).json(), name), false);
    });
  }

  it('still saves known fields and a foreign key that is already in the file', async () => {
    const r = await t.socket('PUT', '/config', JSON.stringify({ services: { server: { port: 4567 } }, collapse_tools: false, my_extension: { a: 2 } }));
    assert.equal(r.status, 200, r.text);
    const disk = JSON.parse(await readFile(configPath, 'utf8'));
    assert.equal(disk.services.server.port, 4567);
    assert.equal(disk.collapse_tools, false);
    assert.deepEqual(disk.my_extension, { a: 2 });
  });
});
