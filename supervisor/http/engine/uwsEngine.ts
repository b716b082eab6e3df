/**
 * The uWebSockets.js engine: native request and response objects are handed to the server as they
 * are (they already have the EngineRequest/EngineResponse shape); a WebSocket is wrapped once, for
 * its sends (uwsSocket.ts).
 */
import type { AppOptions, EngineApp, EngineListenSocket, EngineRequest, EngineResponse, EngineWsBehavior, HttpEngine } from './types.js';
import { type NativeUwsSocket, UwsSocket } from './uwsSocket.js';

/** The part of a uWS module tuicd calls, typed here so neither optional build is needed to compile. */
export interface UwsModule {
  App(): UwsApp;
  DISABLED: unknown;
  us_listen_socket_close(listenSocket: unknown): void;
  us_socket_local_port(socket: unknown): number;
}

interface UwsApp {
  any(pattern: string, handler: (res: EngineResponse, req: EngineRequest) => void): UwsApp;
  ws(pattern: string, behavior: object): UwsApp;
  listen(host: string, port: number, options: number, cb: (listenSocket: unknown) => void): UwsApp;
  listen_unix(cb: (listenSocket: unknown) => void, path: string): UwsApp;
}

/** uWS's LIBUS_LISTEN_EXCLUSIVE_PORT: without it uWS sets SO_REUSEPORT and two servers share a port. */
const LISTEN_EXCLUSIVE_PORT = 1;

export class UwsEngine implements HttpEngine {
  readonly name = 'uws' as const;
  /**
   * uWS's SSLApp serves TLS only, a port cannot be shared with a second app, and uWS cannot adopt a
   * socket Node accepted: a TLS listener runs on the node engine instead (select.ts dualProtocolEngine).
   */
  readonly servesDualProtocol = false;

  constructor(
    private readonly uws: UwsModule,
    readonly detail: string,
  ) {}

  createApp(options: AppOptions = {}): EngineApp {
    if (options.tls) throw new Error('the uWS engine serves no TLS: a TLS listener runs on the node engine (dualProtocolEngine)');
    const { uws } = this;
    const app = uws.App();
    const listenSocket = (ls: unknown, port: number): EngineListenSocket => ({ port, close: () => uws.us_listen_socket_close(ls) });
    return {
      any: (handler) => void app.any('/*', handler),
      ws: <U>(pattern: string, b: EngineWsBehavior<U>) => {
        const wrappers = new WeakMap<NativeUwsSocket<U>, UwsSocket<U>>();
        const wrap = (native: NativeUwsSocket<U>): UwsSocket<U> => {
          let socket = wrappers.get(native);
          if (socket === undefined) wrappers.set(native, (socket = new UwsSocket(native, b.maxBackpressure)));
          return socket;
        };
        const { open, message, drain, close } = b;
        void app.ws(pattern, {
          // No limit in uWS: the wrapper drops whole messages only (uwsSocket.ts).
          maxBackpressure: 0,
          maxPayloadLength: b.maxPayloadLength,
          idleTimeout: b.idleTimeoutS,
          sendPingsAutomatically: true,
          compression: uws.DISABLED,
          upgrade: b.upgrade,
          open: open && ((ws: NativeUwsSocket<U>) => open(wrap(ws))),
          message: message && ((ws: NativeUwsSocket<U>, msg: ArrayBuffer, isBinary: boolean) => message(wrap(ws), msg, isBinary)),
          drain: drain && ((ws: NativeUwsSocket<U>) => drain(wrap(ws))),
          close: (ws: NativeUwsSocket<U>, code: number) => {
            const socket = wrap(ws);
            wrappers.delete(ws);
            close?.(socket, code);
          },
        });
      },
      listenUnix: (path) => {
        let bound: unknown = false;
        app.listen_unix((ls) => (bound = ls), path);
        return Promise.resolve(bound ? listenSocket(bound, 0) : null);
      },
      listenTcp: (host, port) => {
        let bound: unknown = false;
        app.listen(host, port, LISTEN_EXCLUSIVE_PORT, (ls) => (bound = ls));
        return Promise.resolve(bound ? listenSocket(bound, uws.us_socket_local_port(bound)) : null);
      },
    };
  }
}
