/**
 * The current-screen model (issue #3 item 4: "use @xterm/headless if it beats hand-written parsing on
 * the benchmark"): bytes → screen rows on realistic TUI output, for @xterm/headless, tuicd's
 * hand-written ScreenGrid and strip-ansi (the baseline every text-path ratio uses), in one run. Both
 * emulators must render the fixture identically (checked at several points) before they are timed;
 * then the real ScreenModel: a first read replaying a full ring, and warm reads of new output. Last,
 * the worst case for scrolling: a full ring of short lines replayed at 80×24 and 200×500, where every
 * line feed scrolls the whole screen.
 */

import { StringDecoder } from 'node:string_decoder';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import xtermHeadless from '@xterm/headless';
import stripAnsi from 'strip-ansi';

import { PtyConstants } from '../../shared/protocol/pty.js';
import { OutputRing } from '../../workers/pty/outputRing.js';
import { ScreenGrid } from '../../workers/pty/screenGrid.js';
import { ScreenModel } from '../../workers/pty/screenModel.js';
import { type BenchContext, type BenchModule, type BenchRow, row, withNote } from '../harness.js';
import { tuiOutput } from './fixtures/tuiOutput.js';

const { Terminal } = xtermHeadless;

const INPUT_BYTES = { full: 4 * 1024 * 1024, quick: 512 * 1024 };
/** ~90 % of node-pty reads are exactly 4095 bytes. */
const READ_BYTES = 4095;
const COLS = 120;
const ROWS = 40;
/** Points in the input where both emulators' screens are compared. */
const CHECKPOINTS = 16;
/** Output between two screen reads in the incremental rows (an agent polling a busy session). */
const INCREMENT_BYTES = 64 * 1024;
/** Screen sizes (rows × cols) for the short-lines replay: a common terminal, and the largest a viewer is likely to ask for. */
const SHORT_LINE_SIZES: ReadonlyArray<readonly [number, number]> = [
  [24, 80],
  [200, 500],
];

interface Screen {
  rows: string[];
  cursor: [number, number];
  alt: boolean;
}

function newXterm(): InstanceType<typeof Terminal> {
  return new Terminal({ cols: COLS, rows: ROWS, scrollback: 0, allowProposedApi: true });
}

/** Resolves once everything written so far has been parsed (xterm parses in 12 ms slices on timers). */
function drained(term: InstanceType<typeof Terminal>): Promise<void> {
  return new Promise((resolve) => term.write('', resolve));
}

function xtermScreen(term: InstanceType<typeof Terminal>): Screen {
  const b = term.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < term.rows; y++) rows.push((b.getLine(b.baseY + y)?.translateToString(true) ?? '').trimEnd());
  return { rows, cursor: [b.cursorY, Math.min(b.cursorX, term.cols - 1)], alt: b.type === 'alternate' };
}

function gridScreen(g: ScreenGrid): Screen {
  const rows: string[] = [];
  for (let y = 0; y < g.rows; y++) rows.push(g.rowText(y).trimEnd());
  return { rows, cursor: [g.cursorRow, g.cursorCol], alt: g.altScreen };
}

/** Throws at the first point where ScreenGrid and xterm disagree: a fast wrong screen is no screen. */
async function checkSameScreens(reads: Uint8Array[]): Promise<void> {
  const term = newXterm();
  const grid = new ScreenGrid(ROWS, COLS);
  const every = Math.max(1, Math.floor(reads.length / CHECKPOINTS));
  try {
    for (let i = 0; i < reads.length; i++) {
      term.write(reads[i]!);
      grid.write(reads[i]!);
      if ((i + 1) % every !== 0 && i !== reads.length - 1) continue;
      await drained(term);
      const a = xtermScreen(term);
      const b = gridScreen(grid);
      const row = a.rows.findIndex((r, y) => r !== b.rows[y]);
      if (row >= 0) throw new Error(`after read ${i}: row ${row} differs: xterm ${JSON.stringify(a.rows[row])} vs ScreenGrid ${JSON.stringify(b.rows[row])}`);
      if (a.alt !== b.alt || a.cursor.join() !== b.cursor.join())
        throw new Error(`after read ${i}: cursor/alt differ: xterm ${JSON.stringify(a)} vs ScreenGrid ${JSON.stringify(b)}`);
    }
  } finally {
    term.dispose();
  }
}

type Variant = (reads: Uint8Array[]) => Promise<number>;

