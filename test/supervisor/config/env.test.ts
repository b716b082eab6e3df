import assert from 'node:assert/strict';
import { test } from 'node:test';

import { effectiveTcpPort } from '../../../supervisor/config/env.js';

const config = { services: { server: { port: 9876 } } };

test('effectiveTcpPort: the configured port unless TUIC_PORT is set', () => {
  assert.equal(effectiveTcpPort(config, {}), 9876);
  assert.equal(effectiveTcpPort(config, { TUIC_PORT: '' }), 9876);
  assert.equal(effectiveTcpPort(config, { TUIC_PORT: '9877' }), 9877);
  assert.equal(effectiveTcpPort(config, { TUIC_PORT: ' 0 ' }), 0);
  assert.equal(effectiveTcpPort(config, { TUIC_PORT: '65535' }), 65535);
});

test('effectiveTcpPort: an invalid TUIC_PORT is a clear CONFIG_INVALID error', () => {
  for (const bad of ['abc', '65536', '-1', '80.5', '1e3', '0x50', '99999999']) {
    assert.throws(
      () => effectiveTcpPort(config, { TUIC_PORT: bad }),
      (err: any) => err.code === 'CONFIG_INVALID' && err.message.includes('TUIC_PORT') && err.message.includes(bad),
      bad,
    );
  }
});
