/**
 * The raw output ring of one session: the last `capacity` bytes, addressed by absolute offsets
 * (`totalWritten` never goes back), so catch-up and `readRaw` can say exactly where bytes start.
 */

import { longLivedBytes } from './longLivedBytes.js';

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

/**
 * Storage comes in chunks of up to CHUNK_BYTES, each allocated when the writes first reach it: a
 * session that printed a prompt holds one small chunk, not the whole 2 MiB bound.
 */
export const OutputRingConstants = {
  /** At glibc's default mmap threshold (128 KiB), so a freed ring goes back to the system. */
  CHUNK_BYTES: 128 * 1024,
  /**
   * The first chunk starts this small and doubles as the writes reach its end (copying what it
   * holds), up to a whole chunk: an idle shell's prompt (tens of bytes) costs 256 bytes, not 16 KiB
   * (a few hundred idle sessions are the common case); a busy ring pays 9 small copies once. The
   * next chunks are whole.
   */
  FIRST_CHUNK_BYTES: 256,
} as const;

export class OutputRing {
  /**
   * chunks[k] holds positions [k × chunkSize, (k + 1) × chunkSize) of the ring; absent until written.
   * Made with the first chunk as a one-element array: an element stored into an empty array grows
   * its storage to 17 slots (152 bytes per idle session).
   */
  private chunks: Buffer[] = NO_CHUNKS;
  private readonly chunkSize: number;
  private total = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`ring capacity must be a positive integer, got ${capacity}`);
    this.chunkSize = Math.min(capacity, OutputRingConstants.CHUNK_BYTES);
  }

  /** Bytes ever appended: the absolute offset the next byte will get. */
  get totalWritten(): number {
    return this.total;
  }

  /** Absolute offset of the oldest byte still kept. */
  get oldestOffset(): number {
    return Math.max(0, this.total - this.capacity);
  }

  /** Memory the ring holds: the chunks allocated so far. */
  get heldBytes(): number {
    let held = 0;
    for (const chunk of this.chunks) held += chunk.length;
    return held;
  }

  /** Copies `chunk` in (overwriting the oldest bytes) and returns the absolute offset of its first byte. */
  append(chunk: Uint8Array): number {
    const offset = this.total;
    const length = chunk.length;
    // Only the tail of an oversized chunk can survive; skip copying what would be overwritten at once.
    const src = length > this.capacity ? chunk.subarray(length - this.capacity) : chunk;
    let at = (offset + length - src.length) % this.capacity;
    let done = 0;
    while (done < src.length) {
      const k = Math.floor(at / this.chunkSize);
      const within = at - k * this.chunkSize;
      const storage = this.storageFor(k, within + Math.min(src.length - done, this.chunkSize - within));
      const n = Math.min(src.length - done, storage.length - within);
      storage.set(n === src.length ? src : src.subarray(done, done + n), within);
      done += n;
      at += n;
      if (at === this.capacity) at = 0;
    }
    this.total = offset + length;
    return offset;
  }

  /** Chunk `k`, holding at least `need` bytes: allocated (or grown, the first one) as writes reach it. */
  private storageFor(k: number, need: number): Buffer {
    const full = Math.min(this.chunkSize, this.capacity - k * this.chunkSize);
    const have = this.chunks[k];
    if (have !== undefined && have.length >= need) return have;
    // The first chunk starts small and doubles; the others are allocated whole.
    const size = k === 0 ? Math.min(full, firstChunkSize(have?.length ?? 0, need)) : full;
    // Outside V8's external-memory accounting: a growing ring would force full collections (longLivedBytes.ts).
    const grown = longLivedBytes(size);
    if (have !== undefined) have.copy(grown);
    if (this.chunks === NO_CHUNKS) this.chunks = k === 0 ? [grown] : [];
    this.chunks[k] = grown;
    return grown;
  }

  /** From `offset` (clamped) up to `limit` bytes, or the last `limit` bytes, or everything kept. */
  read(options: RingReadOptions = {}): RingRead {
    const { start, stop } = readRange(options, this.oldestOffset, this.total);
    return { start, bytes: this.copy(start, stop) };
  }

  private copy(start: number, stop: number): Buffer {
    const length = stop - start;
    const out = Buffer.allocUnsafe(length);
    let at = start % this.capacity;
    let done = 0;
    while (done < length) {
      const k = Math.floor(at / this.chunkSize);
      const within = at - k * this.chunkSize;
      const storage = this.chunks[k]!;
      const n = Math.min(length - done, storage.length - within);
      storage.copy(out, done, within, within + n);
      done += n;
      at += n;
      if (at === this.capacity) at = 0;
    }
    return out;
  }
}

/** Shared by every ring with nothing written yet; never written to. */
const NO_CHUNKS: Buffer[] = [];

/** The first chunk's next size: at least FIRST_CHUNK_BYTES and `need`, and double what it had. */
function firstChunkSize(had: number, need: number): number {
  let size = Math.max(OutputRingConstants.FIRST_CHUNK_BYTES, had * 2);
  while (size < need) size *= 2;
  return size;
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
