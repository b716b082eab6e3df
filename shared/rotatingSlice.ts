/**
 * Periodic work over every entry of a map, spread over several turns: each call takes the next few
 * values, continuing where the previous call stopped and wrapping at the end. With 500 sessions a
 * once-a-second pass over all of them at once was one long turn of the event loop; a slice every
 * 1/N second does the same work per second in short turns.
 */
export class RotatingSlice<T> {
  private cursor: Iterator<T> | undefined;

  constructor(private readonly map: Map<unknown, T>) {}

  /** Up to `count` values (never more than the map holds, so none twice in one call); entries added or removed meanwhile are seen or skipped as a Map iterator does. */
  take(count: number): T[] {
    const out: T[] = [];
    const n = Math.min(count, this.map.size);
    let wrapped = false;
    while (out.length < n) {
      this.cursor ??= this.map.values();
      const next = this.cursor.next();
      if (next.done) {
        this.cursor = undefined;
        if (wrapped) break;
        wrapped = true;
        continue;
      }
      out.push(next.value);
    }
    return out;
  }

  /** A slice of a 1/`slices` share of the map, rounded up: `slices` calls cover every entry. */
  takeShare(slices: number): T[] {
    return this.take(Math.ceil(this.map.size / slices));
  }
}
