// A raw viewer forwards a batch of parser events as one `parsed` message per event, in order, all
// under one cork: an agent prints hundreds of events per MB, and a cork per event was a socket write
// per event. A stand-in socket and session service record where each cork begins and ends.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ParsedEvent } from '../../../shared/protocol/parsedEvents.js';
import type { SessionService } from '../../../supervisor/sessions/sessionService.js';
import { RawViewer } from '../../../supervisor/streaming/rawViewer.js';
import type { ViewerSocket } from '../../../supervisor/streaming/viewerSocket.js';

describe('raw viewer: parser events', () => {
  it('a batch of events leaves as one message each, in order, inside a single cork', async () => {
    const log: string[] = [];
    let depth = 0;
    let corks = 0;
    const ws = {
      cork: (fn: () => void) => {
        corks++;
        depth++;
        fn();
        depth--;
      },
      send: (data: string | Uint8Array, isBinary: boolean) => {
        if (!isBinary) log.push(`${depth > 0 ? 'corked' : 'uncorked'} ${String(data)}`);
        return 1;
      },
      getBufferedAmount: () => 0,
      end: () => undefined,
    } as unknown as ViewerSocket;
    let parsed: ((events: readonly ParsedEvent[]) => void) | undefined;
    const sessions = {
      onParsed: (_id: string, fn: (events: readonly ParsedEvent[]) => void) => {
        parsed = fn;
        return { dispose: () => (parsed = undefined) };
      },
      onOutput: () => ({ dispose: () => undefined }),
      // An empty session: the catch-up finds nothing to send.
      readRaw: async (_ref: string, at: number | undefined) => ({ start: at ?? 0, total_written: 0, bytes: Buffer.alloc(0) }),
      // A live session: no exit to send.
      resolve: () => undefined,
    } as unknown as SessionService;

    const viewer = new RawViewer(ws, sessions, 'session-1', undefined, true);
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    log.length = 0;
    corks = 0;

    const events: ParsedEvent[] = [
      { type: 'shell-state', state: 'busy' },
      { type: 'agent-block', action: 'end', line: 3 },
      { type: 'shell-state', state: 'idle' },
    ];
    assert.ok(parsed, 'the viewer listens for parser events');
    parsed(events);
    assert.equal(corks, 1, 'one cork for the batch');
    assert.deepEqual(
      log,
      events.map((event) => `corked ${JSON.stringify({ type: 'parsed', event })}`),
    );

    // Nothing for an empty batch, nothing once closed.
    parsed([]);
    assert.equal(corks, 1);
    viewer.dispose();
    assert.equal(parsed, undefined, 'dispose stops listening');
  });
});
