/**
 * One raw-mode viewer of a session: gap-free catch-up from the ring, live frames, a bounded send
 * queue, and its place in the session's flow control (viewerFlow.ts): the producer waits for it
 * while it drains, never for one that stalled.
 */
import { StringDecoder } from 'node:string_decoder';

import type { Disposable } from '../../shared/disposable.js';
import type { ParsedEvent } from '../../shared/protocol/parsedEvents.js';
import { PtyConstants } from '../../shared/protocol/pty.js';
import type { SessionService } from '../sessions/sessionService.js';
import { endViewer } from './endViewer.js';
import { outputFrames } from './outputFrames.js';
import { type FlowViewer, type ViewerFlow, ViewerFlowConstants } from './viewerFlow.js';
import type { ViewerSocket } from './viewerSocket.js';

export const ViewerConstants = {
  /** Past this much unsent data the viewer leaves live fan-out; the PTY and other viewers never wait for it. */
  HIGH_WATER_BYTES: 512 * 1024,
  /**
   * Once drained below this, a lagging viewer catches up from the ring and rejoins. High enough that
   * the socket still has bytes to send while the ring read makes its round trip to the pty host.
   */
  LOW_WATER_BYTES: 256 * 1024,
  /**
   * A lagging viewer's catch-up reads the ring this much at a time: it can only take about this much
   * before it lags again, and reading the whole 2 MiB ring on every rejoin spends the CPU the viewer
   * is already short of exactly when the machine is busiest.
   */
  CATCH_UP_READ_BYTES: 512 * 1024,
} as const;

/** uWS send() results: 1 sent, 0 sent but buffered (backpressure), 2 dropped over maxBackpressure. */
const SEND_OK = 1;
const SEND_DROPPED = 2;
/** uWS reports drain as the socket empties; this poll covers a drain that comes while we still had too much queued. */
const DRAIN_POLL_MS = 50;

/**
 * Output frames stay under 16 KiB: the uWS engine sends a longer message as fragments (its build
 * corrupts a direct write of 16 KiB or more under backpressure, see supervisor/http/engine/uwsSocket.ts),
 * and whole frames of this size cost a viewer less to take apart than fragments of a larger one.
 */
const MAX_FRAME_BYTES = 16_000;

export interface ViewerData {
  sessionId: string;
  /** Resume point from `?offset=`; absent = the whole ring. */
  offset: number | undefined;
  /** `?encoding=binary`: output as binary frames of raw bytes instead of JSON text frames. */
  binary: boolean;
}

export class RawViewer implements FlowViewer {
  /** Absolute offset of the next byte this viewer needs. */
  private next = 0;
  /** Live output that arrived while the catch-up read was in flight. */
  private pending: Array<{ offset: number; bytes: Uint8Array }> | null = [];
  private lagging = false;
  private catchingUp = false;
  private again = false;
  private closed = false;
  private exitSent = false;
  private readonly decoder = new StringDecoder('utf8');
  private readonly subscription: Disposable;
  private readonly parsedSubscription: Disposable;
  private drainPoll: NodeJS.Timeout | undefined;
  /** `next` is known (the first ring read came back) and the viewer holds its session's acks. */
  private counted = false;
  /** Lagging with no progress for STALL_MS: it no longer holds the session until it drains. */
  private stalled = false;
  /** While lagging: the least buffered amount seen, and when it last went down (progress). */
  private lowestBuffered = 0;
  private progressAt = 0;
  private readonly flowEntry: Disposable | undefined;

  constructor(
    private readonly ws: ViewerSocket,
    private readonly sessions: SessionService,
    private readonly sessionId: string,
    startOffset: number | undefined,
    private readonly binary: boolean,
    private readonly flow?: ViewerFlow,
  ) {
    this.flowEntry = flow?.add(sessionId, this);
    // Subscribe before reading the ring, so nothing written in between is lost; offsets dedupe the overlap.
    this.subscription = sessions.onOutput(sessionId, (offset, bytes) => this.onLive(offset, bytes));
    // Parser events are small and not in the ring: sent as they come, catching up or not.
    this.parsedSubscription = sessions.onParsed(sessionId, (events) => this.sendParsed(events));
    void this.catchUp(startOffset ?? 0, startOffset === undefined);
  }

