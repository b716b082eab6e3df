/**
 * The fallback engine: Node's own `http` server with the `ws` package for WebSockets, for a Node or
 * libc no uWebSockets.js build loads on. Same contract as uWS (see types.ts), one http.Server per app.
 */
import { createServer, ServerResponse } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

import { nodeBounds, type NodeBounds } from './bounds.js';
import { serveDualProtocol } from './nodeDualProtocol.js';
import { NodeRequest, pathOf } from './nodeRequest.js';
import { type BodyRate, NodeResponse } from './nodeResponse.js';
import { NodeWebSocket } from './nodeWebSocket.js';
import type { AppOptions, EngineApp, EngineListenSocket, EngineRequest, EngineResponse, EngineWsBehavior, HttpEngine, TlsCredentials } from './types.js';
import { codeOfStatus } from '../errorReply.js';

/**
 * After answering a request the parser refused, the connection keeps reading (and discarding) what
 * the client is still sending for this long before it is destroyed: closing with unread input
 * makes the kernel reset the connection, and a reset can discard the answer before the client
 * reads it (a 431 for a 60 KB header followed by a 5 MB body was lost that way). Apache calls this
 * a lingering close. The idle limit restarts with each read; the total is capped.
 */
const LINGER_IDLE_MS = 2_000;
const LINGER_MAX_MS = 10_000;
const lingering = new WeakSet<Socket>();

interface WsRouteEntry {
  segments: string[];
  behavior: EngineWsBehavior<unknown>;
  server: WebSocketServer;
  sockets: Set<NodeWebSocket<unknown>>;
  pinger: NodeJS.Timeout | undefined;
}

export class NodeEngine implements HttpEngine {
  readonly name = 'node' as const;
  readonly servesDualProtocol = true;

  constructor(readonly detail: string) {}

  createApp(options: AppOptions = {}): EngineApp {
    return new NodeApp(options);
  }
}

class NodeApp implements EngineApp {
  private handler: ((res: EngineResponse, req: EngineRequest) => void) | undefined;
  private readonly wsRoutes: WsRouteEntry[] = [];
  private readonly server: Server;
  private readonly bodyRate: BodyRate;

  readonly setTlsCredentials?: (credentials: TlsCredentials) => void;

  constructor(options: AppOptions) {
    // uWS's bounds (bounds.ts): headers within 10 s of the connection's start (Node measures from
    // there too, and answers a late one with 408 through clientError), 10 s of idle keep-alive, a
    // minimum body rate (NodeResponse.onData), and a connection cap, past which Node drops new ones.
    const bounds: NodeBounds = nodeBounds();
    this.bodyRate = { windowMs: bounds.bodyWindowMs, minBytes: bounds.bodyWindowMinBytes };
    // A missing Host is the request guard's to refuse (403 JSON on TCP), as on uWS; not Node's empty 400.
    this.server = createServer(
      {
        keepAliveTimeout: bounds.keepAliveTimeoutMs,
        headersTimeout: bounds.headersTimeoutMs,
        connectionsCheckingInterval: bounds.checkIntervalMs,
        requireHostHeader: false,
      },
      (req, res) => this.onRequest(req, res),
    );
    this.server.maxConnections = bounds.maxConnections;
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.onUpgrade(req, socket, head));
    // A request Node's parser refuses never reaches a handler: answer it in the same JSON shape.
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket));
    // An Expect other than 100-continue: Node's default answer is an empty 417.
    this.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
      req.on('error', ignore);
      answerJson(res, 417, 'only "Expect: 100-continue" is supported');
    });
    // Node hands CONNECT to its own event (a tunnel request); tuicd serves no tunnels.
    this.server.on('connect', (_req: IncomingMessage, socket: Socket) => {
      socket.on('error', ignore);
      answerRaw(socket, 405, 'Method Not Allowed', 'method "CONNECT" is not supported');
    });
    if (options.tls) this.setTlsCredentials = serveDualProtocol(this.server, options.tls);
  }

  any(handler: (res: EngineResponse, req: EngineRequest) => void): void {
    this.handler = handler;
  }

  ws<U>(pattern: string, behavior: EngineWsBehavior<U>): void {
    const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: behavior.maxPayloadLength });
    const entry: WsRouteEntry = {
      segments: pattern.split('/').slice(1),
      behavior: behavior as EngineWsBehavior<unknown>,
      server,
      sockets: new Set(),
      pinger: undefined,
    };
    this.wsRoutes.push(entry);
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    // Errors on a connection the client dropped are the abort path, never a crash.
    req.on('error', ignore);
    res.on('error', ignore);
    this.handler?.(new NodeResponse(req, res, undefined, this.bodyRate), new NodeRequest(req));
  }

  private onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', ignore);
    // An upgrade is answered like any request until a route accepts it: a ServerResponse on the socket.
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    res.shouldKeepAlive = false;
    res.on('finish', () => socket.end());
    const path = pathOf(req.url);
    for (const route of this.wsRoutes) {
      const params = matchSegments(route.segments, path);
      if (params === null) continue;
      const accept = (userData: unknown): void => {
        // `ws` answers a malformed handshake itself, in HTML: refuse it here in JSON instead.
        const bad = badHandshake(req);
        if (bad !== null) {
          return answerJson(res, 400, bad);
        }
        res.detachSocket(socket);
        route.server.handleUpgrade(req, socket, head, (ws) => this.onOpen(route, ws, userData));
      };
      route.behavior.upgrade(new NodeResponse(req, res, accept), new NodeRequest(req, params), undefined);
      return;
    }
    req.on('error', ignore);
    this.handler?.(new NodeResponse(req, res), new NodeRequest(req));
  }

  private onOpen(route: WsRouteEntry, ws: WebSocket, userData: unknown): void {
    const b = route.behavior;
    const socket = new NodeWebSocket(ws, userData, b);
    ws.binaryType = 'arraybuffer';
    route.sockets.add(socket);
    this.keepPinging(route);
    ws.on('error', ignore);
    ws.on('pong', () => (socket.alive = true));
    ws.on('message', (data: ArrayBuffer, isBinary: boolean) => {
      socket.alive = true;
      b.message?.(socket, data, isBinary);
    });
    ws.on('close', (code: number) => {
      socket.markClosed();
      route.sockets.delete(socket);
      b.close?.(socket, code);
    });
    b.open?.(socket);
  }

  /**
   * uWS's idleTimeout with automatic pings: every half period each quiet socket is pinged, and one
   * that neither answered nor sent anything since the last round is cut.
   */
  private keepPinging(route: WsRouteEntry): void {
    if (route.pinger !== undefined) return;
    route.pinger = setInterval(
      () => {
        for (const socket of route.sockets) {
          if (!socket.alive) {
            socket.terminate();
            continue;
          }
          socket.alive = false;
          socket.ping();
        }
      },
      (route.behavior.idleTimeoutS * 1000) / 2,
    );
    route.pinger.unref();
  }

  listenUnix(path: string): Promise<EngineListenSocket | null> {
    return this.listen({ path });
  }

  listenTcp(host: string, port: number): Promise<EngineListenSocket | null> {
    // Node never sets SO_REUSEPORT unless asked: a port someone holds is refused (EADDRINUSE).
    return this.listen({ host, port });
  }

  private listen(options: { path: string } | { host: string; port: number }): Promise<EngineListenSocket | null> {
    const server = this.server;
    return new Promise((resolve) => {
      // Each failed attempt takes its own listeners back: bindTcp retries on this one server.
      const onError = (): void => {
        server.off('listening', onListening);
        resolve(null);
      };
      const onListening = (): void => {
        server.off('error', onError);
        const address = server.address();
        resolve({
          port: typeof address === 'object' && address !== null ? address.port : 0,
          close: () => {
            // Stop accepting, as uWS does, and leave open connections to the app: since Node 19,
            // http's close() also destroys idle ones, and a connection accepted an instant before
            // (its request not parsed yet) counts as idle, so its client met a reset instead of the
            // retired listener's 403. Idle keep-alive connections still end with keepAliveTimeout.
            NetServer.prototype.close.call(server);
            for (const route of this.wsRoutes) clearInterval(route.pinger);
          },
        });
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(options);
    });
  }
}

