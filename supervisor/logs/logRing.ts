/** The fixed-capacity ring behind /logs: oldest entry dropped first, consecutive duplicates folded. */
import { LOG_RING_CAPACITY } from './logEntry.js';
import type { LogEntry, LogInput, LogQuery } from './logEntry.js';

export class LogRing {
  /** Slots in arrival order modulo capacity; `start` is the oldest live slot. */
  private readonly slots: (LogEntry | undefined)[];
  private start = 0;
  private count = 0;
  private nextId = 1;

  constructor(
    readonly capacity = LOG_RING_CAPACITY,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`log ring capacity must be a positive integer, got ${capacity}`);
    this.slots = new Array<LogEntry | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  /**
   * Stores an entry and returns it. An entry identical to the newest one (level, source, message and
   * data_json) is folded into it instead — a client retrying in a loop costs one slot, not the ring.
   */
  push(input: LogInput): LogEntry {
    const newest = this.count > 0 ? this.slots[(this.start + this.count - 1) % this.capacity] : undefined;
    if (
      newest !== undefined &&
      newest.level === input.level &&
      newest.source === input.source &&
      newest.message === input.message &&
      newest.data_json === input.data_json
    ) {
      newest.repeat_count = (newest.repeat_count ?? 0) + 1;
      newest.timestamp_ms = this.now();
      return { ...newest };
    }
    const entry: LogEntry = {
      id: this.nextId++,
      timestamp_ms: this.now(),
      level: input.level,
      source: input.source,
      message: input.message,
      ...(input.data_json !== undefined ? { data_json: input.data_json } : {}),
    };
    if (this.count < this.capacity) {
      this.slots[(this.start + this.count) % this.capacity] = entry;
      this.count++;
    } else {
      // Full: the new entry takes the oldest one's slot.
      this.slots[this.start] = entry;
      this.start = (this.start + 1) % this.capacity;
    }
    return { ...entry };
  }

  /**
   * The newest `limit` entries that pass the filters (all of them for limit 0), oldest first.
   * Filters apply before the limit, so `?source=eval_js&limit=1` is the latest eval_js entry.
   */
  list(query: LogQuery): LogEntry[] {
    const want = query.limit === 0 ? this.count : Math.min(query.limit, this.count);
    const picked: LogEntry[] = [];
    for (let i = this.count - 1; i >= 0 && picked.length < want; i--) {
      const entry = this.slots[(this.start + i) % this.capacity]!;
      if (query.level !== undefined && entry.level !== query.level) continue;
      if (query.source !== undefined && entry.source !== query.source) continue;
      picked.push({ ...entry });
    }
    return picked.reverse();
  }

  /** Empties the ring and returns how many entries it held; ids keep counting from where they were. */
  clear(): number {
    const cleared = this.count;
    this.slots.fill(undefined);
    this.start = 0;
    this.count = 0;
    return cleared;
  }
}
