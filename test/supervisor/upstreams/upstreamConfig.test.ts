// mcp-upstreams.json: shapes, defaults and every validation rule, messages word for word.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseUpstreamConfig, UpstreamShapeError } from '../../../supervisor/upstreams/upstreamConfig.js';
import { HEADERS_ERROR, isSelfReferential, validateUpstreamConfig } from '../../../supervisor/upstreams/validateUpstreams.js';

const REF = '0b7e4c2a-3f7d-4d1e-9a55-2c1f0e9d8b71';
const REF2 = '5d1c0f9e-8b7a-4c6d-a5e4-f3b2a1c0d9e8';
const OWN = { ownPort: 9876 };

const http = (name: string, url: string, extra: object = {}) => ({ id: `id-${name}`, name, transport: { type: 'http', url }, ...extra });
const stdio = (name: string, command: string, extra: object = {}) => ({ id: `id-${name}`, name, transport: { type: 'stdio', command }, ...extra });
const errorsOf = (...servers: object[]) => validateUpstreamConfig(parseUpstreamConfig({ servers }), OWN);

test('defaults_applied_on_deserialize: enabled true, timeout 30, stdio args/env empty; optional fields omitted', () => {
  const { servers } = parseUpstreamConfig({ servers: [stdio('fs', 'npx'), http('web', 'https://example.com/mcp')] });
  assert.deepEqual(servers[0], { id: 'id-fs', name: 'fs', transport: { type: 'stdio', command: 'npx', args: [], env: {} }, enabled: true, timeout_secs: 30 });
  assert.deepEqual(servers[1], { id: 'id-web', name: 'web', transport: { type: 'http', url: 'https://example.com/mcp' }, enabled: true, timeout_secs: 30 });
  assert.equal('auth' in servers[1]!, false, 'auth_not_serialized_when_none');
  assert.deepEqual(parseUpstreamConfig({}), { servers: [] });
});

test('round trips: a full stdio and http server survive JSON unchanged', () => {
  const full = {
    servers: [
      {
        id: 'a',
        name: 'fs',
        transport: { type: 'stdio', command: 'npx', args: ['-y', 'x'], env: { K: 'v' }, cwd: '~/w' },
        enabled: false,
        timeout_secs: 0,
        tool_filter: { mode: 'deny', patterns: ['write_*'] },
      },
      {
        id: 'b',
        name: 'gh',
        transport: { type: 'http', url: 'https://api.example/mcp' },
        enabled: true,
        timeout_secs: 10,
        auth: { type: 'bearer', token: 't' },
        headers: [{ name: 'X-Team', credential_ref: REF }],
      },
    ],
  };
  assert.deepEqual(parseUpstreamConfig(JSON.parse(JSON.stringify(full))), full);
});

test('oauth2: the legacy o_auth2 tag is read, oauth2 is what comes out; minimal form gets empty scopes', () => {
  const { servers } = parseUpstreamConfig({ servers: [http('a', 'https://x.example', { auth: { type: 'o_auth2', client_id: 'cid' } })] });
  assert.deepEqual(servers[0]!.auth, { type: 'oauth2', client_id: 'cid', scopes: [] });
});

test('shape errors name the field; a header carrying a value is refused (values live in the credential store)', () => {
  assert.throws(
    () => parseUpstreamConfig({ servers: [{ id: 'x', name: 'x', transport: { type: 'ftp' } }] }),
    /servers\[0\]\.transport\.type must be "http" or "stdio"/,
  );
  assert.throws(() => parseUpstreamConfig({ servers: [http('a', 'https://x', { timeout_secs: -1 })] }), /servers\[0\]\.timeout_secs/);
  assert.throws(
    () => parseUpstreamConfig({ servers: [http('a', 'https://x', { headers: [{ name: 'X', credential_ref: REF, value: 's3cret' }] })] }),
    (err: Error) => {
      assert.ok(err instanceof UpstreamShapeError);
      assert.match(err.message, /unknown fields: value/);
      assert.doesNotMatch(err.message, /s3cret/, 'a secret value never appears in the error');
      return true;
    },
  );
  assert.throws(() => parseUpstreamConfig([]), /must be a JSON object/);
});

test('names that would split wrongly in <upstream>__<tool>: a double underscore or a trailing underscore', () => {
  for (const bad of ['a__b', 'a_', 'fs__']) {
    assert.deepEqual(errorsOf(http(bad, 'https://x.example')), [
      `Name '${bad}' is invalid: must not contain '__' or end with '_' (tool names are '<upstream>__<tool>')`,
    ]);
  }
  for (const good of ['a_b', '_a', 'my-fs_2']) assert.deepEqual(errorsOf(http(good, 'https://x.example')), []);
});

