/**
 * The supervisor keeps a digest of each record the pty host holds, not its JSON: the same record
 * gives the same digest, and any one-field change (one character, a swap, a longer value) another.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { textDigest } from '../../../supervisor/sessions/sessionService.js';

describe('record digest', () => {
  it('is stable for the same text and differs for every small change of a record', () => {
    const record = JSON.stringify({ session_id: 'a1b2', alias: 'tmp-1', display_name: 'sh', turn_epoch: 3, visible: false });
    assert.equal(textDigest(record), textDigest(`${record}`));
    const variants = new Set<number>([textDigest(record)]);
    const changes = [
      record.replace('"sh"', '"zsh"'),
      record.replace('3', '4'),
      record.replace('false', 'true '),
      record.replace('tmp-1', 'tmp-2'),
      record.replace('a1b2', 'b1a2'),
      record.replace('a1b2', 'a1b2\u00e9'),
      '',
      record.slice(1),
    ];
    for (const changed of changes) variants.add(textDigest(changed));
    assert.equal(variants.size, changes.length + 1, 'every change has its own digest');
    for (const v of variants) assert.ok(Number.isSafeInteger(v) && v >= 0, `a safe integer: ${v}`);
  });
});
