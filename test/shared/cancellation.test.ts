import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';

import { CancelSource, cancellationOf } from '../../shared/cancellation.js';

describe('CancelSource', () => {
  test('calls each listener once with the reason; an unsubscribed one is not called', () => {
    const source = new CancelSource();
    const heard: string[] = [];
    source.onCancel((r) => heard.push(`a:${r.message}`));
    const off = source.onCancel((r) => heard.push(`b:${r.message}`));
    source.onCancel((r) => heard.push(`c:${r.message}`));
    off();
    off(); // twice is harmless
    assert.equal(source.cancelReason, undefined);
    const reason = new Error('stop');
    source.cancel(reason);
    source.cancel(new Error('again'));
    assert.deepEqual(heard, ['a:stop', 'c:stop']);
    assert.equal(source.cancelReason, reason);
  });

  test('a listener added after the cancel is never called: callers look at cancelReason first', () => {
    const source = new CancelSource();
    source.cancel(new Error('early'));
    let called = false;
    const off = source.onCancel(() => (called = true));
    off();
    assert.equal(called, false);
    assert.equal(source.cancelReason?.message, 'early');
  });

  test('builds its AbortSignal only when asked, aborted with the same reason before or after', () => {
    const before = new CancelSource();
    const signal = before.signal;
    assert.equal(signal.aborted, false);
    assert.equal(before.signal, signal, 'one signal per source');
    const reason = new Error('gone');
    before.cancel(reason);
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, reason);

    const after = new CancelSource();
    after.cancel(reason);
    assert.equal(after.signal.aborted, true);
    assert.equal(after.signal.reason, reason);
  });
});

describe('cancellationOf', () => {
  test('follows an AbortSignal and removes its listener when unsubscribed', () => {
    const controller = new AbortController();
    const cancellation = cancellationOf(controller.signal);
    const off = cancellation.onCancel(() => assert.fail('unsubscribed'));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    off();
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    let heard: Error | undefined;
    cancellation.onCancel((r) => (heard = r));
    const reason = new Error('caller left');
    controller.abort(reason);
    assert.equal(heard, reason);
    assert.equal(cancellation.cancelReason, reason);
  });

  test('an abort without an Error reason still gives an Error', () => {
    const controller = new AbortController();
    controller.abort('plain string');
    const reason = cancellationOf(controller.signal).cancelReason;
    assert.ok(reason instanceof Error);
    assert.match(reason.message, /plain string/);
  });
});
