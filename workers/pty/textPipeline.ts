/**
 * Per-session text for agents (issue #3 item 4): PTY bytes → ANSI/VT stripper → bounded line log, each
 * completed line redacted once: when first read, or at once if it touches a PEM block. `read` answers
 * the pty host's `readLog` request, so no line leaves unredacted.
 */

import { AnsiStripper, type AnsiStripperOptions, type PushedLines } from './ansiStrip.js';
import { type LineBlock, LineLog, type LineRead, type LineReadOptions } from './lineLog.js';
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
  /** False when `text` would do nothing with these lines: they are then never decoded (absent: always true). */
  wants?(lines: PushedLines): boolean;
  osc(payload: string): void;
  altScreen(active: boolean): void;
}

/** Output watchers (outputWatchers.ts) on the text stage. */
export interface LineTap {
  /** A push's completed lines joined by `\n`, before they are logged: false when no line of it can match. */
  block(text: string): boolean;
  /** One completed line as printed (stripped); `redacted` when the log already redacted it. */
  line(text: string, redacted: string | undefined): void;
}

/**
 * The pipeline is its stripper's options object: its callbacks are methods, not closures made per
 * session (an idle session kept an options object and five closures for them).
 */
export class TextPipeline implements AnsiStripperOptions {
  private readonly log: LineLog;
  private sink: TextSink | undefined;
  private tap: LineTap | undefined;
  /** @internal (stripper) `completed`, or `completedTapped` for a push the tap may match: no per-line check otherwise. */
  onLine: (this: TextPipeline, text: string) => void = this.completed;
  /** @internal (stripper) */
  readonly keepAltScreen: boolean;
  /** @internal (stripper) */
  readonly maxLineBytes: number | undefined;
  private readonly redactor = new Redactor();
  private readonly stripper: AnsiStripper;

  constructor(opts: TextPipelineOptions = {}) {
    this.log = new LineLog(opts.capacityLines);
    this.keepAltScreen = opts.keepAltScreen ?? false;
    this.maxLineBytes = opts.maxLineBytes;
    this.stripper = new AnsiStripper(this);
  }

  /** @internal (stripper) */
  get oscFirstBytes(): readonly number[] {
    return PARSED_OSC_FIRST_BYTES;
  }

  /** @internal (stripper) */
  onPushed(lines: PushedLines): void {
    const sink = this.sink;
    if (sink !== undefined && (sink.wants === undefined || sink.wants(lines))) sink.text(lines.text());
    // Per push, not per line: lines of a push no watcher can match take the untapped path.
    if (this.tap !== undefined) this.onLine = this.tap.block(lines.text()) ? this.completedTapped : this.completed;
  }

  /** @internal (stripper) */
  onAltScreen(active: boolean): void {
    this.sink?.altScreen(active);
  }

  /** @internal (stripper) */
  onOsc(payload: string): void {
    if (isParsedOscPrefix(payload)) this.sink?.osc(payload);
  }

  setSink(sink: TextSink | undefined): void {
    this.sink = sink;
  }

  setLineTap(tap: LineTap | undefined): void {
    this.tap = tap;
    this.onLine = this.completed;
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

  /** Memory the line log holds, in bytes. */
  get heldBytes(): number {
    return this.log.heldBytes;
  }

  /**
   * A push's lines at once, as bytes, when each would be kept as printed (deferred redaction, below)
   * and no watcher looks at them: the common case, with no string per line. The PEM check on the
   * whole text says what `deferrable` would say of every line of it. @internal (stripper)
   */
  onBlock(block: LineBlock, lines: PushedLines): boolean {
    if (this.onLine !== this.completed || !this.redactor.deferrable(lines)) return false;
    // A log without the byte path (the string log the tests compare with) takes the lines one by one.
    const log = this.log as Partial<LineLog>;
    if (log.appendBlock === undefined) return false;
    this.log.appendBlock(block);
    return true;
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

  /** `completed`, and the tap sees each line the log keeps: a line of a PEM block it drops is never shown. */
  private completedTapped(text: string): void {
    if (this.redactor.deferrable(text)) {
      this.log.append(text, true);
      this.tap?.line(text, undefined);
      return;
    }
    const redacted = this.redactor.line(text);
    if (redacted === null) return;
    this.log.append(redacted);
    this.tap?.line(text, redacted);
  }
}
