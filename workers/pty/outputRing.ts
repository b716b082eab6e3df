/**
 * The raw output ring of one session: the last `capacity` bytes, addressed by absolute offsets
 * (`totalWritten` never goes back), so catch-up and `readRaw` can say exactly where bytes start.
 */

export interface RingRead {
  /** Absolute offset of the first byte returned. */
  start: number;
  /** A copy: the ring keeps overwriting its storage while the copy is on its way. */
  bytes: Buffer;
}

export interface RingReadOptions {
  /** Absolute offset to start from; clamped to [oldestOffset, totalWritten]. */
  offset?: number;
  /** At most this many bytes; without `offset`, the last `limit` bytes. */
  limit?: number;
}

export class OutputRing {
  private readonly storage: Buffer;
  private total = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`ring capacity must be a positive integer, got ${capacity}`);
    this.storage = Buffer.allocUnsafe(capacity);
  }

  /** Bytes ever appended: the absolute offset the next byte will get. */
  get totalWritten(): number {
    return this.total;
  }

  /** Absolute offset of the oldest byte still kept. */
  get oldestOffset(): number {
    return Math.max(0, this.total - this.capacity);
  }

  /** Copies `chunk` in (overwriting the oldest bytes) and returns the absolute offset of its first byte. */
  append(chunk: Uint8Array): number {
    const offset = this.total;
    const length = chunk.length;
    // Only the tail of an oversized chunk can survive; skip copying what would be overwritten at once.
    const src = length > this.capacity ? chunk.subarray(length - this.capacity) : chunk;
    const at = (offset + length - src.length) % this.capacity;
    const first = Math.min(src.length, this.capacity - at);
    this.storage.set(first === src.length ? src : src.subarray(0, first), at);
    if (first < src.length) this.storage.set(src.subarray(first), 0);
    this.total = offset + length;
    return offset;
  }

  /** From `offset` (clamped) up to `limit` bytes, or the last `limit` bytes, or everything kept. */
  read(options: RingReadOptions = {}): RingRead {
    const { start, stop } = readRange(options, this.oldestOffset, this.total);
    return { start, bytes: this.copy(start, stop) };
  }

  private copy(start: number, stop: number): Buffer {
    const length = stop - start;
    const out = Buffer.allocUnsafe(length);
    if (length === 0) return out;
    const at = start % this.capacity;
    const first = Math.min(length, this.capacity - at);
    this.storage.copy(out, 0, at, at + first);
    if (first < length) this.storage.copy(out, first, 0, length - first);
    return out;
  }
}

/**
 * The absolute byte range a read asks for among the kept bytes [oldest, end): from `offset`
 * (clamped) up to `limit` bytes, or the last `limit` bytes, or everything kept.
 */
export function readRange(options: RingReadOptions, oldest: number, end: number): { start: number; stop: number } {
  if (options.offset !== undefined) {
    const start = Math.min(Math.max(options.offset, oldest), end);
    return { start, stop: options.limit === undefined ? end : Math.min(end, start + options.limit) };
  }
  return { start: options.limit === undefined ? oldest : Math.max(oldest, end - options.limit), stop: end };
}
