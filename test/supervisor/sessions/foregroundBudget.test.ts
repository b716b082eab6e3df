/**
 * Agent detection's foreground reads have a budget over all sessions (issue 29, 500 busy sessions):
 * one printing session looks once a second, but with hundreds printing each looks less often, so
 * the supervisor makes about FOREGROUND_CHECKS_PER_S stat reads a second in all, not one per session.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { foregroundRecheckMs } from '../../../supervisor/sessions/sessionService.js';

test('a session looks at its foreground once a second until all of them together would pass the budget', () => {
  assert.equal(foregroundRecheckMs(0), 1_000);
  assert.equal(foregroundRecheckMs(1), 1_000);
  assert.equal(foregroundRecheckMs(100), 1_000);
  assert.equal(foregroundRecheckMs(500), 5_000);
  for (const live of [1, 50, 100, 101, 250, 500, 1_000]) {
    const perSecond = (live * 1_000) / foregroundRecheckMs(live);
    assert.ok(perSecond <= 100, `${live} sessions: ${perSecond} reads a second`);
  }
});
