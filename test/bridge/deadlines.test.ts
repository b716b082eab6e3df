/** bridge/deadlines.ts and bridge/endpoint.ts: the pinned deadlines, and discovery that never crosses instances. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { deadlineFor } from '../../bridge/deadlines.js';
import { endpointCandidates } from '../../bridge/endpoint.js';

const call = (name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

test('deadlines: ordinary 10 s; waits their timeout + 5 s (default 60 s, capped 300 s), also through call_tool; confirm, worktree ops and upstream tools 305 s', () => {
  assert.equal(deadlineFor({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), 10_000);
  assert.equal(deadlineFor(call('session', { action: 'list' })), 10_000);
  assert.equal(deadlineFor(call('session', { action: 'wait' })), 65_000);
  assert.equal(deadlineFor(call('agent', { action: 'wait', timeout_ms: 0 })), 65_000);
  assert.equal(deadlineFor(call('agent', { action: 'wait', timeout_ms: -5 })), 65_000);
  assert.equal(deadlineFor(call('call_tool', { tool_name: 'agent', arguments: { action: 'wait', timeout_ms: 120_000 } })), 125_000);
  assert.equal(deadlineFor(call('session', { action: 'wait', timeout_ms: 10_000_000 })), 305_000);
  assert.equal(deadlineFor(call('session', { action: 'wait', timeout_ms: 1 })), 5_001);
  assert.equal(deadlineFor(call('ui', { action: 'confirm' })), 305_000);
  assert.equal(deadlineFor(call('repo', { action: 'worktree_remove' })), 305_000);
  assert.equal(deadlineFor(call('call_tool', { tool_name: 'repo', arguments: { action: 'worktree_create' } })), 305_000);
  assert.equal(deadlineFor(call('everything__longRunningOperation', {})), 305_000);
  assert.equal(deadlineFor(call('ui', { action: 'toast' })), 10_000);
  assert.equal(deadlineFor('not even an object'), 10_000);
});

test('endpoint: TUIC_SOCKET wins; the default instance also tries older mcp-*.sock files; a named instance only its own socket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-endpoint-'));
  try {
    writeFileSync(join(dir, 'mcp-1234.sock'), '');
    writeFileSync(join(dir, 'other.sock'), '');
    assert.deepEqual(endpointCandidates({}, { TUIC_SOCKET: '/x/y.sock', TUIC_CONFIG_DIR: dir }), ['/x/y.sock']);
    assert.deepEqual(endpointCandidates({}, { TUIC_CONFIG_DIR: dir }), [join(dir, 'mcp.sock'), join(dir, 'mcp-1234.sock')]);
    const named = endpointCandidates({ instance: 'work' }, { TUIC_CONFIG_DIR: dir });
    assert.equal(named.length, 1);
    assert.notEqual(named[0], join(dir, 'mcp.sock'));
    assert.match(named[0]!, /tuicd-[0-9a-f]{12}\.sock$/);
    assert.deepEqual(endpointCandidates({}, { TUIC_CONFIG_DIR: dir, TUIC_APP_INSTANCE: 'work' }), named, 'TUIC_APP_INSTANCE names the instance too');
    assert.throws(() => endpointCandidates({ instance: '../etc' }, { TUIC_CONFIG_DIR: dir }), /instance name/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
