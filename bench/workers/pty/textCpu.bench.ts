/**
 * CPU per MB of the pty host's text stage (issue 29: strip, line log, deferred redaction), fed in
 * process with what a flood hands it: 64 KiB batches of `urandom | base64` (76-column lines),
 * `/dev/zero | tr` (one line without end, cut at the line cap) and recorded agent output. The same
 * input goes through the current TextPipeline and the one built from `baselineRef` (the commit before
 * the text stage's rework), alternating within each repetition; both must serve the same text.
 */

import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { baselineError } from '../../baseline.js';
import { type BenchContext, type BenchModule, type BenchRow, failedRow, median, row, withNote } from '../../harness.js';
import { PtyConstants } from '../../../shared/protocol/pty.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { recordedAgentOutput } from './fixtures/recordedAgentOutput.js';

/** The commit before the text stage's rework (its strip and line log are the baseline). */
export const baselineRef = 'a198327';

/** What the pty host's text stage is handed per batch in a flood (the coalescer's cap). */
const BATCH_BYTES = PtyConstants.CATCH_UP_CHUNK_BYTES;
const INPUT_BYTES = { full: 16 * 1024 * 1024, quick: 2 * 1024 * 1024 };

/** The part of TextPipeline both builds share. */
export interface TextStage {
  push(chunk: Uint8Array): void;
  flush(): void;
  read(opts: { offset?: number; limit?: number }): { lines: string[]; total_lines: number; partial: string };
}
export type TextStageCtor = new () => TextStage;

export interface TextInput {
  name: string;
  batches: Uint8Array[];
  bytes: number;
}

/** `head -c N /dev/urandom | base64` through a pty: 76 columns, CRLF. */
function base64Flood(bytes: number): Buffer {
  const text = randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += 76) lines.push(text.slice(i, i + 76));
  return Buffer.from(lines.join('\r\n') + '\r\n').subarray(0, bytes);
}

function batchesOf(data: Buffer): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < data.length; i += BATCH_BYTES) out.push(data.subarray(i, i + BATCH_BYTES));
  return out;
}

export function textInputs(bytes: number): TextInput[] {
  const make = (name: string, data: Buffer): TextInput => ({ name, batches: batchesOf(data), bytes: data.length });
  return [
    make('urandom | base64', base64Flood(bytes)),
    make('/dev/zero | tr (no newlines)', Buffer.alloc(bytes, 'x')),
    make('recorded agent output', recordedAgentOutput(bytes)),
  ];
}

/** CPU ms (this process: user + system, GC threads included) to push the whole input through a fresh stage. */
function cpuMsOf(Stage: TextStageCtor, input: TextInput): number {
  const before = process.cpuUsage();
  const stage = new Stage();
  for (const b of input.batches) stage.push(b);
  stage.flush();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** A fast wrong answer is no answer: both stages must serve the same lines. */
export function assertSameText(a: TextStageCtor, b: TextStageCtor, input: TextInput): void {
  const read = (Stage: TextStageCtor): string => {
    const s = new Stage();
    for (const batch of input.batches) s.push(batch);
    const r = s.read({ offset: 0, limit: PtyConstants.LOG_LINES });
    s.flush();
    const f = s.read({ limit: 5 });
    return JSON.stringify([r, f]);
  };
  if (read(a) !== read(b)) throw new Error(`the two text stages serve different text on ${input.name}`);
}

/** ms/MB per variant and input, repetitions interleaved so machine noise hits both alike. */
export function measureTextCpu(variants: Record<string, TextStageCtor>, inputs: TextInput[], reps: number): Map<string, Map<string, number[]>> {
  const out = new Map<string, Map<string, number[]>>();
  for (const input of inputs) {
    const perVariant = new Map<string, number[]>();
    for (const [name, Stage] of Object.entries(variants)) {
      cpuMsOf(Stage, input); // warm-up: JIT
      perVariant.set(name, []);
    }
    for (let r = 0; r < reps; r++) {
      for (const [name, Stage] of Object.entries(variants)) perVariant.get(name)!.push(cpuMsOf(Stage, input) / (input.bytes / 1e6));
    }
    out.set(input.name, perVariant);
  }
  return out;
}

/** The ratio per repetition (the two ran back to back, sharing the machine's state): median and range. */
function pairedNote(current: number[], baseline: number[] | undefined): string {
  const goal = 'lower is better; pty host goal ≤ 8 ms/MB in all';
  if (baseline === undefined) return goal;
  const ratios = current.map((c, k) => c / baseline[k]!);
  return `per repetition ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}); ${goal}`;
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const inputs = textInputs(ctx.quick ? INPUT_BYTES.quick : INPUT_BYTES.full);
  const reps = Math.max(3, ctx.repetitions);
  const current = 'tuicd TextPipeline';
  const variants: Record<string, TextStageCtor> = { [current]: TextPipeline };
  const b = ctx.baseline;
  const problem = b === undefined ? 'no baseline build' : baselineError(b);
  let baseLabel: string | undefined;
  if (b !== undefined && !('error' in b)) {
    // mainPath is <build>/dist/supervisor/main.js.
    const url = pathToFileURL(join(dirname(dirname(b.mainPath)), 'workers/pty/textPipeline.js')).href;
    const mod = (await import(url)) as { TextPipeline: TextStageCtor };
    baseLabel = `TextPipeline (baseline ${b.ref})`;
    variants[baseLabel] = mod.TextPipeline;
    for (const input of inputs) assertSameText(TextPipeline, mod.TextPipeline, input);
  }
  const m = measureTextCpu(variants, inputs, reps);
  const rows: BenchRow[] = [];
  const mb = (inputs[0]!.bytes / 1e6).toFixed(0);
  for (const input of inputs) {
    const group = `text stage CPU: ${input.name}`;
    const values = m.get(input.name)!;
    const base = baseLabel === undefined ? undefined : { name: baseLabel, median: median(values.get(baseLabel)!) };
    if (base !== undefined) rows.push(withNote(row(group, baseLabel!, ctx, 'ms/MB', values.get(baseLabel!)!), `${mb} MB in ${BATCH_BYTES / 1024} KiB batches`));
    else rows.push(failedRow(group, 'baseline', ctx, 'ms/MB', problem ?? 'no baseline'));
    rows.push(
      withNote(
        row(group, current, ctx, 'ms/MB', values.get(current)!, base),
        pairedNote(values.get(current)!, baseLabel === undefined ? undefined : values.get(baseLabel)),
      ),
    );
  }
  return rows;
};
