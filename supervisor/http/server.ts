/** The only owner of uWebSockets.js apps: one app per listener, one dispatch with limits, auth, CORS, compression. */
import { STATUS_CODES } from 'node:http';
import uws from '@trufflesuite/uws-js-unofficial';
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';

import type { TcpAuth } from './auth.js';
import { COMPRESSION_MIN_BYTES, maybeCompress } from './compression.js';
import { corsHeaders, preflightHeaders } from './cors.js';
import { isLoopbackIp, normalizeIp } from './remoteAddress.js';
import { readBody } from './requestBody.js';
import { Router } from './router.js';
import { HttpError, isStreamHandler } from './types.js';
import type { Handler, HttpMethod, ListenerKind, Reply, RequestContext, Route } from './types.js';

const METHODS = new Set<HttpMethod>(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
const BODY_METHODS = new Set<HttpMethod>(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface HttpLimits {
  maxBodyBytes: number;
  /** Time a handler has to produce its response before 408; streams are exempt. */
  requestTimeoutMs: number;
}

export interface HttpServerOptions {
  routes: Route[];
  limits: () => HttpLimits;
  auth: TcpAuth;
  /** Called once per finished response, for metrics. */
  onResponse?: (status: number, listener: ListenerKind) => void;
  onHandlerError?: (err: unknown, ctx: RequestContext) => void;
}

interface InFlight {
  aborted: boolean;
  done: boolean;
  inCallback: boolean;
  timer: NodeJS.Timeout | undefined;
  controller: AbortController | undefined;
}

/** A uWS app bound to one listener kind; retired apps refuse everything (remote access was turned off). */
export interface ListenerApp {
  kind: ListenerKind;
  app: TemplatedApp;
  retired: boolean;
}

export class HttpServer {
  private readonly router = new Router();

  constructor(private readonly opts: HttpServerOptions) {
    for (const r of opts.routes) this.router.add(r);
  }

  createApp(kind: ListenerKind): ListenerApp {
    const listenerApp: ListenerApp = { kind, app: uws.App(), retired: false };
    listenerApp.app.any('/*', (res, req) => this.dispatch(listenerApp, res, req));
    return listenerApp;
  }

  private dispatch(la: ListenerApp, res: HttpResponse, req: HttpRequest): void {
    if (la.retired) {
      res.close();
      return;
    }
    // `inCallback`: still inside uWS's handler, where the response is already corked and no abort
    // handler is needed as long as we answer before returning.
    const flight: InFlight = { aborted: false, done: false, inCallback: true, timer: undefined, controller: undefined };
    try {
      this.route(la, res, req, flight);
    } finally {
      flight.inCallback = false;
    }
  }

  /** uWS requires an abort handler on every response not answered inside its callback. */
  private goAsync(res: HttpResponse, flight: InFlight): void {
    res.onAborted(() => {
      flight.aborted = true;
      if (flight.timer) clearTimeout(flight.timer);
      flight.controller?.abort();
    });
  }

  private route(la: ListenerApp, res: HttpResponse, req: HttpRequest, flight: InFlight): void {
    const method = req.getCaseSensitiveMethod().toUpperCase() as HttpMethod;
    const path = req.getUrl();
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const remoteAddress = la.kind === 'socket' ? 'unix' : normalizeIp(Buffer.from(res.getRemoteAddressAsText()).toString());
    const rawQuery = req.getQuery() ?? '';
    let query: URLSearchParams | undefined;
    const ctx: RequestContext = {
      method,
      path,
      get query() {
        return (query ??= new URLSearchParams(rawQuery));
      },
      headers,
      params: NO_PARAMS,
      listener: la.kind,
      remoteAddress,
      isLoopback: la.kind === 'socket' || isLoopbackIp(remoteAddress),
      body: EMPTY,
      // Most handlers never look at the signal: make the controller only when one does.
      get signal() {
        return (flight.controller ??= new AbortController()).signal;
      },
    };
    const origin = headers['origin'];
    if (!METHODS.has(method)) return this.send(res, flight, ctx, { status: 405, body: { error: `method ${method} is not supported` } });
    if (method === 'OPTIONS') return this.send(res, flight, ctx, { status: 204, headers: preflightHeaders(la.kind, origin) });

    const match = this.router.match(method, path);
    if (match.kind === 'not-found') return this.send(res, flight, ctx, { status: 404, body: { error: `no such endpoint: ${path}` } });
    if (match.kind === 'method-not-allowed') {
      return this.send(res, flight, ctx, { status: 405, headers: { Allow: match.allowed.join(', ') }, body: { error: `method ${method} not allowed on ${path}` } });
    }
    ctx.params = match.params;
    const route = match.route;
    const needsAuth = la.kind === 'tcp' && !route.public;

    if (isStreamHandler(route.handler)) {
      const stream = route.handler;
      if (!needsAuth) return stream.stream(res, ctx);
      this.goAsync(res, flight);
      void this.opts.auth.check(headers, ctx.query, remoteAddress).then((outcome) => {
        if (flight.aborted) return;
        if (!outcome.ok) return this.send(res, flight, ctx, outcome.reply);
        res.cork(() => stream.stream(res, ctx));
      });
      return;
    }

    const handler = route.handler;
    const wantsBody = BODY_METHODS.has(method) && !route.noBody;
    if (!needsAuth && !wantsBody) {
      // Fast path: a synchronous answer goes out at once, with no timer and no promise.
      let result: Reply | Promise<Reply>;
      try {
        result = handler(ctx);
      } catch (err) {
        return this.send(res, flight, ctx, this.errorReply(err, ctx));
      }
      if (!isPromise(result)) return this.send(res, flight, ctx, result);
      this.goAsync(res, flight);
      this.armTimeout(res, flight, ctx);
      void result.then(
        (reply) => this.send(res, flight, ctx, reply),
        (err: unknown) => this.send(res, flight, ctx, this.errorReply(err, ctx)),
      );
      return;
    }
    this.goAsync(res, flight);
    const limits = this.opts.limits();
    const declared = headers['content-length'] !== undefined ? Number(headers['content-length']) : undefined;
    const bodyPromise = wantsBody ? readBody(res, declared, limits.maxBodyBytes) : null;
    this.armTimeout(res, flight, ctx);
    void this.run(res, flight, ctx, handler, bodyPromise, needsAuth, limits.maxBodyBytes);
  }

  private armTimeout(res: HttpResponse, flight: InFlight, ctx: RequestContext): void {
    const timeoutMs = this.opts.limits().requestTimeoutMs;
    flight.timer = setTimeout(() => {
      flight.controller?.abort();
      this.send(res, flight, ctx, { status: 408, body: { error: `request timed out after ${Math.round(timeoutMs / 1000)}s` } });
    }, timeoutMs);
  }

  private async run(
    res: HttpResponse,
    flight: InFlight,
    ctx: RequestContext,
    handler: Handler,
    bodyPromise: ReturnType<typeof readBody> | null,
    needsAuth: boolean,
    maxBodyBytes: number,
  ): Promise<void> {
    let setCookie: string | undefined;
    if (needsAuth) {
      const outcome = await this.opts.auth.check(ctx.headers, ctx.query, ctx.remoteAddress);
      if (!outcome.ok) {
        // Let the body arrive (bounded) so the refusal is not lost to a connection reset.
        const got = bodyPromise ? await bodyPromise : null;
        return this.send(res, flight, ctx, outcome.reply, { close: got !== null && !got.ok && !got.drained });
      }
      setCookie = outcome.setCookie;
    }
    if (bodyPromise) {
      const got = await bodyPromise;
      if (!got.ok) {
        return this.send(res, flight, ctx, { status: 413, body: { error: `request body exceeds ${maxBodyBytes} bytes` } }, { close: !got.drained });
      }
      ctx.body = got.body;
    }
    let reply: Reply;
    try {
      reply = await handler(ctx);
    } catch (err) {
      reply = this.errorReply(err, ctx);
    }
    if (setCookie) reply = { ...reply, headers: { ...reply.headers, 'Set-Cookie': setCookie } };
    this.send(res, flight, ctx, reply);
  }

  private errorReply(err: unknown, ctx: RequestContext): Reply {
    if (err instanceof HttpError) return { status: err.status, ...(err.headers ? { headers: err.headers } : {}), body: { error: err.message } };
    this.opts.onHandlerError?.(err, ctx);
    return { status: 500, body: { error: err instanceof Error ? err.message : String(err) } };
  }

  private send(res: HttpResponse, flight: InFlight, ctx: RequestContext, reply: Reply, opt: { close?: boolean } = {}): void {
    if (flight.aborted || flight.done) return;
    flight.done = true;
    if (flight.timer) clearTimeout(flight.timer);
    let payload: string | Buffer = '';
    let contentType: string | undefined;
    const body = reply.body;
    if (body !== undefined && body !== null) {
      if (typeof body === 'string' || Buffer.isBuffer(body)) payload = body;
      else {
        payload = JSON.stringify(body);
        contentType = 'application/json';
      }
    }
    let encoding: string | undefined;
    const acceptEncoding = ctx.headers['accept-encoding'];
    // A string's length never exceeds its UTF-8 size, so short strings skip the byte count.
    if (acceptEncoding && payload.length > 0 && (payload.length > COMPRESSION_MIN_BYTES || Buffer.byteLength(payload) > COMPRESSION_MIN_BYTES)) {
      const compressed = maybeCompress(Buffer.isBuffer(payload) ? payload : Buffer.from(payload), acceptEncoding);
      if (compressed) {
        payload = compressed.body;
        encoding = compressed.encoding;
      }
    }
    const origin = ctx.headers['origin'];
    const write = () => {
      res.writeStatus(statusLine(reply.status));
      if (contentType) res.writeHeader('Content-Type', contentType);
      if (origin !== undefined) writeHeaders(res, corsHeaders(ctx.listener, origin));
      if (reply.headers) writeHeaders(res, reply.headers);
      if (encoding) res.writeHeader('Content-Encoding', encoding).writeHeader('Vary', 'Accept-Encoding');
      if (ctx.method === 'HEAD') res.endWithoutBody(Buffer.byteLength(payload), opt.close ?? false);
      else res.end(payload, opt.close ?? false);
    };
    if (flight.inCallback) write();
    else res.cork(write);
    this.opts.onResponse?.(reply.status, ctx.listener);
  }
}

function writeHeaders(res: HttpResponse, headers: Record<string, string>): void {
  for (const key in headers) res.writeHeader(key, headers[key]!);
}

const EMPTY: Buffer = Buffer.alloc(0);
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

const statusLines = new Map<number, string>();
/** "200 OK" and friends, built once per status. */
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) statusLines.set(status, (line = `${status} ${STATUS_CODES[status] ?? ''}`));
  return line;
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}
