/**
 * The child's stdout cut into lines and held in a bounded LOSSY queue:
 * at most 256 lines and 8 MiB, the oldest dropped first; a line longer than 16 MiB is discarded
 * whole while it streams in, so no more than the limit of it is ever buffered. The reader never
 * waits on the consumer: blocking it would park the child on its stdout write, and a child that
 * stops reading its stdin could then wedge both sides.
 *
 * Lines the `side` filter picks (notifications) go to a second, smaller lossy queue of their own, so
 * a notification flood only ever evicts older notifications, never an answer waiting in the main
 * queue. `shift` hands both out in arrival order.
 */

import { BoundedQueue } from '../../shared/boundedQueue.js';
import { StdioLimits } from '../../shared/protocol/proxyStdio.js';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface LineQueueOptions {
  maxLines?: number;
  maxBytes?: number;
  maxLineBytes?: number;
  /**
   * Cheap filter run on every complete line before it is queued (a view into the read chunk, not
   * to be kept): false means skipped, never queued. Lets a notification flood cost no queue space.
   */
  keep?: (line: Buffer) => boolean;
  /** A line went over maxLineBytes and is being discarded (called once per such line). */
  onOversized?: () => void;
  /** Cheap filter run on kept lines: true queues the line in the side queue instead of the main one. */
  side?: (line: Buffer) => boolean;
  /** Limits of the side queue (default SIDE_MAX_LINES, SIDE_MAX_BYTES). */
  sideMaxLines?: number;
  sideMaxBytes?: number;
}

/** Notifications held at most before the oldest go (a burst of progress and log lines fits). */
export const SIDE_MAX_LINES = 64;
export const SIDE_MAX_BYTES = 1024 * 1024;

interface Queued {
  /** Arrival order across both queues. */
  readonly seq: number;
  readonly line: Buffer;
}

export class LineQueue {
  private readonly queue: BoundedQueue<Queued>;
  private readonly sideQueue: BoundedQueue<Queued>;
  private nextSeq = 0;
  private readonly maxLineBytes: number;
  private readonly keep: ((line: Buffer) => boolean) | undefined;
  private readonly side: ((line: Buffer) => boolean) | undefined;
  private readonly onOversized: (() => void) | undefined;
  /** Pieces of the line still streaming in (views into read chunks). */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Inside a line already over the limit: everything up to the next newline is thrown away. */
  private discarding = false;
  private oversizedLines = 0;
  private skippedLines = 0;

  constructor(options: LineQueueOptions = {}) {
    this.maxLineBytes = options.maxLineBytes ?? StdioLimits.MAX_LINE_BYTES;
    this.queue = new BoundedQueue<Queued>({
      maxItems: options.maxLines ?? StdioLimits.QUEUE_MAX_LINES,
      maxBytes: options.maxBytes ?? StdioLimits.QUEUE_MAX_BYTES,
      maxItemBytes: this.maxLineBytes,
      sizeOf: (item) => item.line.length,
    });
    this.sideQueue = new BoundedQueue<Queued>({
      maxItems: options.sideMaxLines ?? SIDE_MAX_LINES,
      maxBytes: options.sideMaxBytes ?? SIDE_MAX_BYTES,
      sizeOf: (item) => item.line.length,
    });
    this.keep = options.keep;
    this.side = options.side;
    this.onOversized = options.onOversized;
  }

  /** Lines queued now (both queues). */
  get length(): number {
    return this.queue.length + this.sideQueue.length;
  }

  /** Bytes queued now (complete lines only, both queues). */
  get bytes(): number {
    return this.queue.bytes + this.sideQueue.bytes;
  }

  /** Bytes of the line still streaming in; never above maxLineBytes. */
  get partialBytes(): number {
    return this.partBytes;
  }

  /** Complete lines evicted (oldest first) to keep the limits, from either queue. */
  get dropped(): number {
    return this.queue.dropped + this.sideQueue.dropped;
  }

  /** Of those, side-queue lines (notifications). */
  get droppedSide(): number {
    return this.sideQueue.dropped;
  }

  /** Lines over maxLineBytes, discarded whole. */
  get oversized(): number {
    return this.oversizedLines;
  }

  /** Lines the `keep` filter turned away. */
  get skipped(): number {
    return this.skippedLines;
  }

  /** Feeds bytes read from the child; complete lines are queued at once. */
  write(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (this.discarding) {
        if (newline === -1) return;
        this.discarding = false;
        start = newline + 1;
        continue;
      }
      const end = newline === -1 ? chunk.length : newline;
      if (this.partBytes + (end - start) > this.maxLineBytes) {
        this.oversizedLines++;
        this.parts = [];
        this.partBytes = 0;
        this.onOversized?.();
        if (newline === -1) {
          this.discarding = true;
          return;
        }
        start = newline + 1;
        continue;
      }
      if (newline === -1) {
        this.parts.push(chunk.subarray(start));
        this.partBytes += chunk.length - start;
        return;
      }
      if (this.parts.length === 0) this.publish(chunk.subarray(start, end), true);
      else this.publish(Buffer.concat([...this.parts, chunk.subarray(start, end)], this.partBytes + (end - start)), false);
      this.parts = [];
      this.partBytes = 0;
      start = newline + 1;
    }
  }

  /** The stream ended: a last line without its newline still counts (unless it was oversized). */
  end(): void {
    if (!this.discarding && this.partBytes > 0) this.publish(Buffer.concat(this.parts, this.partBytes), false);
    this.parts = [];
    this.partBytes = 0;
    this.discarding = false;
  }

  /** The oldest queued line, from either queue. */
  shift(): Buffer | undefined {
    const main = this.queue.peek();
    const side = this.sideQueue.peek();
    if (side !== undefined && (main === undefined || side.seq < main.seq)) return this.sideQueue.shift()!.line;
    return this.queue.shift()?.line;
  }

  /** Forgets queued lines and any partial one (the child is gone; its output answers nobody). */
  clear(): void {
    this.queue.clear();
    this.sideQueue.clear();
    this.parts = [];
    this.partBytes = 0;
    this.discarding = false;
  }

  private publish(line: Buffer, isView: boolean): void {
    let length = line.length;
    if (length > 0 && line[length - 1] === CARRIAGE_RETURN) length--;
    if (length === 0) return;
    const text = length === line.length ? line : line.subarray(0, length);
    if (this.keep !== undefined && !this.keep(text)) {
      this.skippedLines++;
      return;
    }
    // A view would keep its whole read chunk alive behind a short line: copy what is kept.
    const item = { seq: this.nextSeq++, line: isView || text !== line ? Buffer.from(text) : text };
    if (this.side?.(text) === true) this.sideQueue.push(item);
    else this.queue.push(item);
  }
}
