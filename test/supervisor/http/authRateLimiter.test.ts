import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthRateLimiter, type RateLimitSettings } from '../../../supervisor/http/authRateLimiter.js';

function make(settings: RateLimitSettings = { maxFailures: 5, windowSecs: 60 }) {
  const clock = { t: 1_000_000 };
  const current = { ...settings };
  const limiter = new AuthRateLimiter(
    () => current,
    () => clock.t,
  );
  return { limiter, clock, settings: current };
}

describe('AuthRateLimiter', () => {
  it('lets an IP try until it reaches maxFailures inside the window', () => {
    const { limiter, clock } = make();
    for (let i = 0; i < 4; i++) {
      limiter.recordFailure('1.2.3.4');
      clock.t += 1000;
      assert.equal(limiter.retryAfterSecs('1.2.3.4'), 0, `after ${i + 1} failures`);
    }
    limiter.recordFailure('1.2.3.4');
    assert.ok(limiter.retryAfterSecs('1.2.3.4') > 0);
    assert.equal(limiter.retryAfterSecs('5.6.7.8'), 0, 'other IPs are not affected');
  });

  it('answers the seconds left until the oldest counted failure expires, plus one', () => {
    const { limiter, clock } = make();
    const start = clock.t;
    for (let i = 0; i < 5; i++) {
      clock.t = start + i * 1000;
      limiter.recordFailure('ip');
    }
    // The oldest failure (at `start`) expires at start + 60 s.
    clock.t = start + 10_500;
    assert.equal(limiter.retryAfterSecs('ip'), 50); // floor(49.5) + 1
    clock.t = start + 59_000;
    assert.equal(limiter.retryAfterSecs('ip'), 2); // 1 s left + 1
    clock.t = start + 59_999;
    assert.equal(limiter.retryAfterSecs('ip'), 1);
  });

  it('slides the window: once the oldest failure expires the IP may try again', () => {
    const { limiter, clock } = make();
    const start = clock.t;
    for (let i = 0; i < 5; i++) {
      clock.t = start + i * 10_000;
      limiter.recordFailure('ip');
    }
    clock.t = start + 60_000; // the failure at `start` is out, four remain
    assert.equal(limiter.retryAfterSecs('ip'), 0);
    limiter.recordFailure('ip'); // five live again; the oldest is now at start + 10 s
    assert.equal(limiter.retryAfterSecs('ip'), 11); // 10 s left + 1
    clock.t = start + 10_000 + 60_000;
    assert.equal(limiter.retryAfterSecs('ip'), 0);
  });

  it('forgets every failure after a full quiet window', () => {
    const { limiter, clock } = make({ maxFailures: 2, windowSecs: 5 });
    limiter.recordFailure('ip');
    clock.t += 5_001;
    limiter.recordFailure('ip');
    assert.equal(limiter.retryAfterSecs('ip'), 0, 'the first failure no longer counts');
  });

  it('reads the settings on every call', () => {
    const { limiter, settings } = make({ maxFailures: 5, windowSecs: 60 });
    for (let i = 0; i < 3; i++) limiter.recordFailure('ip');
    assert.equal(limiter.retryAfterSecs('ip'), 0);
    settings.maxFailures = 3;
    assert.ok(limiter.retryAfterSecs('ip') > 0);
  });

  it('is disabled by maxFailures 0', () => {
    const { limiter } = make({ maxFailures: 0, windowSecs: 60 });
    for (let i = 0; i < 50; i++) limiter.recordFailure('ip');
    assert.equal(limiter.retryAfterSecs('ip'), 0);
  });

  it('clear() forgets one IP only', () => {
    const { limiter } = make({ maxFailures: 1, windowSecs: 60 });
    limiter.recordFailure('a');
    limiter.recordFailure('b');
    assert.ok(limiter.retryAfterSecs('a') > 0);
    limiter.clear('a');
    assert.equal(limiter.retryAfterSecs('a'), 0);
    assert.ok(limiter.retryAfterSecs('b') > 0);
  });

  it('bounds the tracked IPs at 10 000, dropping the earliest', () => {
    const { limiter } = make({ maxFailures: 1, windowSecs: 3600 });
    for (let i = 0; i < 10_000; i++) limiter.recordFailure(`ip-${i}`);
    assert.ok(limiter.retryAfterSecs('ip-0') > 0, 'still tracked at the bound');
    limiter.recordFailure('ip-new');
    assert.equal(limiter.retryAfterSecs('ip-0'), 0, 'the earliest IP was evicted');
    assert.ok(limiter.retryAfterSecs('ip-1') > 0);
    assert.ok(limiter.retryAfterSecs('ip-new') > 0);
    const size = (limiter as unknown as { failures: Map<string, unknown> }).failures.size;
    assert.equal(size, 10_000);
  });
});
