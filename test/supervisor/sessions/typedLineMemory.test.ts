/**
 * Typing without Enter must not grow the supervisor: the composer tracks the line typed since the
 * last Enter (for submit's bookkeeping), and 40 MB of it used to take tuicd from ~108 MB to ~805 MB
 * RSS, still held after the session was deleted. Both input paths: REST writes and a WebSocket viewer.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

/**
 * The issue asks for 50 MB. What these requests leave behind is mostly external memory (request
 * bodies, the bytes copied out of each WebSocket frame, channel frames), which V8 collects only
 * once about 64 MB of it piled up since the last collection: right after 40 MB typed the supervisor
 * sits 40–65 MB up on a quiet machine with nothing retained, and the same after 80 MB. 80 MB
 * bounds that; the unbounded tracker this guards against held 425 MB (REST) and over 1 GB (WebSocket).
 */
const MAX_GROWTH_MB = 80;
const CHUNK = 1_900_000;
const CHUNKS = 21; // ~40 MB, the figure

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) / 1024;
}

/**
 * RSS once the request garbage is collected: the lowest of a few samples over 3 s. What the
 * supervisor keeps stays in every sample; the 1.9 MB request buffers it already dropped go back to
 * the system at the next collection, whenever the collector gets to it on a loaded machine.
 */
async function settledRssMb(pid: number): Promise<number> {
  let low = rssMb(pid);
  for (let i = 0; i < 15; i++) {
    await new Promise((r) => setTimeout(r, 200));
    low = Math.min(low, rssMb(pid));
  }
  return low;
}

describe('typing without Enter', { timeout: 180_000 }, () => {
  const suite = sessionSuite('tuicd-typed-');

  /** A session whose `cat` swallows everything typed, without echo or line discipline. */
  async function sink(): Promise<string> {
    const s = await suite.create();
    await suite.write(s.session_id, 'stty -echo -icanon; exec cat > /dev/null\n');
    await new Promise((r) => setTimeout(r, 300));
    return s.session_id;
  }

  /**
   * A write the program has room for: `cat` reads as fast as the PTY lets it, but a client can type
   * faster, and past 8 MiB unread the host refuses (429) until it caught up.
   */
  async function typeWhenTaken(id: string, text: string): Promise<void> {
    for (;;) {
      const r = await suite.write(id, text);
      if (r.status !== 429) return assert.equal(r.status, 200, r.text);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it(`keeps the supervisor within ${MAX_GROWTH_MB} MB after ~40 MB typed over REST`, async (t) => {
    const id = await sink();
    const pid = suite.t.child.pid!;
    const before = rssMb(pid);
    const text = 'y'.repeat(CHUNK);
    for (let i = 0; i < CHUNKS; i++) await typeWhenTaken(id, text);
    const after = await settledRssMb(pid);
    t.diagnostic(`supervisor RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB`);
    assert.ok(after - before < MAX_GROWTH_MB, `grew ${(after - before).toFixed(1)} MB`);
  });

  it(`keeps the supervisor within ${MAX_GROWTH_MB} MB after ~40 MB typed over a WebSocket viewer`, async (t) => {
    const id = await sink();
    const pid = suite.t.child.pid!;
    const viewer = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${id}/stream`));
    try {
      const before = rssMb(pid);
      const frame = Buffer.alloc(CHUNK, 0x7a);
      for (let i = 0; i < CHUNKS; i++) {
        await new Promise<void>((resolve, reject) => viewer.ws.send(frame, (err) => (err ? reject(err) : resolve())));
        // Typed input is written in order: a REST write taken after the frame means the frame was
        // taken too, and leaves room for the next one (the viewer is never refused and closed).
        await typeWhenTaken(id, 'z');
      }
      assert.equal(viewer.closed, false);
      const after = await settledRssMb(pid);
      t.diagnostic(`supervisor RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB`);
      assert.ok(after - before < MAX_GROWTH_MB, `grew ${(after - before).toFixed(1)} MB`);
    } finally {
      viewer.close();
    }
  });
});
