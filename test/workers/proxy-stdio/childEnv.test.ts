/** The child's environment: cleared to the allowlist, PATH augmented only with directories that exist, upstream env on top. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { StdioLimits } from '../../../shared/protocol/proxyStdio.js';
import { buildChildEnv, expandHome } from '../../../workers/proxy-stdio/childEnv.js';

const parentEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  USER: 'u',
  LANG: 'C.UTF-8',
  TERM: 'xterm',
  ANTHROPIC_API_KEY: 'sk-ant-secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  NODE_OPTIONS: '--require /tmp/evil.js',
};

test('the allowlist is the ten variables an upstream may inherit', () => {
  assert.deepEqual([...StdioLimits.ENV_ALLOWLIST], ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TEMP', 'TMP', 'SHELL', 'TERM']);
});

test('only allowlisted variables survive; secrets do not', () => {
  const env = buildChildEnv({}, { parentEnv, exists: () => false });
  assert.deepEqual(env, { PATH: '/usr/bin:/bin', HOME: '/home/u', USER: 'u', LANG: 'C.UTF-8', TERM: 'xterm' });
});

test('PATH gains the per-user tool directories that exist, in order, without duplicates', () => {
  const present = new Set(['/usr/local/bin', '/home/u/.cargo/bin', '/home/u/bin', '/usr/bin']);
  const env = buildChildEnv({}, { parentEnv: { ...parentEnv, PATH: '/usr/bin:/home/u/.cargo/bin' }, exists: (d) => present.has(d) });
  assert.equal(env.PATH, '/usr/bin:/home/u/.cargo/bin:/usr/local/bin:/home/u/bin');
});

test("the upstream's own env goes on top, and may set anything (even a cleared name)", () => {
  const env = buildChildEnv({ ALLOWED_PATHS: '/p', LANG: 'de_DE.UTF-8', ANTHROPIC_API_KEY: 'given-on-purpose' }, { parentEnv, exists: () => false });
  assert.equal(env.ALLOWED_PATHS, '/p');
  assert.equal(env.LANG, 'de_DE.UTF-8');
  assert.equal(env.ANTHROPIC_API_KEY, 'given-on-purpose');
});

test('~ and ~/… expand to the home directory; other tildes stay', () => {
  assert.equal(expandHome('~', '/home/u'), '/home/u');
  assert.equal(expandHome('~/bin/server', '/home/u'), '/home/u/bin/server');
  assert.equal(expandHome('~other/x', '/home/u'), '~other/x');
  assert.equal(expandHome('/a/~/b', '/home/u'), '/a/~/b');
});
