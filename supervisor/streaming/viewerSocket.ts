/** What a viewer needs of its WebSocket; the HTTP engine's socket is one (the viewers know no HTTP). */
export interface ViewerSocket {
  /** 1 sent, 0 sent but buffered, 2 dropped (the buffer was over the route's backpressure limit). */
  send(message: string | Uint8Array, isBinary: boolean): number;
  /** Runs `cb` with the socket's writes batched into one syscall. */
  cork(cb: () => void): unknown;
  getBufferedAmount(): number;
  /** A clean close with a code and a reason in the close frame. */
  end(code?: number, reason?: string): void;
}
