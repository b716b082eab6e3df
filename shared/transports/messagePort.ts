/**
 * Transport over worker_threads: either end of a MessageChannel, `parentPort` inside a worker,
 * or the parent's `Worker` object. Frames go out as fresh buffers that are moved, so structured
 * clone never copies a whole msgpack arena or Buffer pool slab sitting behind a small view.
 * Small frames written in one turn of the event loop leave together in one message: each
 * postMessage costs the sender a lock and often a wake-up of the other thread, and under load
 * (many proxied calls in flight) that, not the bytes, is what the hop costs.
 */

import type { MessagePort, Worker } from 'node:worker_threads';

import { readU32, writeU32 } from '../codec.js';
import { ErrorCode, SupervisorError } from '../errors.js';
import { ownsBuffer, type Transport, TransportBase } from './transport.js';

interface PostTarget {
  postMessage(value: unknown, transferList?: ArrayBuffer[]): void;
}

/**
 * Payloads at least this big travel as their own buffer ([header, payload]): moved as they are when
 * `transfer` allows and they own their buffer, else copied once into one that does. The receiver
 * then owns them too, so a worker can pass them on (or echo them) without another copy. Smaller
 * payloads are copied with their header into one buffer: one message of one moved buffer is the
 * cheapest thing to post, and a copy this small costs less than a second transferable.
 */
const SEPARATE_PAYLOAD_MIN_BYTES = 16 * 1024;
/** Bytes before the header in a combined frame: the header length, u32. */
const COMBINED_PREFIX_BYTES = 4;
/**
 * First u32 of a batch message, where a lone combined frame has its header length (headers are
 * far smaller). Then per frame: [u32 frame length][combined frame].
 */
const BATCH_MARK = 0xffffffff;
const BATCH_RECORD_PREFIX_BYTES = 4;
/**
 * First u32 of a close notice ([u32 CLOSE_MARK][reason, UTF-8]), posted by the side that closes.
 * A Worker object has no 'close' event for its parentPort, so without it a worker that closed its
 * side left the parent's requests waiting for their timeout; and a worker never heard the parent close.
 */
const CLOSE_MARK = 0xfffffffe;
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Writes [u32 header length][header][payload] at `at`. */
function writeCombined(target: Uint8Array, at: number, header: Uint8Array, payload: Uint8Array | undefined): void {
  writeU32(target, at, header.length);
  target.set(header, at + COMBINED_PREFIX_BYTES);
  if (payload !== undefined) target.set(payload, at + COMBINED_PREFIX_BYTES + header.length);
}

/** Uninitialised and unpooled when big (every byte is written next); small ones are cheaper zeroed. */
const allocate = (bytes: number): Uint8Array => (bytes >= SEPARATE_PAYLOAD_MIN_BYTES ? Buffer.allocUnsafeSlow(bytes) : new Uint8Array(bytes));

abstract class PortTransportBase extends TransportBase {
  protected abstract readonly target: PostTarget;
  /** Small frames waiting for the end of this turn: header copies (the originals are views into msgpackr's arena) and payloads. */
  private pending: Array<[Uint8Array, Uint8Array | undefined]> = [];
  private pendingBytes = 0;
  private flushScheduled = false;

