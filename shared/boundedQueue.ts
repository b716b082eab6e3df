/**
 * A bounded lossy FIFO: it never blocks the producer. Full means the oldest items go; an item
 * above the single-item limit is discarded whole (never truncated). Used by the stdio upstream
 * pump (256 lines / 8 MiB / 16 MiB per line) and per-subscriber SSE queues.
 */

export interface BoundedQueueOptions<T> {
  /** Most items held at once. */
  maxItems: number;
  /** Most bytes held at once, as measured by `sizeOf`. */
  maxBytes: number;
  /** An item larger than this is discarded whole on push. Default: `maxBytes`. */
  maxItemBytes?: number;
  /** Byte size of one item (e.g. `b => b.length`); called once per push. */
  sizeOf: (item: T) => number;
}

/** What happened to a pushed item. */
export type PushOutcome = 'queued' | 'oversize';

/** Compact the backing arrays once this many slots at the front are dead. */
const COMPACT_AFTER_SLOTS = 1024;

export class BoundedQueue<T> {
  private items: Array<T | undefined> = [];
  private sizes: number[] = [];
  private head = 0;
  private heldBytes = 0;
  private droppedItems = 0;
  private droppedByteCount = 0;
  private oversizeItems = 0;
  private readonly maxItems: number;
  private readonly maxBytes: number;
  private readonly maxItemBytes: number;
  private readonly sizeOf: (item: T) => number;

  constructor(options: BoundedQueueOptions<T>) {
    const { maxItems, maxBytes, sizeOf } = options;
    const maxItemBytes = options.maxItemBytes ?? maxBytes;
    if (!(maxItems >= 1) || !(maxBytes >= 0) || !(maxItemBytes >= 0)) {
      throw new RangeError(`BoundedQueue: maxItems must be >= 1 and byte limits >= 0 (got ${maxItems}, ${maxBytes}, ${maxItemBytes})`);
    }
    this.maxItems = maxItems;
    this.maxBytes = maxBytes;
    this.maxItemBytes = maxItemBytes;
    this.sizeOf = sizeOf;
  }

  /** Items held now. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Items lost so far: evicted as oldest, or discarded as oversize. */
  get dropped(): number {
    return this.droppedItems;
  }

  /** Bytes lost so far, same accounting as `dropped`. */
  get droppedBytes(): number {
    return this.droppedByteCount;
  }

  /** Of `dropped`, how many were discarded whole for exceeding `maxItemBytes`. */
  get oversize(): number {
    return this.oversizeItems;
  }

  /**
   * Appends `item`, evicting the oldest items until the limits hold. An item within the
   * single-item limit is always kept, even alone above `maxBytes` (the stdio queue's per-line
   * limit, 16 MiB, is deliberately above its 8 MiB total).
   */
  push(item: T): PushOutcome {
    const size = this.sizeOf(item);
    if (size > this.maxItemBytes) {
      this.oversizeItems++;
      this.countDrop(size);
      return 'oversize';
    }
    while (this.length > 0 && (this.length >= this.maxItems || this.heldBytes + size > this.maxBytes)) {
      this.countDrop(this.sizes[this.head]!);
      this.removeHead();
    }
    this.items.push(item);
    this.sizes.push(size);
    this.heldBytes += size;
    return 'queued';
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    return this.removeHead();
  }

  /** The oldest item, left in place. */
  peek(): T | undefined {
    return this.length === 0 ? undefined : this.items[this.head];
  }

  /** Removes and returns everything, oldest first (one flush per writable tick for SSE). */
  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.clear();
    return out;
  }

  /** Forgets every item without counting them as dropped (the consumer went away). */
  clear(): void {
    this.items = [];
    this.sizes = [];
    this.head = 0;
    this.heldBytes = 0;
  }

  private countDrop(size: number): void {
    this.droppedItems++;
    this.droppedByteCount += size;
  }

  private removeHead(): T {
    const item = this.items[this.head] as T;
    this.heldBytes -= this.sizes[this.head]!;
    this.items[this.head] = undefined; // Let the item be collected before compaction.
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.sizes = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER_SLOTS && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
