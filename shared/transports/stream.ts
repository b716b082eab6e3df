/**
 * Transport over a pair of byte streams: a child's stdio pipes (`child.stdout`, `child.stdin` on
 * the parent; `process.stdin`, `process.stdout` in the child) or an IPC socket. It takes the
 * streams as parameters, so shared/ never starts processes itself.
 */

import type { Readable, Writable } from 'node:stream';

import { FRAME_PREFIX_BYTES, FrameDecoder, writeFramePrefix } from '../codec.js';
import { ErrorCode, SupervisorError } from '../errors.js';
import { type Transport, TransportBase } from './transport.js';

const noop = (): void => {};

/**
 * A flushed frame with no other frame pending this turn leaves as one buffer when its payload is at
 * most this big (a keystroke, its echo): copying a few bytes costs less than the cork, writev and
 * end-of-turn callback of the batched path, which every hop of an echo paid.
 */
const INLINE_FLUSH_PAYLOAD_MAX_BYTES = 1024;

class StreamTransport extends TransportBase {
  private readonly decoder = new FrameDecoder((header, payload) => this.deliver(header, payload));
  private corked = false;

  private readonly onData = (chunk: Buffer): void => {
    try {
      this.decoder.push(chunk);
    } catch (err) {
      // One bad frame closes this connection only; the process and other channels live on.
      this.finish(err instanceof SupervisorError ? err : new SupervisorError(ErrorCode.INVALID_MESSAGE, String(err)));
    }
  };

  private readonly onEnd = (): void => {
    this.finish(new SupervisorError(ErrorCode.CHANNEL_CLOSED, 'peer closed its stream (process exited?)'));
  };

  private readonly onError = (err: Error): void => {
    this.finish(new SupervisorError(ErrorCode.CHANNEL_CLOSED, `stream error: ${err.message}`));
  };

  /**
   * Writes made in one turn of the event loop leave in one writev, at its check phase: the pty host
   * sends each session's batches from its own callback (a PTY read, a coalescing timer), and a
   * write per callback cost a syscall and a wake-up of the reader each (10,000 a second with 500
   * busy sessions). A frame someone waits on (an echo, a keystroke) is sent with `flush`.
   */
  private readonly uncork = (): void => {
    if (!this.corked) return; // flushed earlier in this tick
    this.corked = false;
    this.writable.uncork();
  };

  constructor(
    private readonly readable: Readable,
    private readonly writable: Writable,
  ) {
    super();
    readable.on('data', this.onData);
    readable.on('end', this.onEnd);
    readable.on('close', this.onEnd);
    readable.on('error', this.onError);
    writable.on('error', this.onError);
    writable.on('close', this.onEnd);
  }

  protected write(header: Uint8Array, payload: Uint8Array | undefined, _transfer: boolean, flush: boolean): void {
    const payloadBytes = payload?.length ?? 0;
    if (flush && !this.corked && payloadBytes <= INLINE_FLUSH_PAYLOAD_MAX_BYTES) {
      const frame = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + header.length + payloadBytes);
      writeFramePrefix(frame, 0, header.length, payloadBytes);
      frame.set(header, FRAME_PREFIX_BYTES);
      if (payload !== undefined) frame.set(payload, FRAME_PREFIX_BYTES + header.length);
      this.writable.write(frame);
      return;
    }
    if (!this.corked) {
      this.corked = true;
      this.writable.cork();
      setImmediate(this.uncork);
    }
    // Prefix and header share one small (pooled) buffer; the payload is written as it is, never
    // copied: a fresh buffer per PTY chunk would cost more in GC than the extra iovec in writev.
    // write()'s backpressure signal is not used: a protocol that streams bulk data bounds it with
    // its own credits (the pty contract's `ack` and UNACKED_OUTPUT_BYTES), which also works on a
    // MessagePort, which has none.
    const head = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + header.length);
    writeFramePrefix(head, 0, header.length, payloadBytes);
    head.set(header, FRAME_PREFIX_BYTES);
    this.writable.write(head);
    if (payload !== undefined && payloadBytes > 0) this.writable.write(payload);
  }

  override flush(): void {
    if (this.corked) this.uncork();
  }

  protected release(): void {
    this.readable.off('data', this.onData);
    this.readable.off('end', this.onEnd);
    this.readable.off('close', this.onEnd);
    this.writable.off('close', this.onEnd);
    // The 'error' listeners stay: a late EPIPE on a dead peer must not crash this process.
    this.readable.on('error', noop);
    this.writable.on('error', noop);
    this.readable.off('error', this.onError);
    this.writable.off('error', this.onError);
    // Ending our side tells a child to exit (EOF on its stdin); destroying the reader stops
    // buffering bytes nobody will read.
    if (this.corked) this.uncork();
    if ((this.readable as unknown) === this.writable) {
      // One duplex (the pty host's fd 3 socket): destroying it now would drop the frames still
      // queued for writing, a big payload sent just before the close among them. Drain what the
      // peer still sends, and destroy once our end is flushed (or failed).
      this.readable.resume();
      this.writable.end(() => this.readable.destroy());
      return;
    }
    this.writable.end();
    this.readable.destroy();
  }
}

/** A channel link over `readable` (frames in) and `writable` (frames out). */
export function streamTransport(readable: Readable, writable: Writable): Transport {
  return new StreamTransport(readable, writable);
}
