/**
 * Only the keystroke echo rows of sessionStream.bench.ts (issue 29 item 4: echo p50 and p99 within
 * 1.2× the one-process node-pty + uWS server): the same variants, keystrokes and rotation, without
 * the floods, so the figure takes a couple of minutes per regime instead of most of an hour.
 * `--baseline-ref` adds the older build's echo beside ours, as there.
 */
import type { BenchModule } from '../harness.js';
import { baselineEngine } from '../baseline.js';
import { type BaselineSlot, measureEcho, startSlot, type TuicdSlot } from './sessionStream.bench.js';
import { LoadClient } from './sessions/clientProc.js';

export const run: BenchModule = async (ctx) => {
  const client = LoadClient.start();
  let uws: TuicdSlot = {};
  let nodeEngine: TuicdSlot = {};
  let baseline: BaselineSlot | undefined;
  try {
    // One at a time: one's start-up CPU must not delay the other's ready line.
    uws = await startSlot('uws');
    nodeEngine = await startSlot('node');
    if (ctx.baseline) {
      const b = ctx.baseline;
      baseline = { label: b.label, slot: 'error' in b ? { error: b.error } : await startSlot(baselineEngine(b), b.mainPath) };
    }
    return await measureEcho(ctx, client, uws, nodeEngine, baseline);
  } finally {
    await client.stop();
    await Promise.all([uws.tuicd?.stop(), nodeEngine.tuicd?.stop(), baseline?.slot.tuicd?.stop()]);
  }
};
