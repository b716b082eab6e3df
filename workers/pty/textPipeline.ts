/**
 * Per-session text for agents (issue #3 item 4): PTY bytes → ANSI/VT stripper → bounded line log, each
 * completed line redacted once: when first read, or at once if it touches a PEM block. `read` answers
 * the pty host's `readLog` request, so no line leaves unredacted.
 */

import { AnsiStripper } from './ansiStrip.js';
import { LineLog, type LineRead, type LineReadOptions } from './lineLog.js';
import { Redactor, redactLineText } from '../../shared/redactor.js';
import { isParsedOscPrefix, PARSED_OSC_FIRST_BYTES } from './agentParser/oscRules.js';
import { isStructuralMarker } from './agentParser/lineRules.js';

export interface TextPipelineOptions {
  /** Lines kept (default PtyConstants.LOG_LINES). */
  capacityLines?: number;
  /** Keep text drawn on the alternate screen (default false: full-screen TUIs leave no lines, as in the VT log). */
  keepAltScreen?: boolean;
  /** Longest line before it is cut (default StripConstants.MAX_LINE_BYTES). */
  maxLineBytes?: number;
}

/** The `readLog` result: completed lines plus the unfinished one, stripped and redacted; marker lines blank. */
export interface TextRead extends LineRead {
  partial: string;
}

/** Where the output parser taps the text stage: each push's completed lines, and OSC strings. */
export interface TextSink {
  text(lines: string): void;
  osc(payload: string): void;
  altScreen(active: boolean): void;
}

/** Sees each completed line as stripped; `clean`: it is already redacted (output watchers, outputWatchers.ts). */
export type LineTap = (line: string, clean: boolean) => void;

export class TextPipeline {
  private readonly log: LineLog;
  private sink: TextSink | undefined;
  private tap: LineTap | undefined;
  /** `completed`, or `completedTapped` while a tap is set: no per-line check when there is none. */
  private onLine: (this: TextPipeline, text: string) => void = this.completed;
  private readonly redactor = new Redactor();
  private readonly stripper: AnsiStripper;

  constructor(opts: TextPipelineOptions = {}) {
    this.log = new LineLog(opts.capacityLines);
    const stripOpts = {
      onLine: (text: string) => this.onLine(text),
      keepAltScreen: opts.keepAltScreen ?? false,
      onText: (text: string) => this.sink?.text(text),
      onAltScreen: (active: boolean) => this.sink?.altScreen(active),
      oscFirstBytes: PARSED_OSC_FIRST_BYTES,
      onOsc: (payload: string) => {
        if (isParsedOscPrefix(payload)) this.sink?.osc(payload);
      },
    };
    this.stripper = new AnsiStripper(opts.maxLineBytes === undefined ? stripOpts : { ...stripOpts, maxLineBytes: opts.maxLineBytes });
  }

  setSink(sink: TextSink | undefined): void {
    this.sink = sink;
  }

  setLineTap(tap: LineTap | undefined): void {
    this.tap = tap;
    this.onLine = tap === undefined ? this.completed : this.completedTapped;
  }

  /** Feeds PTY output bytes exactly as read (any split: escapes, UTF-8 and secrets are reassembled). */
  push(chunk: Uint8Array): void {
    this.stripper.push(chunk);
  }

  /** Lines from `offset` (clamped to the oldest kept), or the last `limit` lines; `partial` is redacted on each read. */
  read(opts: LineReadOptions = {}): TextRead {
    const r = this.log.read(opts, redactLineText);
    for (let i = 0; i < r.lines.length; i++) if (isStructuralMarker(r.lines[i]!)) r.lines[i] = '';
    return { ...r, partial: this.redactor.peek(this.stripper.partial()) };
  }

  /** The child exited: the unfinished line becomes the last completed line. */
  flush(): void {
    this.stripper.flush();
  }

  get totalLines(): number {
    return this.log.totalLines;
  }

  /**
   * Lines that cannot touch the PEM state are kept as printed and redacted when first read: the log
   * keeps 10,000 lines, so in a flood most are dropped unread, and the secret scan was most of the
   * text stage's cost (the reading thread's time between PTY reads is what a producer waits on).
   */
  private completed(text: string): void {
    if (this.redactor.deferrable(text)) {
      this.log.append(text, true);
      return;
    }
    const redacted = this.redactor.line(text);
    if (redacted !== null) this.log.append(redacted);
  }

  /** `completed`, and the tap sees what the log keeps: a line of a PEM block it drops is never shown. */
  private completedTapped(text: string): void {
    if (this.redactor.deferrable(text)) {
      this.log.append(text, true);
      this.tap!(text, false);
      return;
    }
    const redacted = this.redactor.line(text);
    if (redacted === null) return;
    this.log.append(redacted);
    this.tap!(redacted, true);
  }
}
