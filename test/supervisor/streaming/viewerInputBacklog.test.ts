/**
 * A client typing into a program that never reads its terminal: past the pty host's input backlog
 * (PtyConstants.INPUT_BACKLOG_BYTES) the viewer that typed is closed with 1013 and a reason, REST
 * writes answer 429 with Retry-After, and the session and its other viewers carry on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

const MiB = 1024 * 1024;

function closeOf(v: WsViewer): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => v.ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString('utf8') })));
}

describe('input a program does not read', { timeout: 90_000 }, () => {
  const suite = sessionSuite('tuicd-backlog-');

  it('closes the viewer that typed past the backlog (1013), answers REST writes 429, and keeps the session and other viewers', async () => {
    const s = await suite.create();
    await suite.write(s.session_id, 'stty raw -echo; echo deaf-now; exec sleep 120\n');
    const url = WsViewer.socketUrl(suite.t.socketPath, `/sessions/${s.session_id}/stream`);
    const watcher = await WsViewer.open(url);
    await watcher.waitFor(() => watcher.text().includes('deaf-now'), 10_000, 'the program to stop reading');

    const typist = await WsViewer.open(url);
    const closed = closeOf(typist);
    const frames = Math.ceil(PtyConstants.INPUT_BACKLOG_BYTES / MiB) + 4;
    for (let i = 0; i < frames && !typist.closed; i++) typist.ws.send(Buffer.alloc(MiB, 0x61));
    const { code, reason } = await closed;
    assert.equal(code, 1013);
    assert.match(reason, /^input refused: the program has not read 8 MiB of earlier input$/);

    const write = await suite.write(s.session_id, 'more');
    assert.equal(write.status, 429, write.text);
    assert.equal(write.headers['retry-after'], '1');
    assert.match(write.json().error, /bytes of input its program has not read yet \(limit 8388608\); the write was refused/);

    assert.equal(watcher.closed, false, 'a viewer that did not type stays');
    const listed = (await suite.t.socket('GET', '/sessions')).json().find((r: { session_id: string }) => r.session_id === s.session_id);
    assert.ok(listed, 'the session is still listed');
    assert.equal(listed.exit, undefined, 'the session still runs');
    watcher.ws.close();
  });
});
