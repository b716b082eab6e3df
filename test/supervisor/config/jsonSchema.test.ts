import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { Compile } from 'typebox/compile';

import { writeSchema } from '../../../supervisor/config/jsonSchema.js';
import { normalizeConfig } from '../../../supervisor/config/normalize.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tuicd-config-schema-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('writeSchema writes a parseable config.schema.json next to config.json', async () => {
  const written = await writeSchema(join(dir, 'config.json'));
  assert.equal(written, join(dir, 'config.schema.json'));
  assert.deepEqual(await readdir(dir), ['config.schema.json']);
  const schema = JSON.parse(await readFile(written, 'utf8'));
  assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.equal(schema.properties.services.properties.server.properties.port.maximum, 65535);
  assert.equal(schema.properties.mcp_server_enabled.default, true);
  // Every defaulted field is optional for an editor; the TLS manual branch still needs its paths.
  assert.equal(schema.required, undefined);
  assert.equal(schema.properties.services.properties.auth.required, undefined);
  const manual = schema.properties.services.properties.tls.anyOf[1];
  assert.deepEqual(manual.required, ['mode', 'cert_path', 'key_path']);
});

test('the written schema accepts the defaults and a sparse file, and rejects a wrong type', async () => {
  const schema = JSON.parse(await readFile(await writeSchema(join(dir, 'config.json')), 'utf8'));
  const check = Compile(schema);
  assert.equal(check.Check(normalizeConfig({}, { strictTls: false })), true);
  assert.equal(check.Check({ services: { server: { enabled: true } } }), true);
  assert.equal(check.Check({ mcp_port: 'x' }), false);
  assert.equal(check.Check({ services: { server: { port: 70000 } } }), false);
});

test('normalizeConfig: port bounds and integer-ness', () => {
  const port = (value: unknown) => normalizeConfig({ services: { server: { port: value } } }, { strictTls: false });
  assert.equal(port(0).services.server.port, 0);
  assert.equal(port(65535).services.server.port, 65535);
  for (const bad of [65536, -1, 80.5, '80']) {
    assert.throws(() => port(bad), /Invalid config: services\.server\.port: /, String(bad));
  }
});
