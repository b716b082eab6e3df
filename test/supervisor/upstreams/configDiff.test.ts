// apply_config_diff's plan: exactly what changed is touched.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { diffUpstreams } from '../../../supervisor/upstreams/configDiff.js';
import { parseUpstreamConfig } from '../../../supervisor/upstreams/upstreamConfig.js';

const cfg = (...servers: object[]) => parseUpstreamConfig({ servers });
const http = (id: string, extra: object = {}) => ({ id, name: id, transport: { type: 'http', url: `https://${id}.example/mcp` }, ...extra });
const names = (list: Array<{ name: string }>) => list.map((s) => s.name);

test('diff_connects_new_server, diff_disconnects_removed_server, diff_unchanged_server_stays_connected', () => {
  const plan = diffUpstreams(cfg(http('keep'), http('gone')), cfg(http('keep'), http('new')));
  assert.deepEqual(names(plan.connect), ['new']);
  assert.deepEqual(names(plan.disconnect), ['gone']);
  assert.deepEqual(plan.reconnect, [], 'keep is untouched');
});

test('diff_reconnects_changed_server and diff_reconnects_on_auth_change; headers count too', () => {
  for (const extra of [
    { timeout_secs: 5 },
    { enabled: false },
    { tool_filter: { mode: 'deny', patterns: ['x'] } },
    { auth: { type: 'bearer', token: 't' } },
    { headers: [{ name: 'X-A', credential_ref: '0b7e4c2a-3f7d-4d1e-9a55-2c1f0e9d8b71' }] },
  ]) {
    const plan = diffUpstreams(cfg(http('a')), cfg(http('a', extra)));
    assert.equal(plan.reconnect.length, 1, JSON.stringify(extra));
    assert.equal(plan.reconnect[0]!.clearStoredAuth, false);
  }
});

test('a transport move with the same auth clears the stored OAuth tokens first', () => {
  const auth = { auth: { type: 'oauth2', client_id: 'dcr' } };
  const plan = diffUpstreams(cfg(http('a', auth)), cfg({ ...http('a', auth), transport: { type: 'http', url: 'https://elsewhere.example/mcp' } }));
  assert.equal(plan.reconnect[0]!.clearStoredAuth, true);
});

test('a transport move clears a registration-based authorization (no auth field) but never a Bearer token', () => {
  const moved = (extra: object) =>
    diffUpstreams(cfg(http('a', extra)), cfg({ ...http('a', extra), transport: { type: 'http', url: 'https://elsewhere.example/mcp' } }));
  assert.equal(moved({}).reconnect[0]!.clearStoredAuth, true, 'no auth field: tokens from a dynamic registration');
  assert.equal(moved({ auth: { type: 'bearer', token: '' } }).reconnect[0]!.clearStoredAuth, false, 'a Bearer token is not bound to a server');
});
