// A JSON-frame viewer that fell behind the ring: after the resync frame, text starts afresh. A UTF-8
// character cut by the gap is dropped, never completed with bytes from the other side of the gap.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { SessionService } from '../../../supervisor/sessions/sessionService.js';
import { RawViewer } from '../../../supervisor/streaming/rawViewer.js';
import type { ViewerSocket } from '../../../supervisor/streaming/viewerSocket.js';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

test('bytes after a resync gap are decoded on their own, not joined to a character cut before it', async () => {
  const frames: Array<{ type: string; data?: string }> = [];
  let buffered = 0;
  const ws = {
    cork: (fn: () => void) => fn(),
    send: (data: string | Uint8Array, isBinary: boolean) => {
      assert.equal(isBinary, false, 'a JSON-frame viewer');
      frames.push(JSON.parse(String(data)) as { type: string; data?: string });
      return 1;
    },
    getBufferedAmount: () => buffered,
  } as unknown as ViewerSocket;

  let live: ((offset: number, bytes: Uint8Array) => void) | undefined;
  // The ring as the viewer reads it: first everything ("hi" and the first two bytes of "€"), then,
  // after the viewer lagged, only what is left from offset 50: the last byte of some other "€", then "ok".
  const reads = [
    { start: 0, bytes: Buffer.from([0x68, 0x69, 0xe2, 0x82]), total_written: 4 },
    { start: 50, bytes: Buffer.from([0xac, 0x6f, 0x6b]), total_written: 53 },
  ];
  const sessions = {
    onParsed: () => ({ dispose: () => undefined }),
    onOutput: (_id: string, fn: (offset: number, bytes: Uint8Array) => void) => {
      live = fn;
      return { dispose: () => (live = undefined) };
    },
    readRaw: async () => reads.shift()!,
    resolve: () => undefined,
  } as unknown as SessionService;

  const viewer = new RawViewer(ws, sessions, 's1', undefined, false);
  try {
    await settle();
    assert.deepEqual(frames, [{ type: 'output', data: 'hi', total_written: 4 }]);
    // Live output beyond what the viewer has: it lags and will read the gap from the ring.
    buffered = 10 * 1024 * 1024;
    live!(60, Buffer.from('zz'));
    buffered = 0;
    viewer.onDrain();
    await settle();
    const after = frames.slice(1);
    assert.deepEqual(after[0], { type: 'resync', from: 4, to: 50, missed: 46 });
    const text = after
      .slice(1)
      .map((f) => f.data ?? '')
      .join('');
    assert.equal(text.includes('€'), false, `no character made of bytes from both sides of the gap: ${JSON.stringify(text)}`);
    assert.equal(text, '\ufffdok', 'the orphan continuation byte is shown as a replacement character, then the text');
  } finally {
    viewer.dispose();
  }
});
