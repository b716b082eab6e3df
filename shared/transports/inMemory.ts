/** Two linked in-process transports (MCP's InMemoryTransport.createLinkedPair idea): the hub's links to its stdio pumps, and tests. */

import { ErrorCode, SupervisorError } from '../errors.js';
import { type Transport, TransportBase } from './transport.js';

class InMemoryTransport extends TransportBase {
  peer: InMemoryTransport | undefined;

  protected write(header: Uint8Array, payload: Uint8Array | undefined): void {
    const peer = this.peer;
    // Delivered on a microtask, never inside send(): real links are asynchronous, and code that
    // only works with synchronous delivery would break on them.
    if (peer !== undefined) queueMicrotask(() => peer.deliver(header, payload));
  }

  protected release(): void {
    const peer = this.peer;
    this.peer = undefined;
    if (peer !== undefined) {
      peer.peer = undefined;
      // Frames already queued reach the peer before it hears the close, as on a real pipe.
      queueMicrotask(() => peer.finish(new SupervisorError(ErrorCode.CHANNEL_CLOSED, 'peer closed the in-memory link')));
    }
  }
}

/** Returns `[a, b]`: what `a` sends, `b` receives, and the reverse; closing one closes both. */
export function createLinkedPair(): [Transport, Transport] {
  const a = new InMemoryTransport();
  const b = new InMemoryTransport();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