const VARIANTS = {
  stripAnsi: async (reads: Uint8Array[]): Promise<number> => {
    const decoder = new StringDecoder('utf8');
    let n = 0;
    for (const r of reads) n += stripAnsi(decoder.write(r as Buffer)).length;
    return n;
  },
  xterm: async (reads: Uint8Array[]): Promise<number> => {
    const term = newXterm();
    for (const r of reads) term.write(r);
    await drained(term);
    const n = xtermScreen(term).rows.join('\n').length;
    term.dispose();
    return n;
  },
  screenGrid: async (reads: Uint8Array[]): Promise<number> => {
    const grid = new ScreenGrid(ROWS, COLS);
    for (const r of reads) grid.write(r);
    return gridScreen(grid).rows.join('\n').length;
  },
} satisfies Record<string, Variant>;

type VariantName = keyof typeof VARIANTS;

/** The real ScreenModel over a full output ring: a first read replays the whole ring. */
function replayFullRing(ring: OutputRing): number {
  const model = new ScreenModel(ring, ROWS, COLS);
  const t = performance.now();
  const s = model.snapshot();
  const ms = performance.now() - t;
  model.dispose();
  if (s.rows.length !== ROWS) throw new Error(`snapshot has ${s.rows.length} rows, expected ${ROWS}`);
  return ms;
}

/** The real ScreenModel kept warm: INCREMENT_BYTES more output between two reads. */
async function incrementalReads(input: Buffer, reps: number): Promise<number[]> {
  const ring = new OutputRing(PtyConstants.OUTPUT_RING_BYTES);
  const model = new ScreenModel(ring, ROWS, COLS);
  const rates: number[] = [];
  let at = 0;
  for (let r = 0; r < reps + 1; r++) {
    let t = 0;
    const steps = Math.max(1, Math.floor(input.length / INCREMENT_BYTES / (reps + 1)));
    for (let s = 0; s < steps; s++) {
      if (at + INCREMENT_BYTES > input.length) at = 0;
      for (let i = at; i < at + INCREMENT_BYTES; i += READ_BYTES) ring.append(input.subarray(i, Math.min(at + INCREMENT_BYTES, i + READ_BYTES)));
      at += INCREMENT_BYTES;
      const t0 = performance.now();
      model.snapshot();
      t += performance.now() - t0;
    }
    if (r > 0) rates.push((steps * INCREMENT_BYTES) / 1e6 / (t / 1000)); // r = 0 warms up
  }
  model.dispose();
  return rates;
}

/** A full output ring of 4-byte lines (`NN\r\n`): a line feed every 4 bytes, each at the bottom of the screen. */
function shortLines(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i + 4 <= bytes; i += 4) out.write(`${String((i / 4) % 100).padStart(2, '0')}\r\n`, i, 'latin1');
  return out;
}

/** ScreenGrid fed the whole input at once, as ScreenModel's first read does, then rendered; MB/s. */
function replayShortLines(input: Buffer, rows: number, cols: number): number {
  const t = performance.now();
  const grid = new ScreenGrid(rows, cols);
  grid.write(input);
  const last = grid.rowText(rows - 2).trimEnd();
  const ms = performance.now() - t;
  const expected = String((input.length / 4 - 1) % 100).padStart(2, '0');
  if (last !== expected) throw new Error(`${rows}×${cols}: the last line shown is ${JSON.stringify(last)}, expected ${expected}`);
  return input.length / 1e6 / (ms / 1000);
}

