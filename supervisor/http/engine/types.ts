/**
 * The HTTP engine seam. tuicd serves on uWebSockets.js where a build loads for this Node and libc,
 * otherwise on Node's own `http` with the `ws` package. Everything above this folder (dispatch,
 * routes, SSE, viewers) talks to these interfaces only.
 *
 * They are the subset of uWS's own API that tuicd uses, with uWS's semantics: on the fast engine
 * the native request and response objects pass through unwrapped (no allocation per request), a
 * WebSocket is wrapped once for its sends (uwsSocket.ts), and the node engine implements the same
 * contract in adapters.
 */

/** Bytes or text a response or socket accepts. */
export type Chunk = string | Uint8Array;

/** Valid only inside the callback that received it (uWS discards it on return). */
export interface EngineRequest {
  /** Lower-cased method name. */
  getMethod(): string;
  getCaseSensitiveMethod(): string;
  /** The path, still %-encoded, without the query. */
  getUrl(): string;
  /** The raw query string without `?`; undefined or '' when absent. */
  getQuery(): string | undefined;
  /** A header by lower-case name; '' when absent. */
  getHeader(lowerCaseName: string): string;
  /** Every header, names lower-cased. */
  forEach(cb: (name: string, value: string) => void): void;
  /** The `index`-th `:param` of the WebSocket route pattern that matched, still %-encoded. */
  getParameter(index: number): string;
  /**
   * The connection is TLS. Only the node engine has it: uWS's native request lacks it, and a uWS
   * app never serves TLS (HttpEngine.servesDualProtocol), so absent means plain.
   */
  isTls?(): boolean;
}

export interface EngineResponse {
  writeStatus(status: string): EngineResponse;
  writeHeader(name: string, value: string): EngineResponse;
  /** A body chunk (chunked encoding). False: it was buffered, wait for onWritable. */
  write(chunk: Chunk): boolean;
  /** Ends the response with `body`; Content-Length is written for it. */
  end(body?: Chunk, closeConnection?: boolean): EngineResponse;
  /** Ends a response whose Content-Length header the caller wrote (HEAD). Call with no arguments. */
  endWithoutBody(): EngineResponse;
  /** Writes part of a body of `totalSize` bytes: [accepted without backpressure, response ended]. */
  tryEnd(chunk: Uint8Array, totalSize: number): [boolean, boolean];
  /** Body bytes written so far. */
  getWriteOffset(): number;
  /** Called when a write that returned false may continue; return false to be called again. */
  onWritable(handler: (offset: number) => boolean): EngineResponse;
  /** Required before leaving the request callback without answering: the client went away. */
  onAborted(handler: () => void): EngineResponse;
  /** Request body chunks; the buffer is only valid during the call. Must be attached in the callback. */
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): EngineResponse;
  /** Runs `cb` so that everything it writes leaves in as few packets as possible. */
  cork(cb: () => void): EngineResponse;
  /** Drops the connection without an answer. */
  close(): EngineResponse;
  /**
   * The node engine's whole answer before the body, then a lingering close (lingeringAnswer.ts,
   * which does the same with uWS's own calls where this is absent). Must be the only answer.
   */
  endLingering?(status: string, headers: ReadonlyArray<readonly [string, string]>, body: string, onClosed: () => void): void;
  /** The peer's address as text (IPv4-mapped IPv6 for IPv4 peers on some engines). */
  getRemoteAddressAsText(): ArrayBuffer | Uint8Array;
  /** Inside a WebSocket route's upgrade handler: accept, with the data the socket carries. */
  upgrade<U>(userData: U, secWebSocketKey: string, secWebSocketProtocol: string, secWebSocketExtensions: string, context: unknown): void;
}

/** send() results, as uWS numbers them. */
export const SendStatus = { BACKPRESSURE: 0, SUCCESS: 1, DROPPED: 2 } as const;

export interface EngineSocket<U> {
  /** 1 sent, 0 sent but buffered, 2 dropped (the buffer was over maxBackpressure). */
  send(message: Chunk, isBinary: boolean): number;
  cork(cb: () => void): EngineSocket<U>;
  getBufferedAmount(): number;
  getUserData(): U;
  /** A clean close with a code and a reason in the close frame. */
  end(code?: number, reason?: string): void;
}

/** What a WebSocket route asks of the engine. Callbacks never throw (the server guards them). */
export interface EngineWsBehavior<U> {
  /** Bytes buffered per socket past which send() drops instead of queueing. */
  maxBackpressure: number;
  maxPayloadLength: number;
  /** A socket that sends nothing this long is pinged; one that does not answer is closed. */
  idleTimeoutS: number;
  upgrade(res: EngineResponse, req: EngineRequest, context: unknown): void;
  open?(ws: EngineSocket<U>): void;
  message?(ws: EngineSocket<U>, message: ArrayBuffer, isBinary: boolean): void;
  drain?(ws: EngineSocket<U>): void;
  close?(ws: EngineSocket<U>, code: number): void;
}

/** A bound listener. */
export interface EngineListenSocket {
  /** The bound TCP port (0 for a unix socket). */
  readonly port: number;
  /** Stops accepting connections; open ones keep being served. */
  close(): void;
}

/** One app per listener: the WebSocket routes plus one catch-all HTTP handler. */
export interface EngineApp {
  /** Every request that is not a WebSocket upgrade of a `ws` route. */
  any(handler: (res: EngineResponse, req: EngineRequest) => void): void;
  ws<U>(pattern: string, behavior: EngineWsBehavior<U>): void;
  /** Null when the path cannot be bound. The caller removed any stale file first. */
  listenUnix(path: string): Promise<EngineListenSocket | null>;
  /** Null when the port is taken: a port another process holds is never shared. */
  listenTcp(host: string, port: number): Promise<EngineListenSocket | null>;
  /** Present on an app made with `tls`: later handshakes use these credentials (a renewed certificate). */
  setTlsCredentials?(credentials: TlsCredentials): void;
}

export type EngineName = 'uws' | 'node';

/** A PEM certificate chain and its unencrypted private key, already checked (tlsCredentials.ts). */
export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

export interface AppOptions {
  /** Serve TLS and plain HTTP on the same port, told apart by each connection's first byte. TCP only. */
  tls?: TlsCredentials;
}

export interface HttpEngine {
  readonly name: EngineName;
  /** Which build runs, and for the node engine why uWS does not: shown by /health and the start line. */
  readonly detail: string;
  /** Whether createApp accepts `tls` (select.ts dualProtocolEngine picks an engine that does). */
  readonly servesDualProtocol: boolean;
  createApp(options?: AppOptions): EngineApp;
}
