/**
 * The supervisor's side of the pty flow control (PtyConstants.UNACKED_OUTPUT_BYTES): acks for the
 * output it handled, each session's held back to what its live viewers allow (AckLimiter). Its own
 * file so the pty host bench drives the host exactly as tuicd does.
 */
import type { Client } from '../../shared/channel.js';
import { PtyConstants, type PtyProtocolT } from '../../shared/protocol/pty.js';

export const OutputAckConstants = {
  /**
   * A session's ackable output is acked at the end of the turn once it reaches this (1/8 of
   * UNACKED_OUTPUT_BYTES, so a flood never waits on acks); less waits for ACK_DELAY_MS.
   */
  ACK_EAGER_BYTES: 256 * 1024,
  /**
   * Small output (an echo, a prompt, a slow log) is acked this late, together with everything else
   * pending: one host wake-up per interval instead of one per batch per session. Far below what
   * it takes a session to print UNACKED_OUTPUT_BYTES at these rates.
   */
  ACK_DELAY_MS: 50,
  /**
   * A session held back by its limit with more than half the host's window unacked may have its
   * PTY stopped (the host reads again at half): its limit is read again this often until that
   * clears, since a viewer's socket draining is not reported reliably on either engine.
   */
  HELD_RECHECK_MS: 20,
} as const;

/** Who may hold a session's acks back: its live viewers (streaming/viewerFlow.ts). */
export interface AckLimiter {
  /** Absolute offset up to which the session's output may be acked now; +Infinity when nothing holds it. */
  ackLimit(sessionId: string): number;
}

type PtyClient = Client<PtyProtocolT>;

/** One session's output as far as this supervisor got it (`received`) and acked it, as absolute offsets. */
interface SessionAcks {
  received: number;
  acked: number;
}

const NO_LIMIT: AckLimiter = { ackLimit: () => Number.POSITIVE_INFINITY };

/**
 * Bytes handled per session. A session with ACK_EAGER_BYTES ackable is acked at the end of the
 * turn; small amounts wait up to ACK_DELAY_MS and leave together (each ack wakes the host). Output
 * past the limiter's offset stays unacked until `release` says the limit rose.
 */
export class OutputAcks {
  private readonly sessions = new Map<string, SessionAcks>();
  /** Sessions with something new to ack since the last flush (output, or a risen limit). */
  private readonly dirty = new Set<string>();
  private immediate: NodeJS.Immediate | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Sessions held back with the host possibly stopped (HELD_RECHECK_MS), and the timer that rereads their limits. */
  private readonly held = new Set<string>();
  private recheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: PtyClient,
    private readonly limiter: AckLimiter = NO_LIMIT,
  ) {}

  /** The supervisor handled the batch [offset, offset + bytes) of a session's output. */
  add(sessionId: string, offset: number, bytes: number): void {
    const end = offset + bytes;
    const s = this.sessions.get(sessionId);
    // The first batch seen (everything before it was another supervisor's to ack), or an id reused from 0.
    if (s === undefined || offset < s.received) this.sessions.set(sessionId, { received: end, acked: offset });
    else s.received = end;
    this.schedule(sessionId);
  }

  /** The session's limit may have risen (a viewer moved on, left, or stopped counting). */
  release(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (s !== undefined && s.acked < s.received) this.schedule(sessionId);
  }

  private ackable(sessionId: string, s: SessionAcks): number {
    return Math.max(0, Math.min(s.received, this.limiter.ackLimit(sessionId)) - s.acked);
  }

  private schedule(sessionId: string): void {
    this.dirty.add(sessionId);
    if (this.immediate !== undefined) return;
    const s = this.sessions.get(sessionId)!;
    const ackable = this.ackable(sessionId, s);
    if (ackable >= OutputAckConstants.ACK_EAGER_BYTES) this.immediate = setImmediate(this.flush);
    else if (ackable > 0) this.timer ??= setTimeout(this.flush, OutputAckConstants.ACK_DELAY_MS).unref();
    else this.noteHeld(sessionId, s);
  }

  /** A session with more than half the host's window unacked may have its PTY stopped: its limit is reread until that clears. */
  private noteHeld(sessionId: string, s: SessionAcks): void {
    if (s.received - s.acked > PtyConstants.UNACKED_OUTPUT_BYTES / 2) {
      this.held.add(sessionId);
      this.recheck ??= setTimeout(this.recheckHeld, OutputAckConstants.HELD_RECHECK_MS).unref();
    } else this.held.delete(sessionId);
  }

  private readonly flush = (): void => {
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.immediate = undefined;
    this.timer = undefined;
    if (this.client.closed) {
      this.sessions.clear();
      this.dirty.clear();
      this.held.clear();
      return;
    }
    for (const session_id of this.dirty) {
      const s = this.sessions.get(session_id);
      if (s === undefined) continue;
      const bytes = this.ackable(session_id, s);
      if (bytes > 0) {
        this.client.emit('ack', { session_id, bytes });
        s.acked += bytes;
      }
      // All acked: forgotten (the next batch starts afresh); otherwise held until a release or a recheck.
      if (s.acked >= s.received) this.sessions.delete(session_id);
      this.noteHeld(session_id, s);
    }
    this.dirty.clear();
  };

  private readonly recheckHeld = (): void => {
    this.recheck = undefined;
    for (const sessionId of this.held) this.dirty.add(sessionId);
    this.flush();
  };
}
