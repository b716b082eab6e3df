/**
 * A viewer whose session closed gets the `closed` frame and then a clean close of its socket
 * (1000, reason in the close frame): it used to stay open with nothing more to come. Raw and log
 * viewers, on a session that ends while watched and on one that had already ended.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

function closeOf(v: WsViewer): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => v.ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString('utf8') })));
}

describe('viewers of a closed session', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-vclose-');

  for (const format of ['raw', 'log'] as const) {
    it(`${format}: the closed frame, then close code 1000 with the reason`, async () => {
      const s = await suite.create();
      const viewer = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${s.session_id}/stream?format=${format}`));
      const closed = closeOf(viewer);
      await suite.write(s.session_id, 'echo bye; exit 3\n');
      const { code, reason } = await closed;
      assert.equal(code, 1000);
      assert.match(reason, /^session closed: /);
      const last = viewer.frames.at(-1);
      assert.equal(last?.type, 'closed', 'the closed frame is the last one, before the close');
      assert.equal(last?.['session_id'], s.session_id);

      // A viewer that arrives after the end gets what is left, the closed frame, and the close.
      const late = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${s.session_id}/stream?format=${format}`));
      const lateClose = await closeOf(late);
      assert.equal(lateClose.code, 1000);
      assert.equal(late.frames.at(-1)?.type, 'closed');
      if (format === 'raw') assert.match(late.text(), /bye/);
    });
  }
});
