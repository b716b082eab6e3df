/**
 * The fetch the SDK's StreamableHTTPClientTransport is given for one upstream connection. It is
 * where the proxy's HTTP rules live, because the transport itself has no hook for them:
 *  - credentials (Bearer + custom secret headers) are read from the store on every attempt, each
 *    redirect hop included, so a rotated value is used by the very next request;
 *  - redirects are followed here, same-origin only; a hop to another origin is refused before any
 *    request reaches it;
 *  - a POST answered with a non-2xx status throws a typed error without the body (a server can echo
 *    credentials; the SDK would put the body in its error message);
 *  - each request's exchange runs on that request's own signal, never on the transport's one
 *    long-lived signal: the JSON-RPC id is bound to its scope when the SDK hands the message to
 *    the transport (Protocol.request does that synchronously), and the fetch looks the id up
 *    (AsyncLocalStorage would do it too, but on Node 20 it turns on promise hooks worker-wide);
 *  - a 2xx response that ends without answering its request fails the request instead of leaving
 *    it pending (the SDK silently drops a message it cannot parse and waits forever).
 * Header values never appear in errors or logs.
 */
import { UpstreamNeedsAuthError } from './upstreamClient.js';
import { UPSTREAM_PROTOCOL_VERSION } from '../../shared/protocol/upstreamServer.js';

/** Non-2xx answer to a POST (400/404 mean the session may have expired). */
export class UpstreamHttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The upstream could not be reached, or the connection broke mid-answer. */
export class UpstreamConnectionError extends Error {}

/** A plain 401: the configured credentials were refused. */
export class UpstreamAuthFailedError extends Error {}

/** A redirect that was not followed (other origin, method change, loop). */
export class UpstreamRedirectError extends Error {}

/** A stored secret could not be read or used (the message never quotes it). */
export class UpstreamCredentialError extends Error {}

/** The upstream's answer could not be read as JSON-RPC over Streamable HTTP. */
export class UpstreamProtocolError extends Error {}

/** A 2xx response ended without a valid JSON-RPC answer to the request it carried. */
export class UpstreamNoAnswerError extends Error {}

/** The abort scope of one attempt (its SDK requests) or of one handshake. */
export interface RequestScope {
  readonly controller: AbortController;
  /** JSON-RPC ids bound to it, unbound by release(). */
  readonly ids: string[];
  /** The client request it serves: a server request on its SSE answer is that client's to answer. */
  readonly route?: string;
}

/** Server requests whose route is remembered until their handler asks; a stream that floods them forgets the oldest. */
const MAX_ROUTED_SERVER_REQUESTS = 1024;

export interface UpstreamFetchOptions {
  /** Upstream name: the Bearer account and the prefix of header accounts; named in messages. */
  upstream: string;
  endpoint: URL;
  userAgent: string;
  headers: readonly { name: string; credential_ref: string }[];
  credential: (account: string) => Promise<string | null>;
  /** After a 401 to the bearer an attempt carried: the bearer to retry once with, or null (see mcpHub's refreshCredential). */
  refreshCredential?: (rejected: string) => Promise<string | null>;
  baseFetch: typeof fetch;
  warnMissingHeader: (headerName: string) => void;
  warn: (msg: string) => void;
}

type FetchInput = Parameters<typeof fetch>[0];

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** Bound for messages sent outside a request's scope (cancellation notices, DELETE, replies). */
const SIDE_MESSAGE_MS = 10_000;
const ACCEPT = 'application/json, text/event-stream';

const CONNECTION_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
  UND_ERR_BODY_TIMEOUT: 'response body stalled',
};

