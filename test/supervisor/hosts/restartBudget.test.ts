/** The sliding restart window the pty host and the hub host share. */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RestartBudget } from '../../../supervisor/hosts/restartBudget.js';

test('allows `budget` starts per window, then says how long until the oldest leaves it', () => {
  const budget = new RestartBudget(3, 1_000);
  assert.equal(budget.take(0), null);
  assert.equal(budget.take(100), null);
  assert.equal(budget.take(200), null);
  assert.equal(budget.used, 3);
  assert.equal(budget.take(300), 700, 'the start at 0 leaves the window at 1000');
  assert.equal(budget.used, 3, 'a refused start is not recorded');
  assert.equal(budget.take(999), 1);
  assert.equal(budget.take(1_000), null, 'the start at 0 has left');
  assert.equal(budget.take(1_050), 50, 'next to leave: the start at 100');
  assert.equal(budget.take(2_300), null);
  assert.equal(budget.used, 1, 'only the start at 2300 is inside (1300, 2300]');
});
