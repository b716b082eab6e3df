/** The only owner of uWebSockets.js apps: one app per listener, one dispatch with limits, auth, CORS, compression. */
import { STATUS_CODES } from 'node:http';
import uws from '@trufflesuite/uws-js-unofficial';
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';

import type { TcpAuth } from './auth.js';
import { maybeCompress } from './compression.js';
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
  timer: NodeJS.Timeout | undefined;
  controller: AbortController;
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
    const flight: InFlight = { aborted: false, done: false, timer: undefined, controller: new AbortController() };
    res.onAborted(() => {
      flight.aborted = true;
      if (flight.timer) clearTimeout(flight.timer);
      flight.controller.abort();
    });
    const method = req.getCaseSensitiveMethod().toUpperCase() as HttpMethod;
    const path = req.getUrl();
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const remoteAddress = la.kind === 'socket' ? 'unix' : normalizeIp(Buffer.from(res.getRemoteAddressAsText()).toString());
    const base = {
      method,
      path,
      query: new URLSearchParams(req.getQuery() ?? ''),
      headers,
      params: {} as Record<string, string>,
      listener: la.kind,
      remoteAddress,
      isLoopback: la.kind === 'socket' || isLoopbackIp(remoteAddress),
      signal: flight.controller.signal,
    };
    const origin = headers['origin'];
    if (!METHODS.has(method)) return this.send(res, flight, base, { status: 405, body: { error: `method ${method} is not supported` } });
    if (method === 'OPTIONS') return this.send(res, flight, base, { status: 204, headers: preflightHeaders(la.kind, origin) });

    const match = this.router.match(method, path);
    if (match.kind === 'not-found') return this.send(res, flight, base, { status: 404, body: { error: `no such endpoint: ${path}` } });
    if (match.kind === 'method-not-allowed') {
      return this.send(res, flight, base, { status: 405, headers: { Allow: match.allowed.join(', ') }, body: { error: `method ${method} not allowed on ${path}` } });
    }
    base.params = match.params;
    const route = match.route;
    const needsAuth = la.kind === 'tcp' && !route.public;

    if (isStreamHandler(route.handler)) {
      const stream = route.handler;
      if (!needsAuth) return stream.stream(res, base);
      void this.opts.auth.check(headers, base.query, remoteAddress).then((outcome) => {
        if (flight.aborted) return;
        if (!outcome.ok) return this.send(res, flight, base, outcome.reply);
        res.cork(() => stream.stream(res, base));
      });
      return;
    }

    const limits = this.opts.limits();
    const wantsBody = BODY_METHODS.has(method) && !route.noBody;
    const declared = headers['content-length'] !== undefined ? Number(headers['content-length']) : undefined;
    const bodyPromise = wantsBody ? readBody(res, declared, limits.maxBodyBytes) : null;
    flight.timer = setTimeout(() => {
      flight.controller.abort();
      this.send(res, flight, base, { status: 408, body: { error: `request timed out after ${Math.round(limits.requestTimeoutMs / 1000)}s` } });
    }, limits.requestTimeoutMs);
    void this.run(res, flight, base, route.handler as Handler, bodyPromise, needsAuth, limits);
  }

  private async run(
    res: HttpResponse,
    flight: InFlight,
    base: Omit<RequestContext, 'body'>,
    handler: Handler,
    bodyPromise: ReturnType<typeof readBody> | null,
    needsAuth: boolean,
    limits: HttpLimits,
  ): Promise<void> {
    let setCookie: string | undefined;
    if (needsAuth) {
      const outcome = await this.opts.auth.check(base.headers, base.query, base.remoteAddress);
      if (!outcome.ok) return this.send(res, flight, base, outcome.reply, { close: bodyPromise !== null });
      setCookie = outcome.setCookie;
    }
    let body: Buffer = EMPTY;
    if (bodyPromise) {
      const got = await bodyPromise;
      if (!got.ok) {
        // Close the connection: the rest of the oversized body is never read.
        return this.send(res, flight, base, { status: 413, body: { error: `request body exceeds ${limits.maxBodyBytes} bytes` } }, { close: true });
      }
      body = got.body;
    }
    const ctx: RequestContext = { ...base, body };
    let reply: Reply;
    try {
      reply = await handler(ctx);
    } catch (err) {
      reply = this.errorReply(err, ctx);
    }
    if (setCookie) reply = { ...reply, headers: { ...reply.headers, 'Set-Cookie': setCookie } };
    this.send(res, flight, base, reply);
  }

  private errorReply(err: unknown, ctx: RequestContext): Reply {
    if (err instanceof HttpError) return { status: err.status, ...(err.headers ? { headers: err.headers } : {}), body: { error: err.message } };
    this.opts.onHandlerError?.(err, ctx);
    return { status: 500, body: { error: err instanceof Error ? err.message : String(err) } };
  }

  private send(res: HttpResponse, flight: InFlight, base: Omit<RequestContext, 'body'>, reply: Reply, opt: { close?: boolean } = {}): void {
    if (flight.aborted || flight.done) return;
    flight.done = true;
    if (flight.timer) clearTimeout(flight.timer);
    let payload: Buffer | undefined;
    let contentType: string | undefined;
    if (reply.body !== undefined && reply.body !== null) {
      if (Buffer.isBuffer(reply.body)) payload = reply.body;
      else if (typeof reply.body === 'string') payload = Buffer.from(reply.body);
      else {
        payload = Buffer.from(JSON.stringify(reply.body));
        contentType = 'application/json';
      }
    }
    const headers: Record<string, string> = { ...corsHeaders(base.listener, base.headers['origin']) };
    if (contentType) headers['Content-Type'] = contentType;
    Object.assign(headers, reply.headers);
    if (payload) {
      const compressed = maybeCompress(payload, base.headers['accept-encoding']);
      if (compressed) {
        payload = compressed.body;
        headers['Content-Encoding'] = compressed.encoding;
        headers['Vary'] = headers['Vary'] ? `${headers['Vary']}, Accept-Encoding` : 'Accept-Encoding';
      }
    }
    res.cork(() => {
      res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
      for (const key in headers) res.writeHeader(key, headers[key]!);
      if (base.method === 'HEAD') res.endWithoutBody(payload?.length ?? 0, opt.close ?? false);
      else res.end(payload ?? '', opt.close ?? false);
    });
    this.opts.onResponse?.(reply.status, base.listener);
  }
}

const EMPTY = Buffer.alloc(0);
