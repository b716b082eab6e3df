/** Coalescer: the first chunk after quiet leaves at once, the rest in window- or size-bounded batches, contiguous. */

import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';

import { Coalescer } from '../../../workers/pty/coalescer.js';

const WINDOW_MS = 4;

function setup(t: TestContext, maxBatchBytes = 1024) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const sent: Array<{ text: string; offset: number }> = [];
  const coalescer = new Coalescer({
    windowMs: WINDOW_MS,
    maxBatchBytes,
    onFlush: (bytes, offset) => sent.push({ text: Buffer.from(bytes).toString(), offset }),
  });
  let offset = 0;
  const push = (text: string): void => {
    coalescer.push(Buffer.from(text), offset);
    offset += text.length;
  };
  return { coalescer, sent, push };
}

describe('Coalescer', () => {
  test('only the chunk that ends a quiet window is marked first (it leaves the host without waiting for the tick)', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const marks: Array<[string, boolean]> = [];
    const coalescer = new Coalescer({
      windowMs: WINDOW_MS,
      maxBatchBytes: 4,
      onFlush: (bytes, _offset, first) => marks.push([Buffer.from(bytes).toString(), first]),
    });
    coalescer.push(Buffer.from('a'), 0);
    coalescer.push(Buffer.from('bcde'), 1); // reaches maxBatchBytes: sent now, as a batch
    coalescer.push(Buffer.from('f'), 5);
    t.mock.timers.tick(WINDOW_MS); // the window ends with 'f' held
    t.mock.timers.tick(WINDOW_MS); // a quiet window: idle again
    coalescer.push(Buffer.from('g'), 6);
    coalescer.flush();
    assert.deepEqual(marks, [
      ['a', true],
      ['bcde', false],
      ['f', false],
      ['g', true],
    ]);
  });

  test('the first chunk after quiet is sent synchronously; the next ones wait for the window', (t) => {
    const { sent, push } = setup(t);
    push('a');
    assert.deepEqual(sent, [{ text: 'a', offset: 0 }]);
    push('bc');
    push('def');
    assert.equal(sent.length, 1);
    t.mock.timers.tick(WINDOW_MS);
    assert.deepEqual(sent[1], { text: 'bcdef', offset: 1 });
  });

  test('a quiet window ends the burst: the next chunk goes at once again', (t) => {
    const { sent, push } = setup(t);
    push('a');
    t.mock.timers.tick(WINDOW_MS); // window ends with nothing held: idle
    push('b');
    assert.deepEqual(sent, [
      { text: 'a', offset: 0 },
      { text: 'b', offset: 1 },
    ]);
  });

  test('during a flood every window sends one batch, in order, without gaps', (t) => {
    const { sent, push } = setup(t);
    let expected = '';
    for (let i = 0; i < 50; i++) {
      const text = `chunk${i};`;
      push(text);
      expected += text;
      if (i % 5 === 4) t.mock.timers.tick(WINDOW_MS);
    }
    t.mock.timers.tick(WINDOW_MS);
    assert.equal(sent.map((s) => s.text).join(''), expected);
    let offset = 0;
    for (const s of sent) {
      assert.equal(s.offset, offset);
      offset += s.text.length;
    }
    assert.ok(sent.length <= 12, `${sent.length} batches`);
  });

  test('a batch that reaches maxBatchBytes leaves before the window ends', (t) => {
    const { sent, push } = setup(t, 8);
    push('x');
    push('12345');
    push('6789');
    assert.deepEqual(sent[1], { text: '123456789', offset: 1 });
    push('z');
    t.mock.timers.tick(WINDOW_MS);
    assert.deepEqual(sent[2], { text: 'z', offset: 10 });
  });

  test('flush() sends what is held now; dispose() drops it and ignores later chunks', (t) => {
    const { coalescer, sent, push } = setup(t);
    push('a');
    push('b');
    coalescer.flush();
    assert.deepEqual(sent[1], { text: 'b', offset: 1 });
    push('c');
    coalescer.dispose();
    push('d');
    t.mock.timers.tick(WINDOW_MS * 3);
    assert.equal(sent.length, 2);
  });

  test('a lone chunk (an echo) arms no timer: the host is not woken at the end of its window', () => {
    // Real timers: the active resources show whether one is pending.
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const sent: string[] = [];
    const coalescer = new Coalescer({ windowMs: 1_000, maxBatchBytes: 1024, onFlush: (bytes) => sent.push(Buffer.from(bytes).toString()) });
    try {
      const before = timers();
      coalescer.push(Buffer.from('x'), 0);
      assert.deepEqual(sent, ['x']);
      assert.equal(timers(), before, 'no timer for the window after a lone chunk');
      coalescer.push(Buffer.from('y'), 1);
      assert.deepEqual(sent, ['x'], 'a chunk inside the window waits for its end');
      assert.equal(timers(), before + 1, 'and that chunk armed the timer');
    } finally {
      coalescer.dispose();
    }
  });

  test('a chunk inside the window of the last send waits only for the rest of that window', (t) => {
    const { sent, push } = setup(t);
    push('a');
    t.mock.timers.tick(WINDOW_MS - 1);
    push('b');
    assert.equal(sent.length, 1);
    t.mock.timers.tick(1);
    assert.deepEqual(sent[1], { text: 'b', offset: 1 });
  });

  test('a wall clock set back never holds output for longer than a window', (t) => {
    const { sent, push } = setup(t);
    t.mock.timers.setTime(3_600_000);
    push('a');
    t.mock.timers.setTime(0); // an hour back: the open window now seems to end an hour from now
    push('b');
    assert.deepEqual(
      sent.map((s) => s.text),
      ['a', 'b'],
      'sent at once, as after a quiet window',
    );
  });

  test('empty chunks are ignored', (t) => {
    const { coalescer, sent } = setup(t);
    coalescer.push(new Uint8Array(0), 0);
    assert.equal(sent.length, 0);
  });
});
