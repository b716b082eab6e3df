// The three-way upstream save: a stale client copy composes with concurrent changes on disk.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { applyUpstreamDelta, UpstreamConflictError } from '../../../supervisor/upstreams/upstreamDelta.js';

const srv = (id: string, extra: object = {}) => ({ id, name: id, transport: { type: 'http', url: `https://${id}.example/mcp` }, ...extra });
const ids = (servers: Array<{ id?: unknown }>) => servers.map((s) => s.id);

test('stale_ui_delta_preserves_a_concurrent_oauth_auth_update', () => {
  const base = [srv('a')];
  const latest = [srv('a', { auth: { type: 'oauth2', client_id: 'dcr-123', scopes: [] } })];
  const desired = [srv('a', { timeout_secs: 5 })];
  assert.deepEqual(applyUpstreamDelta(latest, base, desired), [srv('a', { auth: { type: 'oauth2', client_id: 'dcr-123', scopes: [] }, timeout_secs: 5 })]);
});

test('upstream_delta_treats_removed_auth_key_as_an_intentional_clear', () => {
  const withAuth = srv('a', { auth: { type: 'bearer', token: 't' } });
  const [out] = applyUpstreamDelta([withAuth], [withAuth], [srv('a')]);
  assert.equal('auth' in out!, false);
});

test('upstream_delta_applies_intentional_removal_without_losing_a_concurrent_addition', () => {
  const base = [srv('a'), srv('b')];
  const latest = [srv('a'), srv('b'), srv('c')]; // another process added c
  assert.deepEqual(ids(applyUpstreamDelta(latest, base, [srv('a')])), ['a', 'c']);
});

test('a server removed on disk meanwhile stays removed even if the stale client edited it', () => {
  assert.deepEqual(ids(applyUpstreamDelta([srv('a')], [srv('a'), srv('b')], [srv('a'), srv('b', { timeout_secs: 1 })])), ['a']);
});

test('upstream_save_reports_same_id_concurrent_add_without_mutating_disk', () => {
  const latest = [srv('a'), srv('n', { name: 'theirs' })];
  const snapshot = structuredClone(latest);
  assert.throws(() => applyUpstreamDelta(latest, [srv('a')], [srv('a'), srv('n', { name: 'mine' })]), UpstreamConflictError);
  assert.deepEqual(latest, snapshot, 'inputs untouched');
});

test('the desired order applies to known servers; servers the client never saw follow them', () => {
  const base = [srv('a'), srv('b')];
  const latest = [srv('a'), srv('x'), srv('b')];
  assert.deepEqual(ids(applyUpstreamDelta(latest, base, [srv('b'), srv('a')])), ['b', 'a', 'x']);
  assert.deepEqual(ids(applyUpstreamDelta(latest, base, [srv('a'), srv('b'), srv('n')])), ['a', 'b', 'n', 'x']);
  assert.deepEqual(ids(applyUpstreamDelta(latest, base, base)), ['a', 'x', 'b'], 'no change keeps the disk order');
});

test('servers without an id, or an id twice, are refused', () => {
  assert.throws(() => applyUpstreamDelta([], [], [{ name: 'x' }]), /config\.servers\[0\] needs a string id/);
  assert.throws(() => applyUpstreamDelta([], [], [srv('a'), srv('a')]), /the id 'a' twice/);
});
