/**
 * The supervisor's side of the pty flow control (PtyConstants.UNACKED_OUTPUT_BYTES): acks for the
 * output it handled. Its own file so the pty host bench drives the host exactly as tuicd does.
 */
import type { Client } from '../../shared/channel.js';
import type { PtyProtocolT } from '../../shared/protocol/pty.js';

export const OutputAckConstants = {
  /**
   * A session's handled output is acked at the end of the turn once it reaches this (1/8 of
   * UNACKED_OUTPUT_BYTES, so a flood never waits on acks); less waits for ACK_DELAY_MS.
   */
  ACK_EAGER_BYTES: 256 * 1024,
  /**
   * Small output (an echo, a prompt, a slow log) is acked this late, together with everything else
   * pending: one host wake-up per interval instead of one per batch per session. Far below what
   * it takes a session to print UNACKED_OUTPUT_BYTES at these rates.
   */
  ACK_DELAY_MS: 50,
} as const;

type PtyClient = Client<PtyProtocolT>;

/**
 * Bytes handled per session. A session with ACK_EAGER_BYTES pending is acked at the end of the
 * turn; small amounts wait up to ACK_DELAY_MS and leave together (each ack wakes the host).
 */
export class OutputAcks {
  private readonly pending = new Map<string, number>();
  private immediate: NodeJS.Immediate | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly client: PtyClient) {}

  add(sessionId: string, bytes: number): void {
    const total = (this.pending.get(sessionId) ?? 0) + bytes;
    this.pending.set(sessionId, total);
    if (total >= OutputAckConstants.ACK_EAGER_BYTES) this.immediate ??= setImmediate(this.flush);
    else if (this.timer === undefined && this.immediate === undefined) this.timer = setTimeout(this.flush, OutputAckConstants.ACK_DELAY_MS).unref();
  }

  private readonly flush = (): void => {
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.immediate = undefined;
    this.timer = undefined;
    if (this.client.closed) return this.pending.clear();
    for (const [session_id, bytes] of this.pending) this.client.emit('ack', { session_id, bytes });
    this.pending.clear();
  };
}
