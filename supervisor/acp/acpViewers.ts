/**
 * The WebSocket viewers of one ACP connection's stream. Each viewer is sent the journal after its
 * cursor, then every new frame; one whose socket buffers past HIGH_WATER stops taking live frames
 * and is caught up from the journal when it drains, so it sees every frame once, in order. A viewer
 * the journal has left behind (it dropped frames the viewer never got) is sent a terminal `gap`.
 */
import type { ViewerSocket } from '../streaming/viewerSocket.js';
import type { AcpJournal } from './acpJournal.js';

export const AcpViewerLimits = {
  /** Past this many bytes buffered, live frames wait in the journal instead. */
  HIGH_WATER_BYTES: 256 * 1024,
  /** Frames sent per catch-up batch (one cork). */
  BATCH: 256,
  /**
   * A lagging viewer is also looked at this often: the engine reports a drain only after a send it
   * buffered or dropped, and a viewer can fall behind on the buffered amount alone.
   */
  DRAIN_POLL_MS: 50,
} as const;

/** ViewerSocket.send's answers: sent (or buffered), and dropped over the backpressure limit. */
const SENT = 1;
const DROPPED = 2;

/** Close code of a normal end (the connection was deleted, or a gap). */
const NORMAL_CLOSE = 1000;

export interface AcpViewer {
  readonly socket: ViewerSocket;
  /** The last seq this viewer was sent. */
  sentSeq: number;
  /** Live frames wait in the journal until the socket drains. */
  behind: boolean;
  ended: boolean;
  /** While behind: the drain poll. */
  poll?: NodeJS.Timeout | undefined;
}

export class AcpViewers {
  private readonly viewers = new Set<AcpViewer>();

  constructor(
    private readonly journal: AcpJournal,
    private readonly gapFrame: (after: number) => string,
  ) {}

  get count(): number {
    return this.viewers.size;
  }

  /**
   * A viewer after `after` (a cursor the journal covers, checked before the upgrade), registered
   * but sent nothing yet: `start` sends the catch-up, which can end the socket (a gap), so the
   * caller records the viewer first and its close finds it.
   */
  add(socket: ViewerSocket, after: number): AcpViewer {
    const viewer: AcpViewer = { socket, sentSeq: after, behind: true, ended: false };
    this.viewers.add(viewer);
    return viewer;
  }

  /** The first catch-up: the journal after the viewer's cursor, then live frames. */
  start(viewer: AcpViewer): void {
    this.catchUp(viewer);
  }

  remove(viewer: AcpViewer): void {
    viewer.ended = true;
    this.stopPolling(viewer);
    this.viewers.delete(viewer);
  }

  /** A frame was appended to the journal: up-to-date viewers get it now. */
  publish(seq: number, text: string): void {
    for (const viewer of this.viewers) {
      if (viewer.behind || viewer.ended) continue;
      if (viewer.socket.getBufferedAmount() > AcpViewerLimits.HIGH_WATER_BYTES) {
        this.fallBehind(viewer);
        continue;
      }
      // Corked like the terminal viewers: uWS sends a corked write at once.
      let status = SENT;
      viewer.socket.cork(() => (status = viewer.socket.send(text, false)));
      // Dropped (over the socket's backpressure limit): it comes again from the journal on drain.
      if (status === DROPPED) this.fallBehind(viewer);
      else viewer.sentSeq = seq;
    }
  }

  drain(viewer: AcpViewer): void {
    if (viewer.behind && !viewer.ended && viewer.socket.getBufferedAmount() <= AcpViewerLimits.HIGH_WATER_BYTES / 2) this.catchUp(viewer);
  }

  /** Closes every viewer (the connection was deleted): the `end` frame was published first. */
  closeAll(reason: string): void {
    for (const viewer of this.viewers) {
      // Whatever the journal still holds for it, the `end` frame included, goes first (into the socket's buffer).
      if (viewer.behind && this.journal.covers(viewer.sentSeq)) for (const entry of this.journal.after(viewer.sentSeq)) viewer.socket.send(entry.text, false);
      this.end(viewer, reason);
    }
    this.viewers.clear();
  }

  private catchUp(viewer: AcpViewer): void {
    while (!viewer.ended) {
      if (!this.journal.covers(viewer.sentSeq)) {
        const gap = this.gapFrame(viewer.sentSeq);
        viewer.socket.cork(() => viewer.socket.send(gap, false));
        this.end(viewer, 'gap');
        this.viewers.delete(viewer);
        return;
      }
      const batch = this.journal.after(viewer.sentSeq, AcpViewerLimits.BATCH);
      if (batch.length === 0) {
        viewer.behind = false;
        this.stopPolling(viewer);
        return;
      }
      let dropped = false;
      viewer.socket.cork(() => {
        for (const entry of batch) {
          if (viewer.socket.send(entry.text, false) === DROPPED) {
            dropped = true;
            return;
          }
          viewer.sentSeq = entry.seq;
        }
      });
      // The rest when the socket drains.
      if (dropped || viewer.socket.getBufferedAmount() > AcpViewerLimits.HIGH_WATER_BYTES) {
        this.fallBehind(viewer);
        return;
      }
    }
  }

  private fallBehind(viewer: AcpViewer): void {
    viewer.behind = true;
    viewer.poll ??= setInterval(() => this.drain(viewer), AcpViewerLimits.DRAIN_POLL_MS);
  }

  private stopPolling(viewer: AcpViewer): void {
    clearInterval(viewer.poll);
    viewer.poll = undefined;
  }

  private end(viewer: AcpViewer, reason: string): void {
    viewer.ended = true;
    this.stopPolling(viewer);
    try {
      viewer.socket.end(NORMAL_CLOSE, reason);
    } catch {
      // It left first.
    }
  }
}
