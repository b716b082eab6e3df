/**
 * What the channel needs from a link: send a frame (header bytes plus an optional binary payload
 * beside it), hear frames, hear the close. Three implementations: MessagePort, byte stream, in-memory.
 */

import { type Disposable, toDisposable } from '../disposable.js';
import { ErrorCode, SupervisorError } from '../errors.js';

export type MessageListener = (header: Uint8Array, payload: Uint8Array | undefined) => void;
export type CloseListener = (reason: SupervisorError) => void;

export interface Transport {
  /**
   * Sends one frame. The payload is handed over: do not modify it afterwards (a stream may still
   * be writing it). With `transfer`, a MessagePort may move a big payload that spans its whole
   * ArrayBuffer instead of copying it (the sender's view is then detached). After close, frames
   * are dropped silently: `onClose` has already told everyone. Received payloads may be views
   * into a larger buffer, and an empty payload arrives as `undefined`. With `flush`, the frame (and
   * any sent before it) goes on the wire now, as `send` then `flush()` would, but a link may write a
   * lone frame more cheaply knowing it up front.
   */
  send(header: Uint8Array, payload?: Uint8Array, transfer?: boolean, flush?: boolean): void;
  /**
   * Puts the frames sent so far on the wire now rather than at the end of the tick: for a frame
   * someone is waiting on (a keystroke, its echo), where the work left in this tick would delay it.
   */
  flush(): void;
  /** Frames that arrive before the first listener are kept for it, so wiring order cannot lose a hello. */
  onMessage(listener: MessageListener): Disposable;
  /** Fires once; a listener added after the close is called on the next microtask. */
  onClose(listener: CloseListener): Disposable;
  /** Closes the link; `reason` (default CHANNEL_CLOSED "closed locally") goes to close listeners. */
  close(reason?: SupervisorError): void;
  readonly closed: boolean;
}

/** True when `bytes` is the whole of a plain ArrayBuffer, so transferring it detaches nothing else. */
export function ownsBuffer(bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
}

/** Listener bookkeeping and close-once semantics shared by every transport. */
export abstract class TransportBase implements Transport {
  private readonly messageListeners: MessageListener[] = [];
  private readonly closeListeners = new Set<CloseListener>();
  private early: Array<[Uint8Array, Uint8Array | undefined]> | undefined = [];
  private closeReason: SupervisorError | undefined;

  get closed(): boolean {
    return this.closeReason !== undefined;
  }

  send(header: Uint8Array, payload?: Uint8Array, transfer = false, flush = false): void {
    if (this.closeReason !== undefined) return;
    this.write(header, payload, transfer, flush);
    if (flush) this.flush();
  }

  /** Links that write each frame at once have nothing to flush; the stream transport batches per tick. */
  flush(): void {}

  onMessage(listener: MessageListener): Disposable {
    this.messageListeners.push(listener);
    const early = this.early;
    if (early !== undefined) {
      this.early = undefined;
      for (const [header, payload] of early) this.deliver(header, payload);
    }
    return toDisposable(() => {
      const i = this.messageListeners.indexOf(listener);
      if (i >= 0) this.messageListeners.splice(i, 1);
    });
  }

  onClose(listener: CloseListener): Disposable {
    const reason = this.closeReason;
    if (reason !== undefined) {
      queueMicrotask(() => listener(reason));
      return toDisposable(() => {});
    }
    this.closeListeners.add(listener);
    return toDisposable(() => this.closeListeners.delete(listener));
  }

  close(reason?: SupervisorError): void {
    this.finish(reason ?? new SupervisorError(ErrorCode.CHANNEL_CLOSED, 'channel closed locally'));
  }

  /** Writes one frame to the underlying link; only called while open. `flush()` follows when `flush` is set. */
  protected abstract write(header: Uint8Array, payload: Uint8Array | undefined, transfer: boolean, flush: boolean): void;
  /** Detaches from the underlying link; called once, on close, with the reason close listeners get. */
  protected abstract release(reason: SupervisorError): void;

  protected deliver(header: Uint8Array, payload: Uint8Array | undefined): void {
    if (this.closeReason !== undefined) return;
    if (this.early !== undefined) {
      this.early.push([header, payload]);
      return;
    }
    for (const listener of this.messageListeners) listener(header, payload);
  }

  protected finish(reason: SupervisorError): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.early = undefined;
    try {
      this.release(reason);
    } finally {
      const listeners = [...this.closeListeners];
      this.closeListeners.clear();
      for (const listener of listeners) listener(reason);
    }
  }
}
