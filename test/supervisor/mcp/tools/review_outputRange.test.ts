// session action=output from_line: a range is the log lines it names. The unfinished last line (the
// prompt) belongs after the last log line only, so a page from the middle must not end with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { call, idleShell, startHarness } from './sessionHarness.js';
import type { Harness } from './sessionHarness.js';

describe('session output from_line ranges', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  it('a page from the middle of the log holds only its lines; a page that reaches the end adds the unfinished prompt', async () => {
    const id = await idleShell(h);
    const r = await call(h.session, { action: 'submit', session_id: id, input: 'seq 1 40' });
    assert.equal(r.submitted, true, JSON.stringify(r));
    assert.equal((await call(h.session, { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 })).met, true);

    // Log line 0 is the command line; 1..40 are the numbers.
    const page = await call(h.session, { action: 'output', session_id: id, from_line: 1, limit: 3 });
    assert.equal(page.data, '1\n2\n3', 'lines 1-3 and nothing after them');
    assert.equal(page.cursor, 4);

    const end = await call(h.session, { action: 'output', session_id: id, from_line: 39, limit: 50 });
    const rows = end.data.split('\n');
    assert.deepEqual(rows.slice(0, 2), ['39', '40']);
    assert.match(rows.at(-1) ?? '', /[#$]\s*$/, 'the range reaching the end shows the prompt line');
    assert.equal(rows.length, 3);
  });
});
