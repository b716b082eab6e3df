/**
 * The current screen of one session (issue #3 item 4), on demand: a ScreenGrid created on the first
 * read and fed from the raw output ring only when someone reads, with just the bytes that arrived
 * since the last read. A session nobody reads costs no parsing; a grid unread for IDLE_DROP_MS is
 * dropped (the next read replays the ring). Never a parse per chunk for every session.
 */

import type { Disposable } from '../../shared/disposable.js';
import type { ResultOf } from '../../shared/protocol/defineProtocol.js';
import type { PtyProtocolT } from '../../shared/protocol/pty.js';
import type { RingRead, RingReadOptions } from './outputRing.js';
import { ScreenGrid } from './screenGrid.js';
import { answerScreenQuery, type ScreenAnswer, type ScreenQuery } from './screenQueries.js';
import { type RawScreenRow, redactScreenRows } from './screenRows.js';

export const ScreenConstants = {
  /** A grid nobody read for this long is dropped (~9 KB at 80×24, ~8 KB more once the alternate screen is used). */
  IDLE_DROP_MS: 60_000,
  /** A replay from a ring that has wrapped starts at the first ESC or line start within this window, not mid-sequence. */
  RESYNC_WINDOW_BYTES: 4096,
  /**
   * A glance (the output parser's reads and a tombstone's final screen, `snapshot({ glance: true })`) with more output than this unseen
   * by the grid (the end of a flood) draws a screen of its own from these last bytes, and leaves the
   * grid as it is. Feeding the grid costs about twice what the rest of the pty host spends per byte,
   * and the parser reads the screen whenever a flood pauses: catching up on up to 2 MiB each time
   * cost more CPU than moving the flood. 128 KiB is some fifty full 80×24 repaints.
   */
  GLANCE_BYTES: 128 * 1024,
} as const;

export type ScreenSnapshot = ResultOf<PtyProtocolT, 'readScreen'>;

/** The part of OutputRing the screen reads (absolute offsets, so it can tell what it has not seen). */
export interface ScreenSource {
  /** The screen shows bytes up to here (the ring may hold more, not yet handed on). */
  readonly totalWritten: number;
  readonly oldestOffset: number;
  read(options: RingReadOptions): RingRead;
}

export interface ScreenModelOptions {
  idleDropMs?: number;
}

/** Where a replay that starts inside the stream can begin cleanly: at an ESC, or after a line feed. */
function resyncPoint(bytes: Uint8Array): number {
  const end = Math.min(bytes.length, ScreenConstants.RESYNC_WINDOW_BYTES);
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 0x1b) return i;
    if (bytes[i] === 0x0a) return i + 1;
  }
  return 0;
}

export class ScreenModel implements Disposable {
  private grid: ScreenGrid | undefined;
  /** Absolute ring offset of the next byte the grid has not been given. */
  private fedTo = 0;
  /** Grids built from scratch (first reads, replays after an idle drop or after the ring overtook the grid). */
  private replays = 0;
  /** The last render, reused while the grid and the bytes it has seen are the same. */
  private rendered: { grid: ScreenGrid; fedTo: number; snapshot: ScreenSnapshot } | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly idleDropMs: number;

  constructor(
    private readonly source: ScreenSource,
    private rows: number,
    private cols: number,
    options: ScreenModelOptions = {},
  ) {
    this.idleDropMs = options.idleDropMs ?? ScreenConstants.IDLE_DROP_MS;
  }

  /** Whether a grid is held right now (a read creates it; idleness drops it). */
  get active(): boolean {
    return this.grid !== undefined;
  }

  /** Memory the held grid takes (0 while none is held), in bytes. */
  get heldBytes(): number {
    return this.grid?.heldBytes ?? 0;
  }

  /** How many times the grid was rebuilt from the ring (tests and diagnostics). */
  get replayCount(): number {
    return this.replays;
  }

