/**
 * What has been typed into a session's composer since the last Enter, tracked from the bytes every
 * input path writes (MCP input, REST write, submit). It follows the bytes, not the application: it
 * knows the line editor's common keys and gives up ("unknown") where the result depends on state it
 * cannot see (history recall, completion, search). Submit uses it to refuse to wipe a half-typed line.
 */

/** empty: nothing typed; partial: typed bytes without Enter; unknown: the line may hold text we cannot know. */
export type ComposerState = 'empty' | 'partial' | 'unknown';

/**
 * Bytes of the line kept. Typing megabytes without Enter must not grow the supervisor: past this
 * the oldest bytes go (a quarter at a time, so the cost per byte stays constant) and the line is
 * marked truncated: what is left of it after edits is no longer known.
 */
export const MAX_TRACKED_LINE_BYTES = 64 * 1024;
/** Parameter bytes of one CSI sequence kept; no key sends more than a few. */
const MAX_CSI_BYTES = 32;

const ESC = 0x1b;
const PASTE_END = Buffer.from('\x1b[201~', 'latin1');

type Mode = 'text' | 'esc' | 'csi' | 'ss3' | 'paste';

export class InputLineBuffer {
  private bytes = new Uint8Array(256);
  private length = 0;
  private unknown = false;
  private cut = false;
  private mode: Mode = 'text';
  private csi: number[] = [];
  private pasteTail: number[] = [];
  /** The line the last Enter submitted (null when none, or when it was cut or unknowable). */
  private submittedLine: string | null = null;

  /** Takes the line the last Enter submitted (once). */
  takeSubmitted(): string | null {
    const line = this.submittedLine;
    this.submittedLine = null;
    return line;
  }

  get state(): ComposerState {
    if (this.length > 0) return 'partial';
    return this.unknown ? 'unknown' : 'empty';
  }

  /** The line outgrew MAX_TRACKED_LINE_BYTES since the last Enter: `text` holds only its end. */
  get truncated(): boolean {
    return this.cut;
  }

  /** The tracked line (best effort: cursor movement inside it is not modelled). */
  get text(): string {
    return Buffer.from(this.bytes.buffer, 0, this.length).toString('utf8');
  }

  /** Feeds written bytes; returns how many Enters submitted a line. */
  feed(data: Uint8Array): number {
    let enters = 0;
    for (const b of data) {
      switch (this.mode) {
        case 'paste':
          this.pasteByte(b);
          break;
        case 'esc':
          this.escByte(b);
          break;
        case 'csi':
          this.csiByte(b);
          break;
        case 'ss3':
          // ESC O <final>: application-mode cursor keys; up/down recall history.
          this.mode = 'text';
          if (b === 0x41 || b === 0x42) this.unknown = true;
          break;
        case 'text':
          if (this.textByte(b)) enters++;
          break;
      }
    }
    return enters;
  }

  /** The line was cleared and submitted by a framed write (Ctrl-U … Enter). */
  clear(): void {
    this.length = 0;
    this.unknown = false;
    this.cut = false;
    this.mode = 'text';
    // A long line's buffer is not kept for the next one.
    if (this.bytes.length > 4096) this.bytes = new Uint8Array(256);
  }

  private push(b: number): void {
    if (this.length === this.bytes.length) {
      if (this.length >= MAX_TRACKED_LINE_BYTES) {
        const drop = MAX_TRACKED_LINE_BYTES >> 2;
        this.bytes.copyWithin(0, drop, this.length);
        this.length -= drop;
        this.cut = true;
        // Deleting back past what is kept would read as an empty line; it is not.
        this.unknown = true;
      } else {
        const grown = new Uint8Array(Math.min(this.bytes.length * 2, MAX_TRACKED_LINE_BYTES));
        grown.set(this.bytes.subarray(0, this.length));
        this.bytes = grown;
      }
    }
    this.bytes[this.length++] = b;
  }

  private lastByte(): number | undefined {
    return this.length > 0 ? this.bytes[this.length - 1] : undefined;
  }

  private textByte(b: number): boolean {
    if (b === 0x0d || b === 0x0a) {
      this.submittedLine = this.unknown || this.cut ? null : this.text;
      this.clear();
      return true;
    }
    if (b === ESC) {
      this.mode = 'esc';
      return false;
    }
    if (b === 0x15 || b === 0x03) {
      // Ctrl-U discards the line; Ctrl-C abandons it.
      this.clear();
      return false;
    }
    if (b === 0x7f || b === 0x08) {
      this.deleteChar();
      return false;
    }
    if (b === 0x17) {
      this.deleteWord();
      return false;
    }
    if (b === 0x09 || b === 0x12 || b === 0x0b || b === 0x19 || b === 0x04) {
      // Tab completes, Ctrl-R searches, Ctrl-K/Ctrl-Y kill and yank, Ctrl-D deletes under the cursor: results unseen.
      this.markUnknown();
      return false;
    }
    if (b < 0x20) return false; // Ctrl-A/E/L/Z and the like move or redraw, the line's content stays.
    this.push(b);
    return false;
  }

  private escByte(b: number): void {
    if (b === 0x5b) {
      this.mode = 'csi';
      this.csi = [];
    } else if (b === 0x4f) {
      this.mode = 'ss3';
    } else {
      // A lone Escape or an Alt-key (meta) chord: vi mode or word edits; the line is no longer known.
      this.mode = 'text';
      this.markUnknown();
      if (b === ESC) this.mode = 'esc';
    }
  }

  private csiByte(b: number): void {
    if (b < 0x40 || b > 0x7e) {
      if (this.csi.length < MAX_CSI_BYTES) this.csi.push(b);
      return;
    }
    this.mode = 'text';
    const params = Buffer.from(this.csi).toString('latin1');
    if (b === 0x7e && params === '200') {
      this.mode = 'paste';
      this.pasteTail = [];
    } else if (b === 0x41 || b === 0x42) {
      this.markUnknown(); // up/down recall history
    } else if (b === 0x7e && params === '3') {
      this.markUnknown(); // delete under a cursor we do not track
    }
    // Left/right/home/end move the cursor: the content is the same.
  }

  private pasteByte(b: number): void {
    this.pasteTail.push(b);
    // Hold back only what could still be the end marker; the rest is pasted text.
    while (this.pasteTail.length > 0 && !isPrefix(this.pasteTail, PASTE_END)) this.push(this.pasteTail.shift()!);
    if (this.pasteTail.length === PASTE_END.length) {
      this.pasteTail = [];
      this.mode = 'text';
    }
  }

  private markUnknown(): void {
    this.unknown = true;
  }

  /** Removes the last UTF-8 character. */
  private deleteChar(): void {
    while (this.length > 0) {
      const b = this.bytes[--this.length]!;
      if ((b & 0xc0) !== 0x80) break;
    }
  }

  /** Ctrl-W: trailing spaces, then the word before them. */
  private deleteWord(): void {
    while (this.lastByte() === 0x20) this.length--;
    while (this.length > 0 && this.lastByte() !== 0x20) this.length--;
  }
}

function isPrefix(candidate: number[], of: Buffer): boolean {
  if (candidate.length > of.length) return false;
  for (let i = 0; i < candidate.length; i++) if (candidate[i] !== of[i]) return false;
  return true;
}