/** One per connection (the answer watch is keyed by JSON-RPC id, which restarts per SDK Client). */
export class UpstreamFetch {
  private readonly origin: string;
  /** POSTed requests whose answer has not been seen yet, keyed by String(id). */
  private readonly awaiting = new Map<string, { answered: boolean }>();
  /** Requests whose POST failed here: the SDK's cleanup cancel for them is answered locally. */
  private readonly failed = new Set<string>();
  /** JSON-RPC id → the scope whose signal its exchange runs on. */
  private readonly bound = new Map<string, RequestScope>();
  private readonly serverRequestRoutes = new Map<string, string>();
  private current: RequestScope | undefined;
  private handshake: RequestScope | undefined;
  /** Responses to attempts that carried a bearer token (a 401 to one is a refused credential). */
  private readonly withBearer = new WeakSet<Response>();
  private warnedUnbound = false;

  constructor(private readonly opts: UpstreamFetchOptions) {
    this.origin = opts.endpoint.origin;
  }

  /**
   * The route of the request whose SSE answer carried the server's request `id` (asked once, by
   * the handler that serves it); undefined when it came another way (the GET stream) or unrouted.
   */
  routeOfServerRequest(id: string | number): string | undefined {
    const key = String(id);
    const route = this.serverRequestRoutes.get(key);
    this.serverRequestRoutes.delete(key);
    return route;
  }

  /** Runs `send` (a Client.request call) with requests it sends bound to `scope`. */
  withScope<T>(scope: RequestScope, send: () => T): T {
    const outer = this.current;
    this.current = scope;
    try {
      return send();
    } finally {
      this.current = outer;
    }
  }

  /** The scope for the initialize request (Client.connect sends it after an await). */
  setHandshake(scope: RequestScope | undefined): void {
    this.handshake = scope;
  }

  /** Unbinds the scope's ids once its exchange is over. */
  release(scope: RequestScope): void {
    for (const id of scope.ids.splice(0)) if (this.bound.get(id) === scope) this.bound.delete(id);
  }

  /** Hooked in front of the transport's send: binds each request id to the scope sending it. */
  readonly noteOutgoing = (message: unknown): void => {
    if (typeof message !== 'object' || message === null) return;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if ((typeof id !== 'string' && typeof id !== 'number') || typeof method !== 'string') return;
    const scope = method === 'initialize' ? this.handshake : this.current;
    if (!scope) return;
    const key = String(id);
    this.bound.set(key, scope);
    scope.ids.push(key);
  };

  /** Hooked in front of the transport's onmessage: marks answers as seen. */
  readonly observe = (message: unknown): void => {
    if (typeof message !== 'object' || message === null) return;
    const m = message as Record<string, unknown>;
    if (m['id'] === undefined || m['id'] === null || !('result' in m || 'error' in m)) return;
    const key = String(m['id']);
    const entry = this.awaiting.get(key);
    if (entry) {
      entry.answered = true;
      this.awaiting.delete(key);
    }
  };

  private rememberServerRequest(id: string | number, route: string): void {
    if (this.serverRequestRoutes.size >= MAX_ROUTED_SERVER_REQUESTS) {
      const oldest = this.serverRequestRoutes.keys().next().value;
      if (oldest !== undefined) this.serverRequestRoutes.delete(oldest);
    }
    this.serverRequestRoutes.set(String(id), route);
  }

