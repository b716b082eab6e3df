/**
 * Only the keystroke echo rows of sessionStream.bench.ts (issue 29 item 4: echo p50 and p99 within
 * 1.2× the one-process node-pty + uWS server): the same variants, keystrokes and rotation, without
 * the floods, so the figure takes a couple of minutes per regime instead of most of an hour.
 * `--baseline-ref` adds the older build's echo beside ours, as there.
 */
import type { BenchModule } from '../harness.js';
import { measureEcho, withSlots } from './sessionStream.bench.js';

export const run: BenchModule = (ctx) => withSlots(ctx, (client, uws, nodeEngine, baseline) => measureEcho(ctx, client, uws, nodeEngine, baseline));
