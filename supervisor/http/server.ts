/**
 * The one dispatch for both listeners, on whichever HTTP engine runs: one app per listener, limits,
 * auth, CORS, compression. Routes never see the engine.
 */
import { STATUS_CODES } from 'node:http';

import type { TcpAuth } from './auth.js';
import { BodyParts } from './bodyParts.js';
import { SSE_REPLY_HEADERS, SseReply } from './sseReply.js';
import { ASYNC_COMPRESSION_MIN_BYTES, COMPRESSION_MIN_BYTES, maybeCompress, maybeCompressAsync, type Compressed } from './compression.js';
import { dualProtocolEngine } from './engine/select.js';
import type { EngineApp, EngineRequest, EngineResponse, EngineSocket, HttpEngine, TlsCredentials } from './engine/types.js';
import { corsHeaders, preflightHeaders } from './cors.js';
import { Exchange } from './exchange.js';
import { writeParts } from './partsWriter.js';
import { answerThenLinger } from './lingeringAnswer.js';
import { readBody } from './requestBody.js';
import type { RequestGuard } from './requestGuard.js';
import { clipClientInput, quoteClientInput } from '../../shared/quoteClientInput.js';
import { Router } from './router.js';
import { isStreamHandler } from './types.js';
import { apiErrorReply, errorReply } from './errorReply.js';
import { asApiError } from '../../shared/apiError.js';
import type { Handler, HttpMethod, ListenerKind, LiveStream, Reply, RequestContext, Route, WsRoute } from './types.js';

/** JSON-RPC's implementation-defined server error, as /mcp answers its other refusals. */
const JSON_RPC_SERVER_ERROR = -32000;