  private onLive(offset: number, bytes: Uint8Array): void {
    if (this.closed) return;
    if (this.pending) {
      this.pending.push({ offset, bytes });
      return;
    }
    if (this.lagging) return; // the ring still has it; drain() resumes from `next`
    this.deliver(offset, bytes);
  }

  /**
   * Reads the ring from `from` (all of it on the first catch-up, CATCH_UP_READ_BYTES at a time on a
   * rejoin) and sends it in 64 KiB pieces, then replays the live output that arrived meanwhile.
   */
  private async catchUp(from: number, wholeRing: boolean): Promise<void> {
    if (this.catchingUp) {
      // A drain during a catch-up: run another pass right after this one.
      this.again = true;
      return;
    }
    this.catchingUp = true;
    this.pending ??= [];
    try {
      // The first catch-up sends the whole ring (or from ?offset=); a rejoin reads in bounded steps.
      const limit = wholeRing || from === 0 ? undefined : ViewerConstants.CATCH_UP_READ_BYTES;
      let at = from;
      for (;;) {
        const r = await this.sessions.readRaw(this.sessionId, at, limit);
        if (this.closed) return;
        // The ring no longer holds [at, start): say so instead of silently skipping.
        if (r.start > at && !wholeRing) {
          this.sendJson({ type: 'resync', from: at, to: r.start, missed: r.start - at });
          // A character cut by the gap must not be completed by unrelated bytes from after it.
          this.decoder.end();
        }
        // After the first read `next` is `at` (all of the last read went out): the ring's start either way.
        this.next = r.start;
        // It reads again: it holds the session's acks from here (a stalled viewer counts again).
        this.counted = true;
        this.stalled = false;
        for (let i = 0; i < r.bytes.length && !this.lagging; i += PtyConstants.CATCH_UP_CHUNK_BYTES) {
          this.deliver(r.start + i, r.bytes.subarray(i, i + PtyConstants.CATCH_UP_CHUNK_BYTES), r.total_written);
        }
        const end = r.start + r.bytes.length;
        // Done once the ring had nothing more (live batches queued meanwhile take it from here), or lagging again.
        if (limit === undefined || this.lagging || end >= r.total_written || r.bytes.length === 0) break;
        at = end;
      }
      const queued = this.pending;
      this.pending = null;
      for (const p of queued) if (!this.lagging) this.deliver(p.offset, p.bytes);
    } catch (err) {
      this.sendJson({ type: 'error', error: (err as Error).message });
      this.pending = null;
      // Its place in the stream is unknown now: it must not hold the session.
      this.counted = false;
    } finally {
      this.flow?.moved(this.sessionId);
      this.catchingUp = false;
    }
    if (this.again && !this.lagging && !this.closed) {
      this.again = false;
      return this.catchUp(this.next, false);
    }
    const record = this.sessions.resolve(this.sessionId);
    if (record?.exit && !this.lagging) this.sendExit(record.exit.reason);
  }

  /** Sends the part of [offset, offset+len) this viewer has not had yet. */
  private deliver(offset: number, bytes: Uint8Array, totalWritten?: number): void {
    const end = offset + bytes.length;
    if (end <= this.next) return;
    if (offset > this.next) {
      // Something before these bytes was not sent: never skip ahead, fetch the gap from the ring.
      this.startLagging();
      return;
    }
    const slice = offset < this.next ? bytes.subarray(this.next - offset) : bytes;
    this.next = end;
    const status = this.sendOutput(slice, totalWritten);
    if (status === SEND_DROPPED) {
      // uWS refused the frame: those bytes must come again from the ring.
      this.next = end - slice.length;
      this.startLagging();
    } else if (this.ws.getBufferedAmount() > ViewerConstants.HIGH_WATER_BYTES) this.startLagging();
    // Live output is acked after its fan-out anyway; a catch-up's progress may release held acks.
    if (totalWritten !== undefined) this.flow?.moved(this.sessionId);
  }