  readonly fetch = async (input: FetchInput, init: RequestInit = {}): Promise<Response> => {
    const method = (init.method ?? 'GET').toUpperCase();
    const url = new URL(input instanceof Request ? input.url : String(input));
    const rpc = method === 'POST' && typeof init.body === 'string' ? peekRpc(init.body) : undefined;
    // Our own request (a reply to a server request carries an id but no method).
    const requestId = rpc?.id !== undefined && rpc.method !== undefined ? String(rpc.id) : undefined;
    if (rpc?.method === 'notifications/cancelled' && rpc.cancels !== undefined && this.failed.delete(rpc.cancels)) {
      return new Response(null, { status: 202 });
    }
    const live = requestId !== undefined ? this.bound.get(requestId) : undefined;

    let signal: AbortSignal | undefined;
    if (method === 'GET') {
      // The standalone SSE stream: the transport's own signal, one listener per stream.
      signal = init.signal ?? undefined;
    } else if (live) {
      live.controller.signal.throwIfAborted();
      signal = live.controller.signal;
    } else if (requestId !== undefined) {
      // Only if the SDK stopped sending synchronously from Client.request: no signal beats a shared one.
      if (!this.warnedUnbound) {
        this.warnedUnbound = true;
        this.opts.warn('a request reached the upstream fetch without its scope; it runs unbounded');
      }
      signal = undefined;
    } else {
      // Notifications (cancelled, initialized), replies to the server, DELETE: short and bounded.
      signal = AbortSignal.timeout(SIDE_MESSAGE_MS);
    }

    let response: Response;
    try {
      response = await this.followWithinOrigin(url, { ...init, method }, signal);
      // GET and DELETE outcomes are the SDK's to read (405 = no standalone stream / no termination).
      if (method !== 'POST') return response;
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw this.statusError(response, rpc?.method, this.withBearer.has(response));
      }
      const type = mediaType(response);
      if (requestId !== undefined && response.status !== 202 && type !== 'application/json' && type !== 'text/event-stream') {
        await response.body?.cancel().catch(() => {});
        throw new UpstreamProtocolError(
          `Upstream '${this.opts.upstream}' answered ${rpc?.method ?? 'a request'} with content type '${type.slice(0, 60)}', not JSON or SSE`,
        );
      }
    } catch (error) {
      // An aborted request is still pending upstream: its cancellation notice must go out.
      if (requestId !== undefined && !signal?.aborted) this.failed.add(requestId);
      throw error;
    }
    if (live && requestId !== undefined && response.body && response.status !== 204) {
      return this.watchAnswer(response, requestId, rpc?.method ?? 'the request', live);
    }
    return response;
  };

  private async followWithinOrigin(start: URL, init: RequestInit & { method: string }, signal: AbortSignal | undefined): Promise<Response> {
    let target = start;
    let recovered = false;
    for (let hop = 0; ; hop++) {
      signal?.throwIfAborted();
      if (target.origin !== this.origin) {
        throw new UpstreamRedirectError(`Upstream '${this.opts.upstream}': refusing a request to another origin (${target.origin})`);
      }
      const headers = await this.headersFor(init.headers, init.method);
      let response: Response;
      try {
        response = await this.opts.baseFetch(target, { ...init, headers, signal: signal ?? null, redirect: 'manual' });
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw this.connectionError(error);
      }
      // A rejected bearer: once per request, retry with what the store has now or a refreshed token.
      if (response.status === 401 && !recovered && this.opts.refreshCredential) {
        recovered = true;
        const sent = headers.get('authorization');
        const rejected = sent?.startsWith('Bearer ') ? sent.slice(7) : null;
        const fresh = rejected === null ? null : await this.opts.refreshCredential(rejected).catch(() => null);
        if (fresh !== null && fresh !== rejected) {
          await response.body?.cancel().catch(() => {});
          continue; // headersFor reads the credential again: the new generation
        }
      }
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) {
        // Only a refusal is ever asked about: the hot path's successes are not recorded.
        if (!response.ok && headers.has('authorization')) this.withBearer.add(response);
        return response;
      }
      await response.body?.cancel().catch(() => {});
      let next: URL;
      try {
        next = new URL(location, target);
      } catch {
        throw new UpstreamRedirectError(`Upstream '${this.opts.upstream}' redirected to an invalid location; not followed`);
      }
      if (next.origin !== this.origin || next.username !== '' || next.password !== '') {
        throw new UpstreamRedirectError(`Upstream '${this.opts.upstream}' redirected to another origin (${next.origin}); not followed`);
      }
      if (init.method !== 'GET' && response.status !== 307 && response.status !== 308) {
        throw new UpstreamRedirectError(
          `Upstream '${this.opts.upstream}' answered a ${init.method} with HTTP ${response.status}, which would drop the request body; not followed`,
        );
      }
      if (hop >= MAX_REDIRECTS) {
        throw new UpstreamRedirectError(`Upstream '${this.opts.upstream}' redirected more than ${MAX_REDIRECTS} times; not followed`);
      }
      target = next;
    }
  }

  /** The SDK's headers plus ours; secrets are read now, for this attempt only. */
  private async headersFor(sdkHeaders: RequestInit['headers'], method: string): Promise<Headers> {
    const { upstream, headers: custom } = this.opts;
    const headers = new Headers(sdkHeaders);
    const [token, ...values] = await Promise.all([
      this.read(upstream, 'the bearer token'),
      ...custom.map((h) => this.read(`${upstream}/header/${h.credential_ref}`, `header '${h.name}'`)),
    ]);
    custom.forEach((h, i) => {
      const value = values[i];
      if (value === null || value === undefined) this.opts.warnMissingHeader(h.name);
      else this.setSecret(headers, h.name, value, `header '${h.name}'`);
    });
    if (token) this.setSecret(headers, 'authorization', `Bearer ${token}`, 'the bearer token');
    headers.set('user-agent', this.opts.userAgent);
    if (method === 'POST') {
      headers.set('accept', ACCEPT);
      // The SDK sends the negotiated revision after initialize; the initialize POST itself has none.
      if (!headers.has('mcp-protocol-version')) headers.set('mcp-protocol-version', UPSTREAM_PROTOCOL_VERSION);
    }
    return headers;
  }

  private async read(account: string, what: string): Promise<string | null> {
    try {
      return await this.opts.credential(account);
    } catch (error) {
      const detail = error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
      throw new UpstreamCredentialError(`Upstream '${this.opts.upstream}': reading ${what} from the credential store failed (${detail})`);
    }
  }

  private setSecret(headers: Headers, name: string, value: string, what: string): void {
    try {
      headers.set(name, value);
    } catch {
      // Headers' own message quotes the value.
      throw new UpstreamCredentialError(`Upstream '${this.opts.upstream}': the stored value for ${what} is not a valid HTTP header value`);
    }
  }

  private statusError(response: Response, rpcMethod: string | undefined, sentBearer: boolean): Error {
    const { upstream } = this.opts;
    const what = rpcMethod ?? 'a request';
    if (response.status === 401) {
      // Only the presence of the parameter is read: challenge values stay out of diagnostics. A
      // Bearer challenge naming its resource metadata asks for OAuth; so does a bare one to a
      // request that carried no token (discovery then falls back to the well-known paths).
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (/\bbearer\b/i.test(challenge) && (/\bresource_metadata\s*=/i.test(challenge) || !sentBearer)) {
        return new UpstreamNeedsAuthError(`Upstream '${upstream}' requires OAuth authorization (HTTP 401 on ${what})`);
      }
      return new UpstreamAuthFailedError(`Upstream '${upstream}' refused the credentials (HTTP 401 on ${what})`);
    }
    if (response.status === 403) {
      // A step-up: the token is good but too narrow; the next authorization asks for this scope.
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (/\bbearer\b/i.test(challenge) && /\berror\s*=\s*"?insufficient_scope/i.test(challenge)) {
        const scope = /\bscope\s*=\s*"([^"]*)"/i.exec(challenge)?.[1];
        return new UpstreamNeedsAuthError(`Upstream '${upstream}' needs a broader authorization for ${what} (insufficient_scope): authorize again`, scope);
      }
    }
    const hint = response.status === 400 || response.status === 404 ? ' (the session may have expired)' : '';
    return new UpstreamHttpStatusError(response.status, `Upstream '${upstream}' answered ${what} with HTTP ${response.status}${hint}`);
  }

  private connectionError(error: unknown): UpstreamConnectionError {
    const cause = (error as { cause?: unknown } | null)?.cause ?? error;
    const code = (cause as { code?: unknown } | null)?.code;
    const reason = typeof code === 'string' ? `${CONNECTION_WORDS[code] ?? 'network error'} (${code})` : `network error (${errorName(cause)})`;
    return new UpstreamConnectionError(`Upstream '${this.opts.upstream}' is unreachable at ${this.origin}: ${reason}`);
  }

  /**
   * Passes the body through unchanged; once it is over (read to the end, broken or cancelled) and
   * the SDK has had its turn to dispatch what it read, a request still unanswered fails its scope.
   * A stream that carried an SSE event id is left alone: the SDK resumes it with Last-Event-ID.
   */
  private watchAnswer(response: Response, key: string, rpcMethod: string, scope: RequestScope): Response {
    const entry = { answered: false };
    this.awaiting.set(key, entry);
    const isSse = mediaType(response) === 'text/event-stream';
    const scan = isSse ? eventIdScanner() : () => false;
    // Read before the SDK parses the same bytes, so the route is known when the request's handler runs.
    const routeRequests = isSse && scope.route !== undefined ? serverRequestScanner((id) => this.rememberServerRequest(id, scope.route!)) : undefined;
    let resumable = false;
    let over = false;
    const finish = (broken: unknown): void => {
      if (over) return;
      over = true;
      // setImmediate: the SDK's parsing and dispatch of the last bytes runs on microtasks before it.
      setImmediate(() => {
        if (this.awaiting.get(key) === entry) this.awaiting.delete(key);
        if (entry.answered || resumable || scope.controller.signal.aborted) return;
        const { upstream } = this.opts;
        scope.controller.abort(
          broken === undefined
            ? new UpstreamNoAnswerError(`Upstream '${upstream}' ended its response without a valid answer to ${rpcMethod}`)
            : this.connectionError(broken),
        );
      });
    };
    const source = response.body!.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await source.read();
          if (done) {
            controller.close();
            finish(undefined);
            return;
          }
          if (!resumable) resumable = scan(value);
          routeRequests?.(value);
          controller.enqueue(value);
        } catch (error) {
          controller.error(error);
          finish(error);
        }
      },
      cancel(reason) {
        finish(undefined);
        return source.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}

