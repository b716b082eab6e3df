import assert from 'node:assert/strict';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_CONFIG_DIR_NAME, instanceSocketPath, resolvePaths, validateInstanceName } from '../../shared/paths.js';

/** macOS's sun_path limit; Linux allows 108. */
const SUN_PATH_MAX = 104;

describe('resolvePaths: config dir', () => {
  it('takes the flag over TUIC_CONFIG_DIR and XDG_CONFIG_HOME', () => {
    const p = resolvePaths({ configDir: '/flag/dir' }, { TUIC_CONFIG_DIR: '/env/dir', XDG_CONFIG_HOME: '/xdg' });
    assert.equal(p.configDir, '/flag/dir');
  });

  it('takes TUIC_CONFIG_DIR over XDG_CONFIG_HOME', () => {
    assert.equal(resolvePaths({}, { TUIC_CONFIG_DIR: '/env/dir', XDG_CONFIG_HOME: '/xdg' }).configDir, '/env/dir');
  });

  it('uses $XDG_CONFIG_HOME/com.tuic.commander', () => {
    assert.equal(DEFAULT_CONFIG_DIR_NAME, 'com.tuic.commander');
    assert.equal(resolvePaths({}, { XDG_CONFIG_HOME: '/xdg' }).configDir, '/xdg/com.tuic.commander');
  });

  it('falls back to ~/.config/com.tuic.commander, also for a relative XDG_CONFIG_HOME', () => {
    const want = join(homedir(), '.config', 'com.tuic.commander');
    assert.equal(resolvePaths({}, {}).configDir, want);
    assert.equal(resolvePaths({}, { XDG_CONFIG_HOME: 'relative/xdg' }).configDir, want);
  });

  it('treats empty variables as unset rather than as the current directory', () => {
    assert.equal(resolvePaths({}, { TUIC_CONFIG_DIR: '', XDG_CONFIG_HOME: '/xdg' }).configDir, '/xdg/com.tuic.commander');
    const p = resolvePaths({}, { TUIC_APP_INSTANCE: '', XDG_CONFIG_HOME: '/xdg' });
    assert.equal(p.instance, null);
    assert.equal(p.socketPath, '/xdg/com.tuic.commander/mcp.sock');
  });

  it('resolves a relative flag against the current directory', () => {
    assert.equal(resolvePaths({ configDir: 'some/rel' }, {}).configDir, resolve('some/rel'));
  });

  it('derives the socket, config, schema and log paths from the config dir', () => {
    assert.deepEqual(resolvePaths({ configDir: '/c' }, {}), {
      configDir: '/c',
      socketPath: '/c/mcp.sock',
      configFile: '/c/config.json',
      schemaFile: '/c/config.schema.json',
      logDir: '/c/logs',
      instance: null,
    });
  });
});

describe('resolvePaths: named instances', () => {
  it('gives a named instance its own subdirectory of the default dir and a socket in the temp dir', () => {
    const p = resolvePaths({ instance: 'dev' }, { XDG_CONFIG_HOME: '/xdg' });
    assert.equal(p.instance, 'dev');
    assert.equal(p.configDir, '/xdg/com.tuic.commander/instances/dev');
    assert.equal(p.configFile, '/xdg/com.tuic.commander/instances/dev/config.json');
    assert.equal(dirname(p.socketPath), tmpdir());
    assert.match(p.socketPath, /\/tuicd-[0-9a-f]{12}\.sock$/);
  });

  it('reads the instance from TUIC_APP_INSTANCE, the flag winning', () => {
    assert.equal(resolvePaths({}, { TUIC_APP_INSTANCE: 'envname', XDG_CONFIG_HOME: '/xdg' }).configDir, '/xdg/com.tuic.commander/instances/envname');
    assert.equal(resolvePaths({ instance: 'flagname' }, { TUIC_APP_INSTANCE: 'envname', XDG_CONFIG_HOME: '/xdg' }).instance, 'flagname');
  });

  it('uses an explicit dir as it is for a named instance', () => {
    assert.equal(resolvePaths({ instance: 'dev', configDir: '/c' }, {}).configDir, '/c');
    assert.equal(resolvePaths({ instance: 'dev' }, { TUIC_CONFIG_DIR: '/e' }).configDir, '/e');
  });

  it('is deterministic and distinct per instance and per config dir', () => {
    const env = { XDG_CONFIG_HOME: '/xdg' };
    const a = resolvePaths({ instance: 'a' }, env).socketPath;
    assert.equal(resolvePaths({ instance: 'a' }, env).socketPath, a);
    assert.notEqual(resolvePaths({ instance: 'b' }, env).socketPath, a);
    assert.notEqual(resolvePaths({ instance: 'a', configDir: '/other' }, env).socketPath, a);
    assert.notEqual(instanceSocketPath('a', '/c', 1000), instanceSocketPath('a', '/c', 1001), 'per user');
  });

  it('keeps the socket path under 104 bytes even for a very long config dir', () => {
    const longDir = '/' + Array.from({ length: 20 }, (_, i) => `a-rather-long-directory-name-${i}`).join('/');
    const p = resolvePaths({ instance: 'x'.repeat(64), configDir: longDir }, {});
    assert.equal(p.configDir, longDir);
    assert.ok(Buffer.byteLength(p.socketPath) < SUN_PATH_MAX, `${Buffer.byteLength(p.socketPath)} bytes: ${p.socketPath}`);
    assert.ok(p.socketPath.startsWith(tmpdir()));
  });

  it('rejects invalid instance names, from the flag or the environment', () => {
    for (const bad of ['', '.hidden', '-dash', '../up', 'a/b', 'a b', 'x'.repeat(65), 'ünï']) {
      assert.throws(() => validateInstanceName(bad), /instance name/, JSON.stringify(bad));
      assert.throws(() => resolvePaths({ instance: bad }, {}), /instance name/, JSON.stringify(bad));
    }
    assert.throws(() => resolvePaths({}, { TUIC_APP_INSTANCE: '../up' }), /instance name/);
  });

  it('accepts names of letters, digits, dot, underscore and dash up to 64 characters', () => {
    for (const good of ['a', 'A.b_c-1', '0dev', 'x'.repeat(64)]) assert.equal(validateInstanceName(good), good);
  });
});