/** Why `ws` would refuse this upgrade request (RFC 6455 §4.2.1), or null when it is well formed. */
function badHandshake(req: IncomingMessage): string | null {
  if (req.method !== 'GET') return 'a WebSocket upgrade must be a GET';
  if ((req.headers['upgrade'] ?? '').toLowerCase() !== 'websocket') return 'Upgrade header must be "websocket"';
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || !/^[+/0-9A-Za-z]{22}==$/.test(key)) return 'Sec-WebSocket-Key header is missing or invalid';
  const version = req.headers['sec-websocket-version'];
  if (version !== '8' && version !== '13') return 'Sec-WebSocket-Version must be 13';
  const protocol = req.headers['sec-websocket-protocol'];
  if (protocol !== undefined && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/.test(protocol))
    return 'Sec-WebSocket-Protocol header is invalid';
  return null;
}

/** The %-encoded `:param` values of `path` under `segments`, or null when it does not match. */
function matchSegments(segments: string[], path: string): string[] | null {
  const parts = path.split('/').slice(1);
  if (parts.length !== segments.length) return null;
  const params: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg.startsWith(':')) {
      if (parts[i] === '') return null;
      params.push(parts[i]!);
    } else if (seg !== parts[i]) return null;
  }
  return params;
}

function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Node's parser refuses every further chunk of a request already answered: that is the discarding.
  if (lingering.has(socket)) return;
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  if (err.code === 'HPE_INVALID_METHOD') return answerRaw(socket, 405, 'Method Not Allowed', 'method is not supported');
  if (err.code === 'HPE_HEADER_OVERFLOW') return answerRaw(socket, 431, 'Request Header Fields Too Large', 'request headers too large');
  // headersTimeout (or requestTimeout) passed: nothing to linger for, the client is the slow one.
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return answerRaw(socket, 408, 'Request Timeout', 'request not received in time', false);
  answerRaw(socket, 400, 'Bad Request', 'malformed HTTP request');
}

/** A JSON error on a ServerResponse nothing else answers. */
function answerJson(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: message, code: codeOfStatus(status) });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
}

/** A JSON error written straight to a socket no request object owns, then the connection ends (lingering, or at once). */
function answerRaw(socket: Socket, status: number, text: string, message: string, lingers = true): void {
  const body = JSON.stringify({ error: message, code: codeOfStatus(status) });
  const answer = `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  if (!lingers) return void socket.end(answer, () => socket.destroy());
  socket.end(answer);
  linger(socket);
}

/** Half-closed: reads until the client closes too, or the linger limits end it. */
function linger(socket: Socket): void {
  lingering.add(socket);
  const destroy = () => socket.destroy();
  socket.setTimeout(LINGER_IDLE_MS, destroy);
  const cap = setTimeout(destroy, LINGER_MAX_MS);
  cap.unref();
  socket.once('close', () => clearTimeout(cap));
}

function ignore(): void {
  // Handled by the abort path.
}