  flowPosition(): number | undefined {
    if (!this.counted || this.stalled || this.closed) return undefined;
    return this.next - this.ws.getBufferedAmount();
  }

  /**
   * Sends bytes as frames under MAX_FRAME_BYTES (see there); returns the worst uWS send status.
   * JSON frames whose escaping pushes them over the limit are cut smaller again.
   */
  private sendOutput(bytes: Uint8Array, totalWritten?: number): number {
    let worst = SEND_OK;
    const note = (status: number) => {
      if (status === SEND_DROPPED || (status !== SEND_OK && worst === SEND_OK)) worst = status;
    };
    this.ws.cork(() => {
      if (this.binary) {
        for (let i = 0; i < bytes.length; i += MAX_FRAME_BYTES) note(this.ws.send(bytes.subarray(i, i + MAX_FRAME_BYTES), true));
        return;
      }
      const text = this.decoder.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      for (const frame of outputFrames(text, totalWritten, MAX_FRAME_BYTES)) note(this.ws.send(frame, false));
    });
    return worst;
  }

  /** Leaves live fan-out until the socket drains; uWS's drain callback (or the poll, if it stays quiet) brings it back. */
  private startLagging(): void {
    if (this.lagging) return;
    this.lagging = true;
    this.lowestBuffered = this.ws.getBufferedAmount();
    this.progressAt = Date.now();
    this.drainPoll ??= setInterval(() => this.pollDrain(), DRAIN_POLL_MS);
  }

  /**
   * While lagging: progress (the socket took bytes) releases the session's acks it held; none for
   * STALL_MS, and it stops holding them. Then the drain check.
   */
  private pollDrain(): void {
    const buffered = this.ws.getBufferedAmount();
    if (buffered < this.lowestBuffered) {
      this.lowestBuffered = buffered;
      this.progressAt = Date.now();
      this.flow?.moved(this.sessionId);
    } else if (!this.stalled && Date.now() - this.progressAt >= ViewerFlowConstants.STALL_MS) {
      this.stalled = true;
      this.flow?.moved(this.sessionId);
    }
    this.onDrain();
  }

  /** uWS says the socket drained: a lagging viewer catches up from the ring and rejoins live output. */
  onDrain(): void {
    if (this.closed || !this.lagging || this.ws.getBufferedAmount() > ViewerConstants.LOW_WATER_BYTES) return;
    this.lagging = false;
    clearInterval(this.drainPoll);
    this.drainPoll = undefined;
    void this.catchUp(this.next, false);
  }

  onSessionClosed(reason: string): void {
    if (this.closed || this.pending || this.lagging) return; // catch-up sends it at the end
    this.sendExit(reason);
  }

  /** The session's last frames, then the socket closes (1000, reason): nothing more will come. */
  private sendExit(reason: string): void {
    if (this.closed || this.exitSent) return;
    this.exitSent = true;
    this.sendJson({ type: 'exit', session_id: this.sessionId });
    this.sendJson({ type: 'closed', session_id: this.sessionId, reason });
    endViewer(this.ws, reason);
  }

  /**
   * One message per event (the frame clients know), under one cork: an agent prints hundreds of
   * events per MB, and corking each send on its own made a socket write per event.
   */
  private sendParsed(events: readonly ParsedEvent[]): void {
    if (this.closed || events.length === 0) return;
    this.ws.cork(() => {
      for (const event of events) this.ws.send(JSON.stringify({ type: 'parsed', event }), false);
    });
  }

  private sendJson(frame: object): void {
    if (this.closed) return;
    this.ws.cork(() => this.ws.send(JSON.stringify(frame), false));
  }

  dispose(): void {
    this.closed = true;
    clearInterval(this.drainPoll);
    this.flowEntry?.dispose();
    this.subscription.dispose();
    this.parsedSubscription.dispose();
  }
}
