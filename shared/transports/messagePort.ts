/**
 * Transport over worker_threads: either end of a MessageChannel, `parentPort` inside a worker,
 * or the parent's `Worker` object. Frames go out as fresh buffers that are moved, so structured
 * clone never copies a whole msgpack arena or Buffer pool slab sitting behind a small view.
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

/** Uninitialised and unpooled when big (every byte is written next); small ones are cheaper zeroed. */
const allocate = (bytes: number): Uint8Array => (bytes >= SEPARATE_PAYLOAD_MIN_BYTES ? Buffer.allocUnsafeSlow(bytes) : new Uint8Array(bytes));

abstract class PortTransportBase extends TransportBase {
  protected abstract readonly target: PostTarget;

  protected write(header: Uint8Array, payload: Uint8Array | undefined, transfer: boolean): void {
    if (payload !== undefined && payload.length >= SEPARATE_PAYLOAD_MIN_BYTES) {
      let body = payload;
      if (!transfer || !ownsBuffer(payload)) {
        body = allocate(payload.length);
        body.set(payload);
      }
      // The header is a view into msgpackr's arena: cloning the view would copy the whole arena.
      this.target.postMessage([new Uint8Array(header), body], [body.buffer as ArrayBuffer]);
      return;
    }
    // [u32 header length][header][payload]; structured clone never sees a view into a bigger buffer.
    const frame = allocate(COMBINED_PREFIX_BYTES + header.length + (payload?.length ?? 0));
    writeU32(frame, 0, header.length);
    frame.set(header, COMBINED_PREFIX_BYTES);
    if (payload !== undefined) frame.set(payload, COMBINED_PREFIX_BYTES + header.length);
    this.target.postMessage(frame, [frame.buffer as ArrayBuffer]);
  }

  protected readonly onPortMessage = (message: unknown): void => {
    if (message instanceof Uint8Array && message.length >= COMBINED_PREFIX_BYTES) {
      const end = COMBINED_PREFIX_BYTES + readU32(message, 0);
      if (end <= message.length) {
        this.deliver(message.subarray(COMBINED_PREFIX_BYTES, end), end < message.length ? message.subarray(end) : undefined);
        return;
      }
    } else if (Array.isArray(message) && message.length === 2 && message[0] instanceof Uint8Array && message[1] instanceof Uint8Array) {
      this.deliver(message[0], message[1]);
      return;
    }
    this.finish(new SupervisorError(ErrorCode.INVALID_MESSAGE, 'bad frame: a non-channel value was posted on the channel port'));
  };

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

  protected release(): void {
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

  protected release(): void {
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