/** Engines hand methods lower-cased; map the common ones without allocating a new string. */
const METHOD_NAMES: Readonly<Record<string, HttpMethod>> = {
  get: 'GET',
  post: 'POST',
  put: 'PUT',
  delete: 'DELETE',
  patch: 'PATCH',
  head: 'HEAD',
  options: 'OPTIONS',
};
const METHODS = new Set<HttpMethod>(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
const BODY_METHODS = new Set<HttpMethod>(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Where a WebSocket's user data carries its token tracking, from the upgrade to open and close: a
 * string key, because uWS hands open() its own copy of the user data's properties, not the object.
 */
const TOKEN_TRACK = '__tuicd_token_track';
type TokenTracked = { [TOKEN_TRACK]?: { untrack?: () => void } };

/** What a request's credentials must do on its route: nothing (socket, public), pass, or be checked and never refuse. */
type AuthMode = 'none' | 'required' | 'optional';

export interface HttpLimits {
  maxBodyBytes: number;
  /** Time a handler has to produce its response before 408; streams are exempt. */
  requestTimeoutMs: number;
}

export interface HttpServerOptions {
  engine: HttpEngine;
  routes: Route[];
  wsRoutes?: WsRoute[];
  limits: () => HttpLimits;
  auth: TcpAuth;
  /** Host/Origin checks for the TCP listener, before auth (requestGuard.ts). */
  guard?: RequestGuard;
  /** Called once per finished response, for metrics. */
  onResponse?: (status: number, listener: ListenerKind) => void;
  /** A handler failed (500), or a WebSocket callback threw (that socket is closed): for the log. */
  onHandlerError?: (err: unknown, ctx: Pick<RequestContext, 'method' | 'path'>) => void;
}

/** An engine app bound to one listener kind; retired apps refuse everything (remote access was turned off). */
export interface ListenerApp {
  kind: ListenerKind;
  app: EngineApp;
  /** The engine the app runs on: the server's, or for a TLS listener one that serves TLS (dualProtocolEngine). */
  engine: HttpEngine;
  /** Serves TLS beside plain HTTP on its port. */
  tls: boolean;
  retired: boolean;
}

export class HttpServer {
  private readonly router = new Router();
  /** Made on the first TLS listener, when the server's engine cannot serve one. */
  private tlsEngine: HttpEngine | undefined;

  constructor(private readonly opts: HttpServerOptions) {
    for (const r of opts.routes) this.router.add(r);
  }

  /** Every route both listeners serve, as registered. */
  routeTable(): { routes: readonly Route[]; wsRoutes: readonly WsRoute[] } {
    return { routes: this.opts.routes, wsRoutes: this.opts.wsRoutes ?? [] };
  }

  /** `tls`: the TCP listener serves TLS and plain HTTP on its one port. */
  createApp(kind: ListenerKind, tls?: TlsCredentials): ListenerApp {
    if (tls && kind !== 'tcp') throw new Error('TLS is for the TCP listener only');
    const engine = tls ? (this.tlsEngine ??= dualProtocolEngine(this.opts.engine)) : this.opts.engine;
    const listenerApp: ListenerApp = { kind, app: engine.createApp(tls ? { tls } : {}), engine, tls: tls !== undefined, retired: false };
    for (const route of this.opts.wsRoutes ?? []) this.addWsRoute(listenerApp, route);
    listenerApp.app.any((res, req) => this.dispatch(listenerApp, res, req));
    return listenerApp;
  }

  /** A WebSocket route: same auth and error shapes as HTTP; the route refuses (e.g. 404) before upgrading. */
  private addWsRoute(la: ListenerApp, route: WsRoute): void {
    const names = route.pattern
      .split('/')
      .filter((seg) => seg.startsWith(':'))
      .map((seg) => seg.slice(1));
    const b = route.ws;
    la.app.ws<unknown>(route.pattern, {
      maxBackpressure: b.maxBackpressure,
      maxPayloadLength: b.maxPayloadLength,
      // Viewers on flaky phone links go quiet for long stretches; pings keep the link honest.
      idleTimeoutS: 120,
      upgrade: (res, req, context) => {
        const ex = this.exchangeFor(la, res, req);
        if (la.retired) return this.send(res, ex, RETIRED_REPLY, { close: true });
        const params = wsParams(req, names);
        if (params !== undefined) ex.params = params;
        const key = req.getHeader('sec-websocket-key');
        const protocol = req.getHeader('sec-websocket-protocol');
        const extensions = req.getHeader('sec-websocket-extensions');
        const finish = () => {
          // A malformed %-escape names no session: the same 404 as on the REST routes, never a throw here.
          if (params === undefined) return this.send(res, ex, errorReply('not_found', `no such endpoint: ${clipClientInput(ex.path)}`));
          let userData: unknown;
          try {
            userData = b.accept(ex);
          } catch (err) {
            return this.send(res, ex, this.errorReply(err, ex));
          }
          ex.done = true;
          // Let in by the session token: replacing the token ends the socket (see trackTokenSocket).
          if (ex.byToken && typeof userData === 'object' && userData !== null) (userData as TokenTracked)[TOKEN_TRACK] = {};
          const upgrade = () => res.upgrade(userData, key, protocol, extensions, context);
          if (ex.inCallback) upgrade();
          else res.cork(upgrade);
        };
        try {
          if (la.kind !== 'tcp') return finish();
          const refusal = this.guardRefusal(ex);
          if (refusal) return this.send(res, ex, refusal);
          this.afterAuth(res, ex, finish);
        } finally {
          ex.inCallback = false;
        }
      },
      // uWS turns an exception in any callback into the death of the process: a failing viewer
      // loses its socket, never the server (on either engine).
      open: (ws) => {
        this.trackTokenSocket(ws);
        if (b.open) this.guardWs(route, ws, () => b.open!(ws));
      },
      message: b.message ? (ws, msg, isBinary) => this.guardWs(route, ws, () => b.message!(ws, msg, isBinary)) : undefined,
      drain: b.drain ? (ws) => this.guardWs(route, ws, () => b.drain!(ws)) : undefined,
      close: (ws, code) => {
        this.untrackTokenSocket(ws);
        if (b.close) this.guardWs(route, undefined, () => b.close!(ws, code));
      },
    });
  }

  /**
   * A stream the session token let in (an SSE route's, or a POST answered as SSE): ended when the
   * token is replaced, as its WebSockets are (trackTokenSocket).
   */
  private trackTokenStream(ex: Exchange, stream: LiveStream | undefined): void {
    if (!ex.byToken || !stream) return;
    stream.onClose(this.opts.auth.trackTokenStream(() => stream.close()));
  }

  /** An opened socket the session token let in: ended (4001) when the token is replaced. */
  private trackTokenSocket(ws: EngineSocket<unknown>): void {
    const data = ws.getUserData() as TokenTracked | null;
    const entry = typeof data === 'object' && data !== null ? data[TOKEN_TRACK] : undefined;
    if (entry === undefined) return;
    entry.untrack = this.opts.auth.trackTokenStream(() => {
      try {
        ws.end(4001, 'session token replaced: log in again');
      } catch {
        // Closed meanwhile: nothing to end.
      }
    });
  }

  private untrackTokenSocket(ws: EngineSocket<unknown>): void {
    const data = ws.getUserData() as TokenTracked | null;
    if (typeof data !== 'object' || data === null) return;
    data[TOKEN_TRACK]?.untrack?.();
    delete data[TOKEN_TRACK];
  }

  /** Runs a WebSocket callback; if it throws, logs and closes that socket (1011) instead of letting uWS kill the process. */
  private guardWs(route: WsRoute, ws: EngineSocket<unknown> | undefined, run: () => void): void {
    try {
      run();
    } catch (err) {
      this.opts.onHandlerError?.(err, { method: 'GET', path: route.pattern });
      try {
        ws?.end(1011, 'internal error');
      } catch {
        // Already closed: nothing left to end.
      }
    }
  }

  private exchangeFor(la: ListenerApp, res: EngineResponse, req: EngineRequest): Exchange {
    const method = METHOD_NAMES[req.getMethod()] ?? (req.getCaseSensitiveMethod().toUpperCase() as HttpMethod);
    const path = req.getUrl();
    const headers: Record<string, string> = {};
    let duplicateHost = false;
    req.forEach((k, v) => {
      // A second Host is how some request-smuggling and rebinding tricks start: the guard refuses it.
      if (k === 'host' && headers['host'] !== undefined) duplicateHost = true;
      headers[k] = v;
    });
    // The peer address is read from `res` only if someone asks (Exchange.remoteAddress).
    const ex = new Exchange(method, path, req.getQuery() ?? '', headers, la.kind, la.kind === 'socket' ? null : res, req.isTls?.() === true);
    if (duplicateHost) ex.duplicateHost = true;
    return ex;
  }

  private dispatch(la: ListenerApp, res: EngineResponse, req: EngineRequest): void {
    const ex = this.exchangeFor(la, res, req);
    // Nothing is served once remote access was turned off, but a request already on its way hears why.
    if (la.retired) return this.sendAfterBody(res, ex, RETIRED_REPLY, true);
    try {
      this.route(la, res, ex);
    } catch (err) {
      // A handler that threw where nothing caught it (a stream's start): 500 if nothing went out yet.
      // uWS would turn the exception into the death of the process.
      this.failUnhandled(res, ex, err);
    } finally {
      ex.inCallback = false;
    }
  }

  /**
   * TCP: checks the credentials, then runs `next`. A refusal is answered here; a failure (in the
   * check or in `next`) is a 500, never an unhandled rejection, which would end the process.
   */
  private afterAuth(res: EngineResponse, ex: Exchange, next: () => void): void {
    watchAbort(res, ex);
    void this.opts.auth
      .check(ex)
      .then((outcome) => {
        if (ex.aborted) return;
        if (!outcome.ok) return this.send(res, ex, outcome.reply);
        ex.authenticated = true;
        if (outcome.byToken) ex.byToken = true;
        next();
      })
      .catch((err: unknown) => this.failUnhandled(res, ex, err));
  }

  private failUnhandled(res: EngineResponse, ex: Exchange, err: unknown): void {
    try {
      this.send(res, ex, this.errorReply(err, ex));
    } catch {
      // The handler had started its answer: all that is left is to drop the connection.
      try {
        res.close();
      } catch {
        // Already ended or aborted.
      }
    }
  }

  /** TCP only: the Host/Origin refusal as a 403 that names the header, or null to go on. */
  private guardRefusal(ex: Exchange): Reply | null {
    const refusal = this.opts.guard?.check(ex.headers, ex.duplicateHost);
    if (!refusal) return null;
    // The answer must not grant the refused origin anything.
    ex.refused = true;
    const match = this.router.match(ex.method, ex.path);
    if (match.kind === 'found' && match.route.errorShape === 'jsonrpc') {
      return {
        status: 403,
        body: { jsonrpc: '2.0', id: null, error: { code: JSON_RPC_SERVER_ERROR, message: refusal.message, data: { header: refusal.header } } },
      };
    }
    return errorReply('forbidden', refusal.message, { header: refusal.header });
  }

  private route(la: ListenerApp, res: EngineResponse, ex: Exchange): void {
    const { method, path, headers } = ex;
    const origin = headers['origin'];
    if (la.kind === 'tcp') {
      const refusal = this.guardRefusal(ex);
      if (refusal) return this.sendAfterBody(res, ex, refusal);
    }
    if (!METHODS.has(method)) return this.sendAfterBody(res, ex, errorReply('method_not_allowed', `method ${quoteClientInput(method)} is not supported`));
    if (method === 'OPTIONS') return this.sendAfterBody(res, ex, { status: 204, headers: preflightHeaders(la.kind, origin) });

    const match = this.router.match(method, path);
    if (match.kind === 'not-found') return this.sendAfterBody(res, ex, errorReply('not_found', `no such endpoint: ${clipClientInput(path)}`));
    if (match.kind === 'method-not-allowed') {
      return this.sendAfterBody(
        res,
        ex,
        errorReply('method_not_allowed', `method ${method} not allowed on ${clipClientInput(path)}`, undefined, { Allow: match.allowed.join(', ') }),
      );
    }
    ex.params = match.params;
    const route = match.route;
    // A public route that reads credentials has them checked like any other, but is never refused.
    let needsAuth: AuthMode = la.kind !== 'tcp' ? 'none' : !route.public ? 'required' : route.optionalAuth ? 'optional' : 'none';
    // Nothing to check: the anonymous answer goes out on the fast path, as for any public route.
    if (needsAuth === 'optional' && this.opts.auth.carriesNoCredential(ex)) needsAuth = 'none';

    if (isStreamHandler(route.handler)) {
      const stream = route.handler;
      if (needsAuth === 'none') return void stream.stream(res, ex);
      this.afterAuth(res, ex, () => res.cork(() => this.trackTokenStream(ex, stream.stream(res, ex))));
      return;
    }

    const handler = route.handler;
    const wantsBody = BODY_METHODS.has(method) && !route.noBody;
    // A browser sends text/plain and form bodies cross-site without a preflight: on TCP a body must say JSON.
    const notJson = wantsBody && la.kind === 'tcp' && hasBody(headers) && !isJsonContentType(headers['content-type']);
    if (needsAuth === 'none' && !wantsBody) {
      // Fast path: a synchronous answer goes out at once, with no timer and no promise.
      let result: Reply | Promise<Reply>;
      try {
        result = handler(ex);
      } catch (err) {
        return this.send(res, ex, this.errorReply(err, ex));
      }
      if (!isPromise(result)) return this.send(res, ex, result);
      watchAbort(res, ex);
      this.armTimeout(res, ex);
      void result.then(
        (reply) => this.send(res, ex, reply),
        (err: unknown) => this.send(res, ex, this.errorReply(err, ex)),
      );
      return;
    }
    const limits = this.opts.limits();
    const declared = declaredLength(headers);
    // A declared body over the limit is answered before any of it is read, whoever asks (the
    // answer says no more than a 404 would); the connection then closes, lingering.
    if (wantsBody && declared !== undefined && declared > limits.maxBodyBytes)
      return this.answerThenLinger(res, ex, errorReply('payload_too_large', `request body exceeds ${limits.maxBodyBytes} bytes`));
    watchAbort(res, ex);
    const bodyPromise = wantsBody ? readBody(res, declared, limits.maxBodyBytes) : null;
    this.armTimeout(res, ex);
    void this.run(res, ex, handler, bodyPromise, needsAuth, limits.maxBodyBytes, notJson);
  }

  /**
   * An early answer (guard refusal, 404, 405, a preflight) to a request whose body is still arriving: the body is read
   * and dropped first (up to OVERSIZE_DRAIN_BYTES), because answering while the client still sends
   * makes the close reset the answer away before the client reads it. A declared body over the
   * limit would not be drained whole: that answer goes out at once, and the drain follows it.
   */
  private sendAfterBody(res: EngineResponse, ex: Exchange, reply: Reply, close = false): void {
    if (!hasBody(ex.headers)) return this.send(res, ex, reply, { close });
    const declared = declaredLength(ex.headers);
    if (declared !== undefined && declared > this.opts.limits().maxBodyBytes && isJsonOrEmpty(reply.body)) return this.answerThenLinger(res, ex, reply);
    watchAbort(res, ex);
    void readBody(res, declared, 0).then((got) => this.send(res, ex, reply, { close: close || (!got.ok && !got.drained) }));
  }

  /**
   * `reply` at once, before the body, then the lingering close (lingeringAnswer.ts). Inside the
   * engine's request callback; the reply's body is a JSON value or absent.
   */
  private answerThenLinger(res: EngineResponse, ex: Exchange, reply: Reply): void {
    ex.done = true;
    const headers: Array<[string, string]> = [];
    const body = reply.body === undefined || reply.body === null ? '' : JSON.stringify(reply.body);
    if (body !== '') headers.push(['Content-Type', 'application/json']);
    const origin = ex.headers['origin'];
    const own = new Set(Object.keys(reply.headers ?? {}).map((k) => k.toLowerCase()));
    if (origin !== undefined && !ex.refused)
      for (const [name, value] of Object.entries(corsHeaders(ex.listener, origin))) if (!own.has(name.toLowerCase())) headers.push([name, value]);
    for (const [name, value] of Object.entries(reply.headers ?? {})) headers.push([name, value]);
    answerThenLinger(res, statusLine(reply.status), headers, body, () => {
      ex.aborted = true;
      ex.abort();
    });
    this.opts.onResponse?.(reply.status, ex.listener);
  }

  private armTimeout(res: EngineResponse, ex: Exchange): void {
    const timeoutMs = this.opts.limits().requestTimeoutMs;
    ex.timer = setTimeout(() => {
      ex.abort();
      this.send(res, ex, errorReply('timeout', `request timed out after ${Math.round(timeoutMs / 1000)}s`));
    }, timeoutMs);
  }

  private async run(
    res: EngineResponse,
    ex: Exchange,
    handler: Handler,
    bodyPromise: ReturnType<typeof readBody> | null,
    needsAuth: AuthMode,
    maxBodyBytes: number,
    notJson: boolean,
  ): Promise<void> {
    let setCookie: string | undefined;
    if (needsAuth !== 'none') {
      const outcome = await this.opts.auth.check(ex);
      if (outcome.ok) {
        ex.authenticated = true;
        if (outcome.byToken) ex.byToken = true;
      } else if (needsAuth === 'required') {
        // Let the body arrive (bounded) so the refusal is not lost to a connection reset.
        const got = bodyPromise ? await bodyPromise : null;
        return this.send(res, ex, outcome.reply, { close: got !== null && !got.ok && !got.drained });
      }
      if (outcome.ok) setCookie = outcome.setCookie;
    }
    if (bodyPromise) {
      const got = await bodyPromise;
      if (!got.ok) {
        return this.send(res, ex, errorReply('payload_too_large', `request body exceeds ${maxBodyBytes} bytes`), { close: !got.drained });
      }
      ex.body = got.body;
    }
    if (notJson) {
      return this.send(
        res,
        ex,
        errorReply('unsupported_media_type', `Content-Type must be application/json, got ${quoteClientInput(ex.headers['content-type'] ?? '(none)')}`),
      );
    }
    let reply: Reply;
    try {
      reply = await handler(ex);
    } catch (err) {
      reply = this.errorReply(err, ex);
    }
    if (setCookie) reply = { ...reply, headers: { ...reply.headers, 'Set-Cookie': setCookie } };
    this.send(res, ex, reply);
  }

  private errorReply(err: unknown, ctx: RequestContext): Reply {
    // Messages quote client input clipped at the source; this bounds any that a new one forgets.
    const known = asApiError(err);
    if (known) return apiErrorReply(known);
    this.opts.onHandlerError?.(err, ctx);
    return errorReply('internal', err instanceof Error ? err.message : String(err));
  }

  private send(res: EngineResponse, ex: Exchange, reply: Reply, opt: { close?: boolean } = {}): void {
    if (ex.aborted || ex.done) return;
    ex.done = true;
    if (ex.timer) clearTimeout(ex.timer);
    if (reply.body instanceof SseReply) return this.stream(res, ex, reply, reply.body);
    let payload: string | Buffer | BodyParts = '';
    let contentType: string | undefined;
    const body = reply.body;
    if (body !== undefined && body !== null) {
      if (typeof body === 'string' || Buffer.isBuffer(body) || body instanceof BodyParts) payload = body;
      else {
        payload = JSON.stringify(body);
        contentType = 'application/json';
      }
    }
    const close = opt.close ?? false;
    const acceptEncoding = ex.headers['accept-encoding'];
    // A reply that comes encoded already (the /mobile assets, compressed once at load) is sent as it is.
    if (acceptEncoding && reply.headers?.['Content-Encoding'] === undefined && byteLengthOver(payload, COMPRESSION_MIN_BYTES)) {
      const whole = payload instanceof BodyParts ? payload.join() : Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
      if (whole.length > ASYNC_COMPRESSION_MIN_BYTES) {
        watchAbort(res, ex); // the answer now leaves after the engine's callback returned
        void maybeCompressAsync(whole, acceptEncoding).then((compressed) => {
          // The client may have gone while the pool compressed: its response must not be touched then.
          if (!ex.aborted) this.write(res, ex, reply, compressed, whole, contentType, close);
        });
        return;
      }
      this.write(res, ex, reply, maybeCompress(whole, acceptEncoding), whole, contentType, close);
      return;
    }
    this.write(res, ex, reply, null, payload, contentType, close);
  }

  /** An answer that is an SSE stream: the head now, then the body is the stream's (never compressed). */
  private stream(res: EngineResponse, ex: Exchange, reply: Reply, body: SseReply): void {
    const head = (): void => {
      res.writeStatus(statusLine(reply.status));
      const origin = ex.headers['origin'];
      if (origin !== undefined && !ex.refused) writeHeaders(res, corsHeaders(ex.listener, origin), reply.headers);
      writeHeaders(res, SSE_REPLY_HEADERS, reply.headers);
      if (reply.headers) writeHeaders(res, reply.headers);
      body.attach(res, () => {
        ex.aborted = true;
        ex.abort();
      });
      this.trackTokenStream(ex, body);
    };
    if (ex.inCallback) head();
    else res.cork(head);
    this.opts.onResponse?.(reply.status, ex.listener);
  }

  private write(
    res: EngineResponse,
    ex: Exchange,
    reply: Reply,
    compressed: Compressed,
    payload: string | Buffer | BodyParts,
    contentType: string | undefined,
    close: boolean,
  ): void {
    const body = compressed?.body ?? payload;
    const encoding = compressed?.encoding;
    // Inside uWS's callback the response is already corked; elsewhere cork so headers and body go out in one write.
    if (ex.inCallback) writeResponse(res, ex, reply, body, contentType, encoding, close);
    else res.cork(() => writeResponse(res, ex, reply, body, contentType, encoding, close));
    this.opts.onResponse?.(reply.status, ex.listener);
  }
}

function writeResponse(
  res: EngineResponse,
  ex: Exchange,
  reply: Reply,
  payload: string | Buffer | BodyParts,
  contentType: string | undefined,
  encoding: string | undefined,
  close: boolean,
): void {
  res.writeStatus(statusLine(reply.status));
  if (contentType) res.writeHeader('Content-Type', contentType);
  const origin = ex.headers['origin'];
  // A reply that carries its own CORS headers (the preflight) keeps them: a second
  // Access-Control-Allow-Origin line makes browsers refuse the answer.
  if (origin !== undefined && !ex.refused) writeHeaders(res, corsHeaders(ex.listener, origin), reply.headers);
  if (reply.headers) writeHeaders(res, reply.headers);
  if (encoding) res.writeHeader('Content-Encoding', encoding).writeHeader('Vary', 'Accept-Encoding');
  if (payload instanceof BodyParts) {
    if (ex.method === 'HEAD') endHead(res, payload.byteLength, close);
    // tryEnd cannot close the connection afterwards; no reply that closes is that large.
    else if (close || payload.byteLength === 0) res.end(payload.join(), close);
    else writeParts(res, payload, () => watchAbort(res, ex));
    return;
  }
  if (ex.method === 'HEAD') endHead(res, Buffer.byteLength(payload), close);
  else res.end(payload, close);
}

/**
 * Ends a HEAD answer with the Content-Length a GET would have. This uWS build's endWithoutBody
 * finishes the response only when called with no arguments: given a length (or any argument) it
 * waits for a body, and uWS then aborts the whole process. So the length is written as a header of
 * our own. An answer that must close the connection (an error answer) says Content-Length: 0 instead.
 */
function endHead(res: EngineResponse, getLength: number, close: boolean): void {
  if (close) return void res.end('', true);
  res.writeHeader('Content-Length', String(getLength));
  res.endWithoutBody();
}

/** A string's length never exceeds its UTF-8 size, so short strings skip the byte count. */
function byteLengthOver(payload: string | Buffer | BodyParts, limit: number): boolean {
  if (payload instanceof BodyParts) return payload.byteLength > limit;
  return payload.length > 0 && (payload.length > limit || Buffer.byteLength(payload) > limit);
}

/** uWS requires an abort handler on every response not answered inside its callback. */
function watchAbort(res: EngineResponse, ex: Exchange): void {
  res.onAborted(() => {
    ex.aborted = true;
    ex.abort();
  });
}

/** Writes `headers`, skipping any name `except` carries: the reply's own value wins (names compare case-insensitively). */
function writeHeaders(res: EngineResponse, headers: Record<string, string>, except?: Record<string, string>): void {
  const skip = except === undefined ? undefined : new Set(Object.keys(except).map((k) => k.toLowerCase()));
  for (const key in headers) if (skip === undefined || !skip.has(key.toLowerCase())) res.writeHeader(key, headers[key]!);
}

/** The answer on a TCP listener that remote access was turned off under; the connection then closes. */
const RETIRED_REPLY: Reply = errorReply('forbidden', 'remote access was turned off; this listener no longer serves requests');

const statusLines = new Map<number, string>();
/** "200 OK" and friends, built once per status. */
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) statusLines.set(status, (line = `${status} ${STATUS_CODES[status] ?? ''}`));
  return line;
}

/** The request's Content-Length, when it says one. */
function declaredLength(headers: Readonly<Record<string, string>>): number | undefined {
  const length = headers['content-length'];
  return length !== undefined ? Number(length) : undefined;
}

/** A reply body answerThenLinger can write: a JSON value (not text, bytes or parts), or none. */
function isJsonOrEmpty(body: Reply['body']): boolean {
  return body === undefined || body === null || (typeof body === 'object' && !Buffer.isBuffer(body) && !(body instanceof BodyParts));
}

function hasBody(headers: Readonly<Record<string, string>>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** application/json or any +json type, parameters (charset) allowed. */
function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/** The route's `:name` parameters, decoded; undefined when one has a malformed %-escape. */
function wsParams(req: EngineRequest, names: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  try {
    names.forEach((name, i) => {
      params[name] = decodeURIComponent(req.getParameter(i));
    });
  } catch {
    return undefined;
  }
  return params;
}
