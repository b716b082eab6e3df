// Quoting client input in /mcp error messages: at most 200 characters of it, then how much was left out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { clipClientInput, MAX_QUOTED_CHARS, quoteClientInput } from '../../shared/quoteClientInput.js';

describe('quoteClientInput / clipClientInput', () => {
  it('quotes short input whole, as JSON text', () => {
    assert.equal(MAX_QUOTED_CHARS, 200);
    assert.equal(quoteClientInput('banana'), '"banana"');
    assert.equal(quoteClientInput('a"b\n'), '"a\\"b\\n"');
    assert.equal(quoteClientInput({ x: 1 }), '"{\\"x\\":1}"');
    assert.equal(clipClientInput('tools/list'), 'tools/list');
    assert.equal(quoteClientInput('x'.repeat(200)), JSON.stringify('x'.repeat(200)));
  });

  it('cuts long input to 200 characters with an ellipsis and the omitted length', () => {
    assert.equal(quoteClientInput('y'.repeat(1_000_000)), `${JSON.stringify('y'.repeat(200))}… (999800 more characters)`);
    assert.equal(clipClientInput('z'.repeat(201)), `${'z'.repeat(200)}… (1 more characters)`);
    assert.equal(quoteClientInput('abcdef', 3), '"abc"… (3 more characters)');
  });

  it('never splits a surrogate pair', () => {
    const text = 'a'.repeat(199) + '😀' + 'b';
    const clipped = clipClientInput(text);
    assert.equal(clipped, `${'a'.repeat(199)}… (3 more characters)`);
    assert.ok(Buffer.from(quoteClientInput(text), 'utf8').toString('utf8').includes('a'));
    assert.equal(quoteClientInput(text).includes('\ufffd'), false);
  });
});
