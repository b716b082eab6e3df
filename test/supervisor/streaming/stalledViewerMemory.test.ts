/**
 * A viewer that stops reading costs the supervisor a bounded amount of memory on either HTTP
 * engine: 128 MB of output flow past it while its socket is full, the supervisor's RSS stays near
 * where it was, and once it reads again it gets a resync and the output from there.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

const FLOOD_MB = 128;
/**
 * The supervisor's RSS levels off well below the flood: about 35 MB up on Node 20 (either engine),
 * 50–66 MB on Node 24 with the node engine (its heap's young generation grows larger before the
 * collector runs; measured on the commit before this bound was raised too, so not a leak). A
 * viewer that kept what it cannot send would hold the whole 128 MB flood and more.
 */
const MAX_GROWTH_MB = 96;

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) / 1024;
}

describe('a stalled viewer', { timeout: 120_000 }, () => {
  const suite = sessionSuite('tuicd-stall-');

  it(`keeps the supervisor's memory bounded while ${FLOOD_MB} MB pass it, then resyncs`, async (t) => {
    const s = await suite.create();
    const pid = suite.t.child.pid!;
    const viewer = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${s.session_id}/stream?encoding=binary`));
    try {
      await suite.write(s.session_id, 'stty -echo\n');
      await viewer.waitFor(() => viewer.bytes.length > 0, 10_000, 'the prompt');
      const before = rssMb(pid);
      viewer.ws.pause();
      await suite.write(s.session_id, `head -c ${FLOOD_MB * 1024 * 1024} /dev/zero | tr '\\0' x; echo; echo FLOOD-$((6*7))-DONE\n`);
      let peak = before;
      for (const deadline = Date.now() + 90_000; ; ) {
        peak = Math.max(peak, rssMb(pid));
        const out = (await suite.t.socket('GET', `/sessions/${s.session_id}/output?format=text`)).json<{ data: string }>();
        if (String(out.data).includes('FLOOD-42-DONE')) break;
        assert.ok(Date.now() < deadline, 'the flood ran to its end');
        await new Promise((r) => setTimeout(r, 100));
      }
      peak = Math.max(peak, rssMb(pid));
      t.diagnostic(`supervisor RSS ${before.toFixed(1)} MB before, peak ${peak.toFixed(1)} MB`);
      assert.ok(peak - before < MAX_GROWTH_MB, `supervisor RSS grew ${(peak - before).toFixed(1)} MB (from ${before.toFixed(1)}) while a viewer was stalled`);
      viewer.ws.resume();
      await viewer.waitFor(() => viewer.text().includes('FLOOD-42-DONE'), 60_000, 'the viewer reaches the end after resuming');
      const resync = viewer.frames.find((f) => f.type === 'resync');
      assert.ok(resync, 'a resync frame says what the viewer missed');
      assert.ok((resync['missed'] as number) > FLOOD_MB * 1024 * 1024 - 4 * 1024 * 1024, `missed ${String(resync['missed'])} bytes`);
    } finally {
      viewer.close();
    }
  });
});
