/** One request/response in flight: the request context handlers see plus the bookkeeping of its answer. */
import { isLoopbackIp, normalizeIp } from './remoteAddress.js';
import type { HttpMethod, ListenerKind, RequestContext } from './types.js';

const EMPTY: Buffer = Buffer.alloc(0);
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * A class rather than an object literal: one allocation per request with prototype getters, which
 * matters at tens of thousands of requests per second (the query and the abort signal are built
 * only when a handler asks).
 */
export class Exchange implements RequestContext {
  params: Readonly<Record<string, string>> = NO_PARAMS;
  body: Buffer = EMPTY;
  /** The client went away; nothing may be written any more. */
  aborted = false;
  /** The answer was written. */
  done = false;
  /** Still inside uWS's callback: the response is corked and needs no abort handler yet. */
  inCallback = true;
  timer: NodeJS.Timeout | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private parsedQuery: URLSearchParams | undefined = undefined;

  private peer: string | undefined = undefined;

  /** `rawPeer`: uWS's textual peer address (TCP), decoded only when someone asks. */
  constructor(
    readonly method: HttpMethod,
    readonly path: string,
    private readonly rawQuery: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly listener: ListenerKind,
    private readonly rawPeer: ArrayBuffer | null,
  ) {}

  /** 'unix' on the socket; the peer IP on TCP. */
  get remoteAddress(): string {
    return (this.peer ??= this.rawPeer === null ? 'unix' : normalizeIp(Buffer.from(this.rawPeer).toString()));
  }

  /** The socket listener is always loopback; on TCP the peer address decides. */
  get isLoopback(): boolean {
    return this.listener === 'socket' || isLoopbackIp(this.remoteAddress);
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  /** Stops the handler's work: the client left or the request timed out. */
  abort(): void {
    if (this.timer) clearTimeout(this.timer);
    this.controller?.abort();
  }
}
