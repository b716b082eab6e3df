import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { configFilePath, effectiveTcpPort, resolveConfigDir } from '../../../supervisor/config/env.js';

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

test('resolveConfigDir: flag, then TUIC_CONFIG_DIR, then XDG, then ~/.config', () => {
  const home = '/home/u';
  assert.equal(resolveConfigDir({ flag: '/f', env: { TUIC_CONFIG_DIR: '/e' }, home }), '/f');
  assert.equal(resolveConfigDir({ env: { TUIC_CONFIG_DIR: '/e', XDG_CONFIG_HOME: '/x' }, home }), '/e');
  assert.equal(resolveConfigDir({ env: { XDG_CONFIG_HOME: '/x' }, home, platform: 'linux' }), join('/x', 'tuicommander'));
  assert.equal(resolveConfigDir({ env: {}, home, platform: 'darwin' }), join(home, '.config', 'tuicommander'));
  assert.equal(resolveConfigDir({ env: { APPDATA: 'C:/AppData' }, home, platform: 'win32' }), join('C:/AppData', 'tuicommander'));
  assert.equal(configFilePath('/d'), join('/d', 'config.json'));
});
