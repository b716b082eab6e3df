import assert from 'node:assert/strict';
import { test } from 'node:test';

import { filterAllows, qualifiedName, splitQualifiedName } from '../../../workers/mcp/toolNames.js';

test('split_valid_prefix', () => {
  assert.deepEqual(splitQualifiedName('github__create_issue'), { upstream: 'github', tool: 'create_issue' });
});

test('split_takes_first_double_underscore', () => {
  assert.deepEqual(splitQualifiedName('upstream__tool__with__underscores'), { upstream: 'upstream', tool: 'tool__with__underscores' });
});

test('split_invalid_prefix_returns_err', () => {
  for (const bad of ['plain', '__tool', 'up__', '_single_']) assert.equal(splitQualifiedName(bad), null, bad);
});

test('qualifiedName joins with the separator', () => {
  assert.equal(qualifiedName('fs', 'read_file'), 'fs__read_file');
});

test('filter_no_filter_allows_all', () => {
  assert.equal(filterAllows(undefined, 'anything'), true);
});

test('filter_allow_exact_match and filter_allow_glob_prefix', () => {
  const filter = { mode: 'allow' as const, patterns: ['echo', 'read_*'] };
  assert.equal(filterAllows(filter, 'echo'), true);
  assert.equal(filterAllows(filter, 'echo2'), false);
  assert.equal(filterAllows(filter, 'read_file'), true);
  assert.equal(filterAllows(filter, 'write_file'), false);
});

test('filter_deny_blocks_match', () => {
  const filter = { mode: 'deny' as const, patterns: ['delete_*', 'rm'] };
  assert.equal(filterAllows(filter, 'delete_repo'), false);
  assert.equal(filterAllows(filter, 'rm'), false);
  assert.equal(filterAllows(filter, 'rmdir'), true);
});
