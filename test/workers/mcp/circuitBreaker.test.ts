import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CircuitBreaker } from '../../../workers/mcp/circuitBreaker.js';

function clocked() {
  const clock = { t: 1_000 };
  return { clock, breaker: new CircuitBreaker({ now: () => clock.t }) };
}

test('cb_starts_closed', () => {
  const { breaker } = clocked();
  assert.equal(breaker.state, 'closed');
  assert.equal(breaker.allows(), true);
});

test('cb_opens_after_threshold with a 1 s backoff, then lets a trial through', () => {
  const { clock, breaker } = clocked();
  assert.equal(breaker.recordFailure(), 'closed');
  assert.equal(breaker.recordFailure(), 'closed');
  assert.equal(breaker.recordFailure(), 'open');
  assert.equal(breaker.allows(), false);
  assert.equal(breaker.remainingBackoffMs, 1_000);
  clock.t += 1_000;
  assert.equal(breaker.allows(), true);
});

test('cb_resets_failure_count_on_open and the backoff doubles per open, capped at 60 s', () => {
  const { clock, breaker } = clocked();
  const backoffs: number[] = [];
  for (let open = 1; open <= 8; open++) {
    for (let i = 0; i < 2; i++) assert.notEqual(breaker.recordFailure(), 'failed');
    assert.equal(breaker.consecutiveFailures, 2, 'two failures do not open it again');
    assert.equal(breaker.recordFailure(), 'open');
    assert.equal(breaker.consecutiveFailures, 0);
    backoffs.push(breaker.remainingBackoffMs);
    clock.t += 60_000;
  }
  assert.deepEqual(backoffs, [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
});

test('cb_exhausts_after_max_retries: the 11th open marks it failed', () => {
  const { breaker } = clocked();
  let state = 'closed';
  for (let open = 1; open <= 10; open++) for (let i = 0; i < 3; i++) state = breaker.recordFailure();
  assert.equal(state, 'open');
  assert.equal(breaker.retryCount, 10);
  for (let i = 0; i < 3; i++) state = breaker.recordFailure();
  assert.equal(state, 'failed');
  assert.equal(breaker.state, 'failed');
  assert.equal(breaker.allows(), false);
});

test('cb_resets_on_success', () => {
  const { breaker } = clocked();
  for (let i = 0; i < 3; i++) breaker.recordFailure();
  breaker.recordSuccess();
  assert.equal(breaker.state, 'closed');
  assert.equal(breaker.retryCount, 0);
  assert.equal(breaker.allows(), true);
  assert.equal(breaker.recordFailure(), 'closed', 'a fresh count after success');
});
