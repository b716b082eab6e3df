/** One request/response in flight: the request context handlers see plus the bookkeeping of its answer. */
import type { EngineResponse } from './engine/types.js';

import { type CancelListener, type Cancellation, CancelSource } from '../../shared/cancellation.js';
import { isLoopbackIp, normalizeIp } from './remoteAddress.js';
import type { HttpMethod, ListenerKind, RequestContext } from './types.js';

const EMPTY: Buffer = Buffer.alloc(0);
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * A class rather than an object literal: one allocation per request with prototype getters, which
 * matters at tens of thousands of requests per second (the query and the abort signal are built
 * only when a handler asks).
 */
export class Exchange implements RequestContext, Cancellation {
  params: Readonly<Record<string, string>> = NO_PARAMS;
  body: Buffer = EMPTY;
  /** The client went away; nothing may be written any more. */
  aborted = false;
  /** The answer was written. */
  done = false;
  /** The request carried more than one Host header (the TCP guard refuses it). */
  duplicateHost = false;
  /** The TCP guard refused the request: its answer carries no CORS grant. */
  refused = false;
  /** Trusted: the unix socket, or TCP credentials that passed (RequestContext.authenticated). */
  authenticated: boolean;
  /** The session token let the request in (RequestContext.byToken): its streams end when the token is replaced. */
  byToken = false;
  /** Still inside uWS's callback: the response is corked and needs no abort handler yet. */
  inCallback = true;
  timer: NodeJS.Timeout | undefined = undefined;
  /** Built when someone first listens for the end of the request (or it ends first). */
  private cancel: CancelSource | undefined = undefined;
  private parsedQuery: URLSearchParams | undefined = undefined;

  private peer: string | undefined = undefined;

  /**
   * `peerSource`: the TCP response, asked for the peer address only when someone needs it (auth,
   * loopback checks). Copying it out of uWS costs more than the rest of a /health request, which
   * never needs it. Null on the unix socket.
   */
  constructor(
    readonly method: HttpMethod,
    readonly path: string,
    private readonly rawQuery: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly listener: ListenerKind,
    private readonly peerSource: EngineResponse | null,
    readonly tls: boolean,
  ) {
    this.authenticated = listener === 'socket';
  }

  /**
   * 'unix' on the socket; the peer IP on TCP. uWS forbids touching a response once it was answered
   * or aborted: asked first after that, the address is unknown ('') and never counts as loopback.
   */
  get remoteAddress(): string {
    if (this.peer !== undefined) return this.peer;
    if (this.peerSource === null) return (this.peer = 'unix');
    if (this.aborted || this.done) return '';
    return (this.peer = normalizeIp(Buffer.from(this.peerSource.getRemoteAddressAsText() as ArrayBuffer).toString()));
  }

  /** The socket listener is always loopback; on TCP the peer address decides. */
  get isLoopback(): boolean {
    return this.listener === 'socket' || isLoopbackIp(this.remoteAddress);
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  get signal(): AbortSignal {
    return (this.cancel ??= new CancelSource()).signal;
  }

  get cancellation(): Cancellation {
    return this;
  }

  get cancelReason(): Error | undefined {
    return this.cancel?.cancelReason;
  }

  onCancel(listener: CancelListener): () => void {
    return (this.cancel ??= new CancelSource()).onCancel(listener);
  }

  /** Stops the handler's work: the client left or the request timed out. */
  abort(): void {
    if (this.timer) clearTimeout(this.timer);
    (this.cancel ??= new CancelSource()).cancel(new DOMException('The request ended before its answer (client gone or timed out)', 'AbortError'));
  }
}
