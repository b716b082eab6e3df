// validate_upstream_config reports InvalidHeaders once per offending header, before the OAuth
// client_id check of the same server (the joined 400 message lists the errors in that order).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseUpstreamConfig } from '../../../supervisor/upstreams/upstreamConfig.js';
import { HEADERS_ERROR, validateUpstreamConfig } from '../../../supervisor/upstreams/validateUpstreams.js';

const REF = '0b7e4c2a-3f7d-4d1e-9a55-2c1f0e9d8b71';
const REF2 = '5d1c0f9e-8b7a-4c6d-a5e4-f3b2a1c0d9e8';
const errorsOf = (...servers: object[]) => validateUpstreamConfig(parseUpstreamConfig({ servers }), { ownPort: 9876 });

test('InvalidHeaders: one error per offending header', () => {
  const headers = [
    { name: 'Host', credential_ref: REF },
    { name: 'X-Fine', credential_ref: REF2 },
    { name: 'Cookie', credential_ref: '5d1c0f9e-8b7a-4c6d-a5e4-000000000000' },
  ];
  assert.deepEqual(errorsOf({ id: 'id-a', name: 'a', transport: { type: 'http', url: 'https://x.example' }, headers }), [HEADERS_ERROR, HEADERS_ERROR]);
  // Headers on stdio: every one of them is refused.
  const stdioHeaders = [
    { name: 'X-One', credential_ref: REF },
    { name: 'X-Two', credential_ref: REF2 },
  ];
  assert.deepEqual(errorsOf({ id: 'id-s', name: 's', transport: { type: 'stdio', command: 'npx' }, headers: stdioHeaders }), [HEADERS_ERROR, HEADERS_ERROR]);
});

test('InvalidHeaders comes before the empty OAuth client_id of the same server', () => {
  const server = {
    id: 'id-a',
    name: 'a',
    transport: { type: 'http', url: 'https://x.example' },
    auth: { type: 'oauth2', client_id: '' },
    headers: [{ name: 'Authorization', credential_ref: REF }],
  };
  assert.deepEqual(errorsOf(server), [HEADERS_ERROR, "Server 'id-a' has an OAuth2 auth with empty client_id"]);
});
