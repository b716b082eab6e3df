/**
 * Issue 29, "JSON frames encoded four times": what the supervisor spends turning a viewer's output
 * batch into JSON frames (`supervisor/streaming/outputFrames.ts`: the text encoded once, then cut)
 * against the way it did it before (each 16,000-byte slice decoded, its whole frame encoded, then
 * halved and encoded again until each half fit: kept below as the baseline, as the commit before
 * this change ran it). In one process, the same 64 KiB batches for both, the two interleaved in
 * each repetition: `urandom | base64` text and recorded Claude Code output (colours, box drawing).
 * Each frame is also made the bytes the socket sends (a string frame encoded to UTF-8, as sending
 * it does; a frame that is bytes already, as it is). MB of output per second of CPU; the ratio is
 * now / before.
 */
import { StringDecoder } from 'node:string_decoder';
import { Bench } from 'tinybench';

import { outputFrames } from '../../supervisor/streaming/outputFrames.js';
import { recordedAgentOutput } from '../workers/pty/fixtures/recordedAgentOutput.js';
import { type BenchContext, type BenchModule, type BenchRow, median, row, withNote } from '../harness.js';

const TIME_MS = { full: 1_000, quick: 200 };
const BATCH_BYTES = 64 * 1024;
const MAX_FRAME_BYTES = 16_000;
const TOTAL_WRITTEN = 123_456_789;

/** The encoder before this change, as rawViewer.ts had it (the baseline). */
function halvingFrames(text: string, totalWritten: number | undefined, out: string[] = []): string[] {
  const frame = JSON.stringify(totalWritten === undefined ? { type: 'output', data: text } : { type: 'output', data: text, total_written: totalWritten });
  if (frame.length * 3 < MAX_FRAME_BYTES || Buffer.byteLength(frame) < MAX_FRAME_BYTES || text.length < 2) {
    out.push(frame);
    return out;
  }
  let mid = text.length >> 1;
  const code = text.charCodeAt(mid - 1);
  if (code >= 0xd800 && code <= 0xdbff) mid--;
  halvingFrames(text.slice(0, mid), totalWritten, out);
  return halvingFrames(text.slice(mid), totalWritten, out);
}

/** What the socket does with a frame: a string is encoded to UTF-8 on send, bytes go as they are. */
function sent(frames: Array<string | Buffer>): number {
  let bytes = 0;
  for (const frame of frames) bytes += typeof frame === 'string' ? Buffer.from(frame, 'utf8').length : frame.length;
  return bytes === 0 ? 0 : frames.length;
}

/** One batch as the viewer sent it before: per 16,000-byte slice, decoded, then the halving encoder. */
function before(batch: Buffer, decoder: StringDecoder): number {
  let frames = 0;
  for (let i = 0; i < batch.length; i += MAX_FRAME_BYTES) frames += sent(halvingFrames(decoder.write(batch.subarray(i, i + MAX_FRAME_BYTES)), TOTAL_WRITTEN));
  return frames;
}

/** One batch as the viewer sends it now: decoded whole, encoded once, cut. */
function now(batch: Buffer, decoder: StringDecoder): number {
  return sent(outputFrames(decoder.write(batch), TOTAL_WRITTEN, MAX_FRAME_BYTES));
}

function batchesOf(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i + BATCH_BYTES <= bytes.length; i += BATCH_BYTES) out.push(bytes.subarray(i, i + BATCH_BYTES));
  return out;
}

const INPUTS: Array<{ name: string; batches: Buffer[] }> = [
  {
    name: 'urandom | base64',
    batches: batchesOf(Buffer.from(Buffer.from(Array.from({ length: 3 * 256 * 1024 }, (_, i) => (i * 2654435761) >>> 24)).toString('base64'), 'ascii')),
  },
  { name: 'recorded agent output', batches: batchesOf(recordedAgentOutput(1024 * 1024)) },
];

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const rows: BenchRow[] = [];
  for (const input of INPUTS) {
    const mb = (input.batches.length * BATCH_BYTES) / 1e6;
    const values = { now: [] as number[], before: [] as number[] };
    let frames = { now: 0, before: 0 };
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      const bench = new Bench({ time: ctx.quick ? TIME_MS.quick : TIME_MS.full, warmupTime: 100, throws: true });
      const pass = (encode: (b: Buffer, d: StringDecoder) => number) => () => {
        const decoder = new StringDecoder('utf8');
        let n = 0;
        for (const batch of input.batches) n += encode(batch, decoder);
        return n;
      };
      // The order alternates: the machine's state is shared by the pair.
      const order = rep % 2 === 0 ? (['now', 'before'] as const) : (['before', 'now'] as const);
      for (const name of order) bench.add(name, pass(name === 'now' ? now : before));
      await bench.run();
      for (const name of ['now', 'before'] as const) {
        const result = bench.getTask(name)!.result;
        if (result.state !== 'completed') throw new Error(`${input.name} ${name}: ${result.state}`);
        values[name].push(mb * result.throughput.p50);
      }
      frames = { now: pass(now)(), before: pass(before)() };
    }
    const group = `viewer JSON frames: ${input.name}, ${input.batches.length} × 64 KiB batches`;
    const baseline = { name: 'before (halving encoder)', median: median(values.before) };
    rows.push(withNote(row(group, 'before (halving encoder)', ctx, 'MB/s', values.before), `${frames.before} frames`));
    rows.push(withNote(row(group, 'now (encoded once, cut)', ctx, 'MB/s', values.now, baseline), `${frames.now} frames; higher is better`));
  }
  return rows;
};