/**
 * Finds the JSON-RPC requests in an SSE body as it streams (chunks may cut lines anywhere) and
 * reports each one's id. Only `data:` lines that hold both `"method"` and `"id"` are parsed.
 */
function serverRequestScanner(found: (id: string | number) => void): (chunk: Uint8Array) => void {
  const text = new TextDecoder();
  let partial = '';
  return (chunk) => {
    const lines = (partial + text.decode(chunk, { stream: true })).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('data:') || !line.includes('"method"') || !line.includes('"id"')) continue;
      try {
        const message = JSON.parse(line.slice(5)) as { id?: unknown; method?: unknown };
        if (typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number')) found(message.id);
      } catch {
        // Not one JSON value on one line: the SDK reports what it cannot parse.
      }
    }
  };
}

/** `{id, method}` of a JSON-RPC message body, and the request a cancellation names (absent when unparsable). */
function peekRpc(body: string): { id?: string | number; method?: string; cancels?: string } {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    const { id, method, params } = parsed as Record<string, unknown>;
    const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
    return {
      ...(typeof id === 'string' || typeof id === 'number' ? { id } : {}),
      ...(typeof method === 'string' ? { method } : {}),
      ...(typeof requestId === 'string' || typeof requestId === 'number' ? { cancels: String(requestId) } : {}),
    };
  } catch {
    return {};
  }
}

function mediaType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Byte scanner across chunks: true once a line starting with `id:` went by. */
function eventIdScanner(): (chunk: Uint8Array) => boolean {
  // 0 = at line start, 1 = after "i", 2 = after "id", -1 = elsewhere in a line.
  let state = 0;
  return (chunk) => {
    for (const b of chunk) {
      if (b === 0x0a || b === 0x0d) state = 0;
      else if (state === 0) state = b === 0x69 ? 1 : -1;
      else if (state === 1) state = b === 0x64 ? 2 : -1;
      else if (state === 2) {
        if (b === 0x3a) return true;
        state = -1;
      }
    }
    return false;
  };
}

function errorName(error: unknown): string {
  if (error instanceof Error) return error.name;
  return typeof error;
}
