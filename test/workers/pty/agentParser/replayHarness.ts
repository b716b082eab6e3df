/**
 * Replays recorded PTY bytes through the pty host's text stage and output parser, as a session
 * does (screen grid, stripper, parser per batch), with a virtual clock: silence is advanced, not waited.
 */
import { readFileSync } from 'node:fs';

import type { ParsedEvent } from '../../../../shared/protocol/parsedEvents.js';
import { AnsiStripper } from '../../../../workers/pty/ansiStrip.js';
import { isParsedOscPrefix } from '../../../../workers/pty/agentParser/oscRules.js';
import { OutputParser, type ParserTimers } from '../../../../workers/pty/agentParser/outputParser.js';
import { ScreenGrid } from '../../../../workers/pty/screenGrid.js';
import { REPO_ROOT } from '../../../helpers/node22.js';

export function fixture(path: string): Buffer {
  return readFileSync(`${REPO_ROOT}test/fixtures/tuicommander/${path}`);
}

/** Timers on a virtual clock: `advance` runs what falls due, in order. */
export class VirtualTimers implements ParserTimers {
  private t = 0;
  private seq = 0;
  private readonly due = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  setTimeout<A>(fn: (arg: A) => void, ms: number, arg: A): unknown {
    const id = ++this.seq;
    this.due.set(id, { at: this.t + Math.max(0, ms), fn: () => fn(arg) });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }

  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.due) if (entry[1].at <= end && (next === undefined || entry[1].at < next[1].at)) next = entry;
      if (next === undefined) break;
      this.due.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
}

export interface Replay {
  events: ParsedEvent[];
  timers: VirtualTimers;
  parser: OutputParser;
  grid: ScreenGrid;
  /** One PTY read: screen, text stage, then the batch end (the order PtySession keeps). */
  push(bytes: Uint8Array | string): void;
  /** Output that pauses `ms` between chunks. */
  type(bytes: Uint8Array | string, ms: number): void;
  input(bytes: string): void;
  /** How many times the parser read the screen. */
  readonly screenReads: number;
}

export interface ReplayOptions {
  agent?: string | null;
  rows?: number;
  cols?: number;
  /** Let the startup grace end before the replay (default true): a settled session, as a recording was. */
  settled?: boolean;
}

export function replay(opts: ReplayOptions = {}): Replay {
  const grid = new ScreenGrid(opts.rows ?? 40, opts.cols ?? 140);
  const timers = new VirtualTimers();
  const events: ParsedEvent[] = [];
  let lines = 0;
  let screenReads = 0;
  const readRows = (): string[] => {
    screenReads++;
    const rows: string[] = [];
    for (let y = 0; y < grid.rows; y++) rows.push(grid.rowText(y).trimEnd());
    return rows;
  };
  const parser = new OutputParser({ emit: (e) => events.push(...e), readScreen: () => ({ rows: readRows() }), lineCount: () => lines, timers });
  const stripper = new AnsiStripper({
    onLine: () => lines++,
    onText: (t) => parser.lines(t),
    onOsc: (p) => {
      if (isParsedOscPrefix(p)) parser.osc(p);
    },
  });
  parser.setAgent(opts.agent === undefined ? 'claude' : opts.agent);
  if (opts.settled !== false) timers.advance(6_000);
  const push = (bytes: Uint8Array | string): void => {
    const b = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
    grid.write(b);
    stripper.push(b);
    parser.batchEnd(b);
  };
  return {
    get screenReads() {
      return screenReads;
    },
    events,
    timers,
    parser,
    grid,
    push,
    type(bytes, ms) {
      push(bytes);
      timers.advance(ms);
    },
    input(text) {
      parser.input(Buffer.from(text));
    },
  };
}

/** A screen dump (`.txt` fixture) as a terminal would draw it: CRLF line ends. */
export function screenBytes(text: string): Buffer {
  return Buffer.from(text.replace(/\n/g, '\r\n'));
}

/** Events of one replay of `bytes`, pushed as `chunks` pieces, then `quietMs` of silence. */
export function eventsOf(bytes: Uint8Array, cuts: number[], opts: ReplayOptions = {}, quietMs = 15_000): ParsedEvent[] {
  const r = replay(opts);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) r.push(bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  r.timers.advance(quietMs);
  return r.events;
}