  protected write(header: Uint8Array, payload: Uint8Array | undefined, transfer: boolean): void {
    if (payload !== undefined && payload.length >= SEPARATE_PAYLOAD_MIN_BYTES) {
      this.postPending(); // frames keep their order
      let body = payload;
      if (!transfer || !ownsBuffer(payload)) {
        body = allocate(payload.length);
        body.set(payload);
      }
      // The header is a view into msgpackr's arena: cloning the view would copy the whole arena.
      this.target.postMessage([new Uint8Array(header), body], [body.buffer as ArrayBuffer]);
      return;
    }
    // The payload is handed over (Transport.send), so keeping the reference until the flush is safe.
    this.pending.push([new Uint8Array(header), payload]);
    this.pendingBytes += COMBINED_PREFIX_BYTES + header.length + (payload?.length ?? 0);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // After the I/O callbacks of this turn: everything they wrote leaves in one message.
      setImmediate(this.postPending);
    }
  }

  override flush(): void {
    this.postPending();
  }

  /** Posts the pending frames: one alone as a combined frame, several as one batch. */
  private readonly postPending = (): void => {
    this.flushScheduled = false;
    const frames = this.pending;
    if (frames.length === 0) return;
    this.pending = [];
    const bytes = this.pendingBytes;
    this.pendingBytes = 0;
    if (frames.length === 1) {
      const frame = allocate(bytes);
      writeCombined(frame, 0, frames[0]![0], frames[0]![1]);
      this.target.postMessage(frame, [frame.buffer as ArrayBuffer]);
      return;
    }
    const batch = allocate(COMBINED_PREFIX_BYTES + frames.length * BATCH_RECORD_PREFIX_BYTES + bytes);
    writeU32(batch, 0, BATCH_MARK);
    let at = COMBINED_PREFIX_BYTES;
    for (const [header, payload] of frames) {
      const length = COMBINED_PREFIX_BYTES + header.length + (payload?.length ?? 0);
      writeU32(batch, at, length);
      writeCombined(batch, at + BATCH_RECORD_PREFIX_BYTES, header, payload);
      at += BATCH_RECORD_PREFIX_BYTES + length;
    }
    this.target.postMessage(batch, [batch.buffer as ArrayBuffer]);
  };

  /** Flushes what was sent, then tells the peer the link is closed and why. */
  protected postClose(reason: SupervisorError): void {
    this.flush();
    const why = utf8.encode(reason.message);
    const notice = new Uint8Array(COMBINED_PREFIX_BYTES + why.length);
    writeU32(notice, 0, CLOSE_MARK);
    notice.set(why, COMBINED_PREFIX_BYTES);
    try {
      this.target.postMessage(notice, [notice.buffer]);
    } catch {
      // The peer is already gone: nobody is left to tell.
    }
  }

  protected readonly onPortMessage = (message: unknown): void => {
    if (message instanceof Uint8Array && message.length >= COMBINED_PREFIX_BYTES) {
      const mark = readU32(message, 0);
      if (mark === BATCH_MARK) return this.deliverBatch(message);
      if (mark === CLOSE_MARK) {
        this.finish(new SupervisorError(ErrorCode.CHANNEL_CLOSED, `peer closed the link: ${utf8Decoder.decode(message.subarray(COMBINED_PREFIX_BYTES))}`));
        return;
      }
      if (this.deliverCombined(message)) return;
    } else if (Array.isArray(message) && message.length === 2 && message[0] instanceof Uint8Array && message[1] instanceof Uint8Array) {
      this.deliver(message[0], message[1]);
      return;
    }
    this.finish(new SupervisorError(ErrorCode.INVALID_MESSAGE, 'bad frame: a non-channel value was posted on the channel port'));
  };

  /** One combined frame: [u32 header length][header][payload]. False when it is malformed. */
  private deliverCombined(frame: Uint8Array): boolean {
    const end = COMBINED_PREFIX_BYTES + readU32(frame, 0);
    if (end > frame.length) return false;
    this.deliver(frame.subarray(COMBINED_PREFIX_BYTES, end), end < frame.length ? frame.subarray(end) : undefined);
    return true;
  }

  private deliverBatch(batch: Uint8Array): void {
    let at = COMBINED_PREFIX_BYTES;
    while (at < batch.length && !this.closed) {
      const end = at + BATCH_RECORD_PREFIX_BYTES + (at + BATCH_RECORD_PREFIX_BYTES <= batch.length ? readU32(batch, at) : Infinity);
      if (end > batch.length || !this.deliverCombined(batch.subarray(at + BATCH_RECORD_PREFIX_BYTES, end))) {
        this.finish(new SupervisorError(ErrorCode.INVALID_MESSAGE, 'bad frame: a batch record overruns its message'));
        return;
      }
      at = end;
    }
  }

  protected readonly onMessageError = (err: Error): void => {
    this.finish(new SupervisorError(ErrorCode.INVALID_MESSAGE, `bad frame: message could not be deserialised: ${err.message}`));
  };
}

class PortTransport extends PortTransportBase {
  private readonly onPortClose = (): void => {
    this.finish(new SupervisorError(ErrorCode.CHANNEL_CLOSED, 'message port closed by the peer'));
  };

  constructor(protected readonly target: MessagePort) {
    super();
    target.on('message', this.onPortMessage);
    target.on('messageerror', this.onMessageError);
    target.on('close', this.onPortClose);
  }

  protected release(reason: SupervisorError): void {
    this.postClose(reason); // what was sent before the close still reaches the peer, then the close
    this.target.off('message', this.onPortMessage);
    this.target.off('messageerror', this.onMessageError);
    this.target.off('close', this.onPortClose);
    // Closing tells the peer at once; for `parentPort` it also lets the worker's loop end.
    this.target.close();
  }
}

class WorkerTransport extends PortTransportBase {
  private lastError: Error | undefined;

  private readonly onError = (err: Error): void => {
    // An uncaught exception in the worker; 'exit' follows and closes with this as the reason.
    this.lastError = err;
  };

  private readonly onExit = (code: number): void => {
    const why = this.lastError ? `: ${this.lastError.message}` : '';
    this.finish(new SupervisorError(ErrorCode.CHANNEL_CLOSED, `worker exited with code ${code}${why}`, { exitCode: code }));
  };

  constructor(protected readonly target: Worker) {
    super();
    target.on('message', this.onPortMessage);
    target.on('messageerror', this.onMessageError);
    target.on('error', this.onError);
    target.on('exit', this.onExit);
  }

  protected release(reason: SupervisorError): void {
    this.postClose(reason); // the worker's side hears it and can stop serving
    this.target.off('message', this.onPortMessage);
    this.target.off('messageerror', this.onMessageError);
    this.target.off('exit', this.onExit);
    // The 'error' listener stays: without one, a late worker error would crash this process.
    // Stopping the worker is its starter's job (restart policy lives there), not the link's.
  }
}

/** Either end of a MessageChannel, or `parentPort` inside a worker. Attach in the same tick you get the port. */
export function messagePortTransport(port: MessagePort): Transport {
  return new PortTransport(port);
}

/** The parent's side of a worker thread. Attach in the same tick as `new Worker()` so no message is missed. */
export function workerTransport(worker: Worker): Transport {
  return new WorkerTransport(worker);
}
