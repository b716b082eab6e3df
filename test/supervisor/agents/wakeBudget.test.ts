/** The orchestrator wake's budget, its rules one by one. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { WakeBudget, WakeConstants } from '../../../supervisor/agents/wakeBudget.js';

describe('orchestrator wake budget', () => {
  it('a pending wake covers later mail; an acknowledged one records what it announced', () => {
    const b = new WakeBudget();
    assert.equal(b.canWake(0), true);
    b.pending = true;
    assert.equal(b.canWake(0), false, 'one pending wake at a time');
    b.settle('acknowledged', 42, 0);
    assert.equal(b.canWake(0), true);
    assert.equal(b.announcedThrough, 42);
  });

  it('an uncertain wake expires after 5 s and may be retried once; a second exhausts the group until a read', () => {
    const b = new WakeBudget();
    b.pending = true;
    b.settle('uncertain', 1, 1_000);
    assert.equal(b.canWake(1_000 + WakeConstants.UNCERTAIN_EXPIRY_MS - 1), false, 'still outstanding');
    assert.equal(b.canWake(1_000 + WakeConstants.UNCERTAIN_EXPIRY_MS), true, 'the one retry');
    b.pending = true;
    b.settle('uncertain', 1, 7_000);
    assert.equal(b.exhausted, true);
    b.rearm();
    assert.equal(b.canWake(60_000), false, 'a busy→idle edge does not restore an exhausted group');
    b.acknowledge();
    assert.equal(b.canWake(60_000), true, 'an inbox or wait read does');
  });

  it('a wake refused before its first byte is not retried in that lifecycle; the next busy→idle edge re-arms it', () => {
    const b = new WakeBudget();
    b.pending = true;
    b.settle('not_started', 5, 0);
    assert.equal(b.canWake(10_000), false);
    assert.equal(b.announcedThrough, 0, 'nothing was announced');
    b.rearm();
    assert.equal(b.canWake(10_000), true);
  });
});
