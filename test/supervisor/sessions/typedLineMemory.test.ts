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
 * The issue asks that the supervisor stay within 50 MB of where it started after 40 MB typed. From a
 * cold start, the first burst of megabyte requests grows V8's young generation to its cap and
 * malloc's heap, whatever the requests carry (Node 24: new space 16 → 64 MB and [heap] +15 MB,
 * read from v8.getHeapSpaceStatistics and smaps); that memory is reused afterwards, not returned.
 * So each path types 80 MB to reach that plateau and measures the next 80 MB against it: a
 * tracker that keeps the typed line (the bug: 425 MB over REST, over 1 GB over a WebSocket, per
 * 40 MB) grows by at least what was typed; a bounded one stays within 50 MB.
 */
const MAX_GROWTH_MB = 50;
// The supervisor's after-create collection (shared/idleGc.ts) runs at its first quiet moment, which
// here is the plateau's sampling: it shrinks the young generation, and on Node 24 the ~128 MB that
// grows back after the plateau failed the bound. This test is about what input keeps, so the tuicds
// it starts (they inherit this environment) run without that collection.
process.env['TUIC_IDLE_GC'] = '0';
const CHUNK = 1_900_000;
const CHUNKS = 21; // ~40 MB, the figure

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
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

/**
 * One tuicd per input path: memory freed by an earlier test would otherwise be slack that a later
 * test's leak fills without raising RSS.
 */
for (const path of ['REST', 'a WebSocket viewer'] as const) {
  describe(`typing without Enter, over ${path}`, { timeout: 180_000 }, () => {
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

    /** `round` types ~40 MB: twice to reach the plateau, twice measured against it. */
    async function measure(t: { diagnostic(msg: string): void }, round: () => Promise<void>): Promise<void> {
      const pid = suite.t.child.pid!;
      const cold = rssMb(pid);
      // Node 24 takes more than 40 MB to reach it (its new space alone grows to 128 MB).
      await round();
      await round();
      const plateau = await settledRssMb(pid);
      // 80 MB measured. RSS cannot see a compact leak well (a planted one that kept 1 byte per byte
      // typed grew it 37-49 MB: the plateau's free memory absorbs it); the tracker's cap itself is
      // unit-tested in inputLineBuffer.test.ts. The bug kept 8+ bytes per byte typed.
      await round();
      await round();
      const after = await settledRssMb(pid);
      t.diagnostic(`supervisor RSS ${cold.toFixed(1)} → ${plateau.toFixed(1)} MB after the first 80 MB, → ${after.toFixed(1)} MB after 80 MB more`);
      assert.ok(after - plateau < MAX_GROWTH_MB, `grew ${(after - plateau).toFixed(1)} MB over 80 MB typed after the plateau`);
    }

    it(`keeps the supervisor within ${MAX_GROWTH_MB} MB over 80 MB typed over ${path}`, async (t) => {
      const id = await sink();
      if (path === 'REST') {
        const text = 'y'.repeat(CHUNK);
        await measure(t, async () => {
          for (let i = 0; i < CHUNKS; i++) await typeWhenTaken(id, text);
        });
        return;
      }
      const viewer = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${id}/stream`));
      try {
        const frame = Buffer.alloc(CHUNK, 0x7a);
        await measure(t, async () => {
          for (let i = 0; i < CHUNKS; i++) {
            await new Promise<void>((resolve, reject) => viewer.ws.send(frame, (err) => (err ? reject(err) : resolve())));
            // Typed input is written in order: a REST write taken after the frame means the frame was
            // taken too, and leaves room for the next one (the viewer is never refused and closed).
            await typeWhenTaken(id, 'z');
          }
        });
        assert.equal(viewer.closed, false);
      } finally {
        viewer.close();
      }
    });
  });
}