  /**
   * The screen as of every byte in the ring now. A `glance` far behind the output (more than
   * GLANCE_BYTES unseen) is drawn from the last GLANCE_BYTES alone, on a grid of its own.
   */
  snapshot(options: { glance?: boolean } = {}): ScreenSnapshot {
    if (options.glance === true && this.unseenBytes() > ScreenConstants.GLANCE_BYTES) return this.glanceAtTail();
    const grid = this.catchUp();
    this.armIdleDrop();
    // Log-mode viewers ask every 200 ms: an unchanged grid is not rendered and redacted again.
    if (this.rendered === undefined || this.rendered.grid !== grid || this.rendered.fedTo !== this.fedTo) {
      this.rendered = { grid, fedTo: this.fedTo, snapshot: render(grid) };
    }
    return this.rendered.snapshot;
  }

  /** A question about the screen as of every byte in the ring now (screenQueries.ts). */
  query(q: ScreenQuery): ScreenAnswer {
    const grid = this.catchUp();
    this.armIdleDrop();
    return answerScreenQuery(grid, q);
  }

  /** The output so far was drawn at the old size: a held grid takes it first, then resizes. */
  resize(rows: number, cols: number): void {
    this.rows = rows;
    this.cols = cols;
    this.rendered = undefined;
    if (this.grid === undefined) return;
    this.catchUp().resize(rows, cols);
  }

  dispose(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.grid = undefined;
    this.rendered = undefined;
  }

  /** Bytes the next catch-up would feed the grid. */
  private unseenBytes(): number {
    const oldest = this.source.oldestOffset;
    const from = this.grid === undefined || this.fedTo < oldest ? oldest : this.fedTo;
    return this.source.totalWritten - from;
  }

  /** The screen drawn from the last GLANCE_BYTES only: a grid made for this read, the held one untouched. */
  private glanceAtTail(): ScreenSnapshot {
    const grid = new ScreenGrid(this.rows, this.cols);
    const end = this.source.totalWritten;
    const { bytes } = this.source.read({ offset: end - ScreenConstants.GLANCE_BYTES, limit: ScreenConstants.GLANCE_BYTES });
    const skip = resyncPoint(bytes);
    grid.write(skip > 0 ? bytes.subarray(skip) : bytes);
    return render(grid);
  }

  /** Hands the grid (built if needed) every ring byte it has not seen. */
  private catchUp(): ScreenGrid {
    let grid = this.grid;
    const end = this.source.totalWritten;
    if (grid === undefined || this.fedTo < this.source.oldestOffset) {
      // First read, or the ring overwrote bytes this grid never saw: start over from what the ring holds.
      grid = this.grid = new ScreenGrid(this.rows, this.cols);
      this.replays++;
      const oldest = this.source.oldestOffset;
      const { start, bytes } = this.source.read({ offset: oldest, limit: Math.max(0, end - oldest) });
      const skip = start > 0 ? resyncPoint(bytes) : 0;
      grid.write(skip > 0 ? bytes.subarray(skip) : bytes);
      this.fedTo = start + bytes.length;
    } else if (this.fedTo < end) {
      const { start, bytes } = this.source.read({ offset: this.fedTo, limit: end - this.fedTo });
      grid.write(bytes);
      this.fedTo = start + bytes.length;
    }
    return grid;
  }

  private armIdleDrop(): void {
    if (this.idleTimer !== undefined) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      this.grid = undefined;
      this.rendered = undefined;
    }, this.idleDropMs);
    this.idleTimer.unref();
  }
}

function render(grid: ScreenGrid): ScreenSnapshot {
  const raw: RawScreenRow[] = [];
  for (let y = 0; y < grid.rows; y++) raw.push({ text: grid.rowText(y), wrapped: grid.isWrapped(y) });
  return {
    rows: redactScreenRows(raw, grid.cursorRow),
    cursor_row: grid.cursorRow,
    cursor_col: grid.cursorCol,
    alt_screen: grid.altScreen,
    cols: grid.cols,
    rows_count: grid.rows,
  };
}
