/** The ACP journal's bounds and its resume arithmetic: exact after any cursor it covers, a gap before. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { AcpJournal } from '../../../supervisor/acp/acpJournal.js';

const fill = (j: AcpJournal, n: number, text = (seq: number) => `f${seq}`) => {
  for (let i = 0; i < n; i++) j.append(text);
};

describe('ACP journal', () => {
  it('numbers frames from 1 and resumes after any cursor it covers, exactly', () => {
    const j = new AcpJournal({ maxFrames: 100, maxChars: 1_000_000 });
    assert.equal(j.lastSeq, 0);
    assert.ok(j.covers(0));
    assert.deepEqual(j.after(0), []);
    fill(j, 10);
    assert.deepEqual(
      j.after(0).map((e) => e.seq),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    assert.deepEqual(
      j.after(7).map((e) => e.text),
      ['f8', 'f9', 'f10'],
    );
    assert.deepEqual(
      j.after(3, 2).map((e) => e.seq),
      [4, 5],
    );
    assert.ok(!j.covers(11), 'a cursor past the end');
  });

  it('drops the oldest frames past its count or its size; a cursor before them is a gap', () => {
    const j = new AcpJournal({ maxFrames: 5, maxChars: 1_000_000 });
    fill(j, 12);
    assert.equal(j.firstSeq, 8);
    assert.equal(j.size.frames, 5);
    assert.ok(j.covers(7));
    assert.ok(!j.covers(6));
    assert.deepEqual(
      j.after(7).map((e) => e.seq),
      [8, 9, 10, 11, 12],
    );
    const small = new AcpJournal({ maxFrames: 1000, maxChars: 100 });
    fill(small, 10_000, (seq) => `frame-${String(seq).padStart(5, '0')}`);
    assert.ok(small.size.chars <= 100, `${small.size.chars} chars held`);
    assert.equal(small.lastSeq, 10_000);
    assert.deepEqual(
      small.after(small.firstSeq - 1).map((e) => e.seq),
      Array.from({ length: small.size.frames }, (_, i) => small.firstSeq + i),
    );
    // One frame over the budget is still kept: the newest frame is never dropped.
    const tiny = new AcpJournal({ maxFrames: 10, maxChars: 3 });
    tiny.append(() => 'a long frame');
    assert.equal(tiny.size.frames, 1);
  });
});