test('names: empty (and nothing else checked), uppercase, spaces, dots, duplicates', () => {
  assert.deepEqual(errorsOf({ ...http('', ''), id: 'srv-1' }), ["Server 'srv-1' has an empty name"]);
  for (const bad of ['GitHub', 'my server', 'a.b']) {
    assert.deepEqual(errorsOf(http(bad, 'https://x.example')), [
      `Name '${bad}' is invalid: must contain only lowercase letters, digits, hyphens, and underscores`,
    ]);
  }
  assert.deepEqual(errorsOf(http('dup', 'https://x.example'), stdio('dup', 'npx')), ["Duplicate server name: 'dup'"]);
  assert.deepEqual(errorsOf(http('ok_name-2', 'https://x.example')), []);
});

test('URLs: empty, non-http schemes, self-referential hosts on our own port', () => {
  assert.deepEqual(errorsOf(http('a', '')), ["Server 'id-a' has an empty HTTP URL"]);
  // A scheme without `//` (`http:x`) is no http URL either; the scheme itself is case-insensitive (RFC 3986).
  for (const url of ['ftp://x.example/mcp', 'file:///etc/passwd', 'javascript:alert(1)', 'http:x.example/mcp', 'https:/x.example']) {
    assert.deepEqual(errorsOf(http('a', url)), [`URL '${url}' must use http:// or https:// scheme`]);
  }
  assert.deepEqual(errorsOf(http('a', 'HTTPS://x.example/mcp')), []);
  for (const url of ['http://localhost:9876/mcp', 'http://127.0.0.1:9876/mcp', 'http://[::1]:9876/mcp', 'http://0.0.0.0:9876/mcp']) {
    assert.deepEqual(errorsOf(http('a', url)), [`URL '${url}' points to this TUIC instance (circular proxy)`]);
  }
  assert.equal(isSelfReferential('http://localhost:9877/mcp', 9876), false, 'different port');
  assert.equal(isSelfReferential('http://example.com:9876/mcp', 9876), false, 'remote host');
  assert.equal(isSelfReferential('http://localhost/mcp', 80), true, 'default port 80');
  assert.equal(isSelfReferential('https://localhost/mcp', 443), true, 'default port 443');
  assert.equal(isSelfReferential('http://[bad', 9876), false, 'unparseable is not self-referential');
});

test('stdio: empty command; oauth2 with an empty client_id', () => {
  assert.deepEqual(errorsOf(stdio('a', '  ')), ["Server 'id-a' has an empty stdio command"]);
  assert.deepEqual(errorsOf(http('a', 'https://x.example', { auth: { type: 'oauth2', client_id: '' } })), [
    "Server 'id-a' has an OAuth2 auth with empty client_id",
  ]);
});

test('secret headers: injection, reserved names, bad refs, stdio, duplicates and an Authorization beside auth are refused', () => {
  const withHeaders = (headers: object[], extra: object = {}) => errorsOf(http('a', 'https://x.example', { headers, ...extra }));
  assert.deepEqual(
    withHeaders([
      { name: 'X-Team', credential_ref: REF },
      { name: 'Authorization', credential_ref: REF2 },
    ]),
    [],
    'Authorization without auth is fine',
  );
  for (const headers of [
    [{ name: 'X-Bad\r\nInjected', credential_ref: REF }],
    [{ name: 'Host', credential_ref: REF }],
    [{ name: 'mcp-session-id', credential_ref: REF }],
    [{ name: 'X-Team', credential_ref: 'not-a-uuid' }],
    [
      { name: 'X-Team', credential_ref: REF },
      { name: 'x-team', credential_ref: REF2 },
    ],
    [
      { name: 'X-One', credential_ref: REF },
      { name: 'X-Two', credential_ref: REF },
    ],
  ]) {
    assert.deepEqual(withHeaders(headers), [HEADERS_ERROR], JSON.stringify(headers));
  }
  assert.deepEqual(withHeaders([{ name: 'Authorization', credential_ref: REF }], { auth: { type: 'bearer', token: 't' } }), [HEADERS_ERROR]);
  assert.deepEqual(errorsOf(stdio('s', 'npx', { headers: [{ name: 'X-Team', credential_ref: REF }] })), [HEADERS_ERROR]);
});

test('multiple_errors_collected: every server, every rule, in order', () => {
  assert.deepEqual(errorsOf(http('Bad', 'ftp://x'), stdio('ok', ''), http('ok', 'http://localhost:9876')), [
    "Name 'Bad' is invalid: must contain only lowercase letters, digits, hyphens, and underscores",
    "URL 'ftp://x' must use http:// or https:// scheme",
    "Server 'id-ok' has an empty stdio command",
    "Duplicate server name: 'ok'",
    "URL 'http://localhost:9876' points to this TUIC instance (circular proxy)",
  ]);
});
