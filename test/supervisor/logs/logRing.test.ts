// The /logs ring on its own: capacity, wrap-around order, filters before the limit, folding, clear.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LOG_RING_CAPACITY } from '../../../supervisor/logs/logEntry.js';
import { LogRing } from '../../../supervisor/logs/logRing.js';

const info = (message: string) => ({ level: 'info' as const, source: 'app' as const, message });

describe('LogRing', () => {
  it('holds 1000 entries by default', () => {
    assert.equal(LOG_RING_CAPACITY, 1000);
    assert.equal(new LogRing().capacity, 1000);
  });

  it('drops the oldest entries once full, keeping arrival order across the wrap', () => {
    const ring = new LogRing(3);
    for (let i = 0; i < 8; i++) ring.push(info(`m${i}`));
    assert.equal(ring.size, 3);
    assert.deepEqual(
      ring.list({ limit: 0 }).map((e) => [e.id, e.message]),
      [
        [6, 'm5'],
        [7, 'm6'],
        [8, 'm7'],
      ],
    );
  });

  it('applies level and source before the limit, and the limit keeps the newest matches', () => {
    const ring = new LogRing(5);
    ring.push({ level: 'error', source: 'git', message: 'e1' });
    ring.push({ level: 'info', source: 'git', message: 'i1' });
    ring.push({ level: 'error', source: 'network', message: 'e2' });
    ring.push({ level: 'error', source: 'git', message: 'e3' });
    ring.push({ level: 'info', source: 'app', message: 'i2' });
    ring.push({ level: 'info', source: 'app', message: 'i3' }); // wraps: e1 is gone
    assert.deepEqual(
      ring.list({ limit: 0, level: 'error' }).map((e) => e.message),
      ['e2', 'e3'],
    );
    assert.deepEqual(
      ring.list({ limit: 1, level: 'error' }).map((e) => e.message),
      ['e3'],
    );
    assert.deepEqual(
      ring.list({ limit: 0, level: 'error', source: 'git' }).map((e) => e.message),
      ['e3'],
    );
    assert.deepEqual(
      ring.list({ limit: 2 }).map((e) => e.message),
      ['i2', 'i3'],
    );
    assert.deepEqual(
      ring.list({ limit: 99 }).map((e) => e.message),
      ['i1', 'e2', 'e3', 'i2', 'i3'],
    );
  });

  it('folds an entry identical to the newest one into it, and only then', () => {
    let now = 1000;
    const ring = new LogRing(10, () => now);
    ring.push({ level: 'warn', source: 'github', message: 'poll failed', data_json: '{"n":1}' });
    now = 2000;
    const folded = ring.push({ level: 'warn', source: 'github', message: 'poll failed', data_json: '{"n":1}' });
    assert.equal(folded.id, 1);
    assert.equal(folded.repeat_count, 1);
    assert.equal(folded.timestamp_ms, 2000);
    ring.push({ level: 'warn', source: 'github', message: 'poll failed', data_json: '{"n":2}' }); // other data: new entry
    ring.push({ level: 'error', source: 'github', message: 'poll failed', data_json: '{"n":2}' }); // other level: new entry
    const list = ring.list({ limit: 0 });
    assert.deepEqual(
      list.map((e) => [e.id, e.repeat_count]),
      [
        [1, 1],
        [2, undefined],
        [3, undefined],
      ],
    );
  });

  it('hands out copies: changing a returned entry does not change the ring', () => {
    const ring = new LogRing(2);
    ring.push(info('kept')).message = 'changed';
    ring.list({ limit: 0 })[0]!.message = 'changed too';
    assert.equal(ring.list({ limit: 0 })[0]!.message, 'kept');
  });

  it('clear empties the ring, reports the count, and ids keep counting', () => {
    const ring = new LogRing(3);
    for (let i = 0; i < 5; i++) ring.push(info(`m${i}`));
    assert.equal(ring.clear(), 3);
    assert.deepEqual(ring.list({ limit: 0 }), []);
    assert.equal(ring.push(info('after')).id, 6);
    assert.deepEqual(
      ring.list({ limit: 0 }).map((e) => e.message),
      ['after'],
    );
  });
});