/** Heap bytes one idle 80×24 emulator holds, or undefined when no gc can be had. */
async function bytesPerEmulator(make: () => object): Promise<number | undefined> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined;
  if (gc === undefined) return undefined;
  const n = 1000;
  gc();
  await new Promise((r) => setTimeout(r, 50)); // external backing stores are freed after the gc
  gc();
  // Typed arrays keep their cells outside the JS heap: count external memory too.
  const used = (): number => process.memoryUsage().heapUsed + process.memoryUsage().external;
  const before = used();
  const held = Array.from({ length: n }, make);
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const after = used();
  if (held.length !== n) throw new Error('unreachable: keeps `held` alive until measured');
  for (const h of held) (h as { dispose?: () => void }).dispose?.();
  return (after - before) / n;
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  // Memory first, before the timed runs leave garbage behind.
  const xtermBytes = await bytesPerEmulator(() => new Terminal({ cols: 80, rows: 24, scrollback: 0, allowProposedApi: true }));
  const gridBytes = await bytesPerEmulator(() => new ScreenGrid(24, 80));
  const input = tuiOutput(ctx.quick ? INPUT_BYTES.quick : INPUT_BYTES.full, COLS, ROWS);
  const reads: Uint8Array[] = [];
  for (let i = 0; i < input.length; i += READ_BYTES) reads.push(input.subarray(i, i + READ_BYTES));
  await checkSameScreens(reads);

  const reps = Math.max(3, ctx.repetitions);
  const mb = input.length / 1e6;
  const names = Object.keys(VARIANTS) as VariantName[];
  const m = new Map<VariantName, number[]>(names.map((n) => [n, []]));
  for (const n of names) await VARIANTS[n](reads); // warm-up
  for (let r = 0; r < reps; r++) {
    for (const n of names) {
      const t = performance.now();
      await VARIANTS[n](reads);
      m.get(n)!.push(mb / ((performance.now() - t) / 1000));
    }
  }

  const ring = new OutputRing(PtyConstants.OUTPUT_RING_BYTES);
  for (const r of reads) ring.append(r);
  const ringMb = Math.min(input.length, PtyConstants.OUTPUT_RING_BYTES) / 1e6;
  replayFullRing(ring); // warm-up
  const replay: number[] = [];
  for (let r = 0; r < reps; r++) replay.push(ringMb / (replayFullRing(ring) / 1000));
  const incremental = await incrementalReads(input, reps);

  const lines = shortLines(PtyConstants.OUTPUT_RING_BYTES);
  const linesMb = lines.length / 1e6;
  const linesStrip = await VARIANTS.stripAnsi([lines]); // warm-up
  if (linesStrip !== lines.length) throw new Error(`strip-ansi kept ${linesStrip} of ${lines.length} characters of plain text`);
  const shortLineRows: BenchRow[] = [];
  const stripLines: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    await VARIANTS.stripAnsi([lines]);
    stripLines.push(linesMb / ((performance.now() - t) / 1000));
  }
  const stripLinesBase = { name: 'strip-ansi (short lines)', median: row('', '', ctx, '', stripLines).median };
  shortLineRows.push(
    withNote(row('screen: 2 MiB of 4-byte lines', 'strip-ansi (StringDecoder + strip-ansi)', ctx, 'MB/s', stripLines), 'the same bytes as text, no screen'),
  );
  for (const [rows, cols] of SHORT_LINE_SIZES) {
    replayShortLines(lines, rows, cols); // warm-up
    const rates: number[] = [];
    for (let r = 0; r < reps; r++) rates.push(replayShortLines(lines, rows, cols));
    const ms = (linesMb / row('', '', ctx, '', rates).median) * 1000;
    shortLineRows.push(
      withNote(
        row('screen: 2 MiB of 4-byte lines', `ScreenGrid replay, ${rows}×${cols} (rows×cols)`, ctx, 'MB/s', rates, stripLinesBase),
        `ms per replay = ${ms.toFixed(0)}; a scroll rotates the row map`,
      ),
    );
  }

  const kb = (b: number | undefined): string => (b === undefined ? 'n/a (no gc)' : `${(b / 1024).toFixed(1)} KB`);

  const base = (name: string, n: VariantName) => ({ name, median: row('', '', ctx, '', m.get(n)!).median });
  const strip = base('strip-ansi', 'stripAnsi');
  const grid = base('ScreenGrid', 'screenGrid');
  const size = `${mb.toFixed(1)} MB TUI output (alt-screen redraws + agent output), ${COLS}×${ROWS}, ${READ_BYTES}-byte reads`;
  return [
    withNote(row('screen: bytes → rows', 'strip-ansi (StringDecoder + strip-ansi)', ctx, 'MB/s', m.get('stripAnsi')!), size),
    withNote(
      row('screen: bytes → rows', 'tuicd ScreenGrid (hand-written)', ctx, 'MB/s', m.get('screenGrid')!, strip),
      `same rows as xterm at ${CHECKPOINTS} checkpoints; ${kb(gridBytes)} per 80×24`,
    ),
    withNote(row('screen: bytes → rows', '@xterm/headless', ctx, 'MB/s', m.get('xterm')!, strip), `${kb(xtermBytes)} per 80×24 emulator, scrollback 0`),
    withNote(row('screen: xterm vs ScreenGrid', '@xterm/headless', ctx, 'MB/s', m.get('xterm')!, grid), 'ratio < 1: xterm is slower'),
    withNote(
      row('screen: ScreenModel', 'first read: replay the whole ring', ctx, 'MB/s', replay, strip),
      `ms per read = ${((ringMb / row('', '', ctx, '', replay).median) * 1000).toFixed(0)}`,
    ),
    withNote(
      row('screen: ScreenModel', `warm: ${INCREMENT_BYTES / 1024} KiB new output per read`, ctx, 'MB/s', incremental, strip),
      'fed from the ring on read',
    ),
    ...shortLineRows,
  ];
};
