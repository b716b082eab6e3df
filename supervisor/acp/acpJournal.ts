/**
 * The bounded journal of one ACP connection's stream: every frame in order, each with its `seq`
 * (1, 2, …), kept as the JSON text sent to viewers (serialized once, whatever the number of
 * viewers). It drops its oldest frames past a count or a byte budget; a resume from a cursor it
 * still covers is exact (every frame after it, none twice), one it dropped is a gap.
 */

export const AcpJournalLimits = {
  MAX_FRAMES: 10_000,
  /** UTF-16 code units of JSON text (a close bound on the bytes held). */
  MAX_CHARS: 8 * 1024 * 1024,
} as const;

export interface JournalEntry {
  readonly seq: number;
  readonly text: string;
}

export class AcpJournal {
  private entries: JournalEntry[] = [];
  /** Index of the oldest live entry (entries before it were dropped; compacted now and then). */
  private head = 0;
  private chars = 0;
  private nextSeq = 1;

  constructor(
    private readonly limits: { maxFrames: number; maxChars: number } = { maxFrames: AcpJournalLimits.MAX_FRAMES, maxChars: AcpJournalLimits.MAX_CHARS },
  ) {}

  /** The seq of the newest frame (0 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** The seq of the oldest frame still held (lastSeq + 1 when empty). */
  get firstSeq(): number {
    return this.head < this.entries.length ? this.entries[this.head]!.seq : this.nextSeq;
  }

  get size(): { frames: number; chars: number } {
    return { frames: this.entries.length - this.head, chars: this.chars };
  }

  /** Appends a frame: `build` gets its seq and returns its JSON text. */
  append(build: (seq: number) => string): JournalEntry {
    const seq = this.nextSeq++;
    const entry = { seq, text: build(seq) };
    this.entries.push(entry);
    this.chars += entry.text.length;
    while (this.entries.length - this.head > 1 && (this.entries.length - this.head > this.limits.maxFrames || this.chars > this.limits.maxChars)) {
      this.chars -= this.entries[this.head]!.text.length;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return entry;
  }

  /** Whether a resume after `seq` is exact: nothing between it and the oldest frame held was dropped. */
  covers(after: number): boolean {
    return after >= this.firstSeq - 1 && after <= this.lastSeq;
  }

  /** Up to `max` frames after `after` (which `covers` must accept). */
  after(after: number, max = Number.POSITIVE_INFINITY): JournalEntry[] {
    const start = this.head + (after + 1 - this.firstSeq);
    return this.entries.slice(Math.max(start, this.head), Math.min(this.entries.length, Math.max(start, this.head) + max));
  }
}
