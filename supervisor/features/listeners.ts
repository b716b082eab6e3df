/**
 * Auth and the two listeners: the always-on unix socket (no auth) and the optional TCP port (Basic
 * Auth, Host/Origin guard, TLS beside plain HTTP on one port when configured, certificate files
 * followed for renewal). TCP rebinds on a server-settings save without touching the socket, one
 * rebind at a time. Built first, so other features can read its auth and addresses; it serves the
 * composed routes once `serve` hands them over.
 */
import type { Paths } from '../../shared/paths.js';
import { VERSION } from '../../shared/version.js';
import type { ConfigStore } from '../config/configStore.js';
import { effectiveTcpPort } from '../config/env.js';
import type { ConfigSnapshot } from '../config/schema.js';
import { type AuthSettings, TcpAuth } from '../http/auth.js';
import type { HttpEngine } from '../http/engine/types.js';
import { bindTcp, bindUnix, closeTcp, closeUnix, type TcpBinding, type UnixBinding } from '../http/listeners.js';
import { type GuardSettings, RequestGuard } from '../http/requestGuard.js';
import { HttpServer, type ListenerApp } from '../http/server.js';
import { loadTlsCredentials } from '../http/tlsCredentials.js';
import { followTlsFiles } from '../http/tlsRenewal.js';
import type { Route, WsRoute } from '../http/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';

/** Dev/test knob: the TCP bind host (config binds 0.0.0.0, or [::] with ipv6_enabled); tests keep to 127.0.0.1. */
const BIND_HOST_ENV = 'TUIC_BIND_HOST';

export interface ListenersDeps {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  /** The HTTP engine both listeners run on (selectEngine picks it at start). */
  engine: HttpEngine;
  config: ConfigStore;
  log: Logger;
  metrics: Metrics;
}

export class Listeners {
  readonly auth: TcpAuth;
  /** Why the TCP listener that config asks for is not serving (its bind failed); null when it is, or is off. */
  tcpStartError: string | null = null;
  private http: HttpServer | null = null;
  private table: { routes: readonly Route[]; wsRoutes: readonly WsRoute[] } = { routes: [], wsRoutes: [] };
  private socket: { app: ListenerApp; binding: UnixBinding } | null = null;
  private tcp: { app: ListenerApp; binding: TcpBinding; stopFollowingTls: () => void } | null = null;
  private tcpTransition: Promise<void> = Promise.resolve();
  private readonly responseCells = new Map<string, { value: number }>();
  private guardCache: { server: unknown; settings: GuardSettings } | undefined;

  constructor(private readonly deps: ListenersDeps) {
    deps.metrics.counter('http_requests_total', 'HTTP responses sent, by listener and status');
    this.auth = new TcpAuth(() => this.authSettings());
  }

  /** The routes both listeners serve; once, before the socket binds. */
  serve(routes: Route[], wsRoutes: WsRoute[]): void {
    if (this.http) throw new Error('listeners already serve their routes');
    this.table = { routes, wsRoutes };
    const { config, log } = this.deps;
    this.http = new HttpServer({
      engine: this.deps.engine,
      guard: new RequestGuard({ settings: () => this.guardSettings(), boundHost: () => this.tcp?.binding.host ?? null }),
      routes,
      wsRoutes,
      limits: () => {
        const s = config.get().services.server;
        return { maxBodyBytes: s.max_body_bytes, requestTimeoutMs: s.request_timeout_ms };
      },
      auth: this.auth,
      onResponse: (status, listener) => this.responseCell(listener, status).value++,
      onHandlerError: (err, ctx) => log.error({ err, path: ctx.path, method: ctx.method }, 'handler failed'),
    });
  }

  /** The routes both listeners serve (GET /openapi.json documents exactly these). */
  routeTable(): { routes: readonly Route[]; wsRoutes: readonly WsRoute[] } {
    return this.table;
  }

  /** The one line printed at start: where clients find us. */
  describe(): string {
    const { engine, paths } = this.deps;
    let tcp = '';
    if (this.tcp) {
      const { binding, app } = this.tcp;
      tcp = ` and tcp http://${binding.host}:${binding.port}`;
      if (app.tls)
        tcp += ` and https://${binding.host}:${binding.port} (one port${app.engine === engine ? '' : `; tcp on http engine ${app.engine.name}: ${app.engine.detail}`})`;
    }
    return `tuicd ${VERSION} serving on unix socket ${paths.socketPath}${tcp} (http engine ${engine.name}: ${engine.detail})`;
  }

  /** Our own port for the circular-proxy checks: the bound TCP port, else the one configured. */
  ownPort(): number {
    return this.tcp?.binding.port ?? effectiveTcpPort(this.deps.config.get(), this.deps.env);
  }

  tcpAddress(): { host: string; port: number; tls: boolean } | null {
    return this.tcp ? { host: this.tcp.binding.host, port: this.tcp.binding.port, tls: this.tcp.app.tls } : null;
  }

  async bindSocket(): Promise<void> {
    const { log } = this.deps;
    const app = this.server().createApp('socket');
    const binding = await bindUnix(app.app, this.deps.paths.socketPath, (path) =>
      log.warn({ listener: 'socket', path }, 'removed a stale socket file left by a dead server'),
    );
    this.socket = { app, binding };
    log.info({ listener: 'socket', path: binding.path }, 'socket listener bound (always-on IPC listener, no auth)');
  }

  async startTcp(reason: string): Promise<void> {
    const { config: store, paths, log } = this.deps;
    const config = store.get();
    const { host, port } = this.tcpSettings(config);
    // Checked before binding: a bad certificate or key fails this start, naming the file.
    const tls = loadTlsCredentials(config.services.tls, paths.configDir) ?? undefined;
    const app = this.server().createApp('tcp', tls);
    const binding = await bindTcp(app.app, host, port);
    const stopFollowingTls = tls
      ? followTlsFiles(config.services.tls, paths.configDir, tls, (renewed) => app.app.setTlsCredentials?.(renewed), {
          renewed: (files) => log.info({ listener: 'tcp', ...files }, 'TLS certificate files changed: new connections use them'),
          refused: (message) =>
            log.warn({ listener: 'tcp', reason: message }, 'TLS certificate files changed but do not load; still serving the previous ones'),
        })
      : () => {};
    this.tcp = { app, binding, stopFollowingTls };
    this.tcpStartError = null;
    log.info(
      { listener: 'tcp', host: binding.host, port: binding.port, tls: app.tls, http_engine: app.engine.name, reason },
      `TCP listener started (remote access, Basic Auth${app.tls ? ', TLS and plain HTTP on one port' : ''}); socket listener untouched`,
    );
  }

  /** Rebinds only the TCP listener; serialized so two quick saves cannot interleave binds. */
  restartTcp(reason: string): Promise<void> {
    this.tcpTransition = this.tcpTransition.then(async () => {
      this.stopTcp(reason);
      this.tcpStartError = null;
      if (!this.deps.config.get().services.server.enabled) return;
      try {
        await this.startTcp(reason);
      } catch (err) {
        this.tcpStartError = (err as Error).message;
        this.deps.log.error({ listener: 'tcp', err, reason }, 'TCP listener failed to rebind; socket listener untouched');
      }
    });
    return this.tcpTransition;
  }

  /** Closes both listeners, after any rebind under way. */
  async stop(reason: string): Promise<void> {
    await this.tcpTransition;
    this.stopTcp(reason);
    if (this.socket) {
      closeUnix(this.socket.binding);
      this.deps.log.info({ listener: 'socket', path: this.socket.binding.path, reason }, 'socket listener closed (always-on IPC listener)');
      this.socket = null;
    }
  }

  private server(): HttpServer {
    if (!this.http) throw new Error('listeners have no routes to serve yet');
    return this.http;
  }

  private stopTcp(reason: string): void {
    if (!this.tcp) return;
    this.tcp.app.retired = true;
    this.tcp.stopFollowingTls();
    closeTcp(this.tcp.binding);
    this.deps.log.info({ listener: 'tcp', port: this.tcp.binding.port, reason }, 'TCP listener stopped; socket listener untouched');
    this.tcp = null;
  }

  private tcpSettings(config: ConfigSnapshot): { host: string; port: number } {
    const host = this.deps.env[BIND_HOST_ENV] || (config.services.server.ipv6_enabled ? '::' : '0.0.0.0');
    return { host, port: effectiveTcpPort(config, this.deps.env) };
  }

  /** One cached counter cell per listener and status, so counting a response is a map hit. */
  private responseCell(listener: string, status: number): { value: number } {
    const key = listener + status;
    let cell = this.responseCells.get(key);
    if (!cell) this.responseCells.set(key, (cell = this.deps.metrics.cell('http_requests_total', { listener, status: String(status) })));
    return cell;
  }

  /** The same object until config changes, so the guard rebuilds its lists only after a save. */
  private guardSettings(): GuardSettings {
    const server = this.deps.config.get().services.server;
    if (this.guardCache?.server !== server)
      this.guardCache = { server, settings: { allowedHosts: server.allowed_hosts, allowedOrigins: server.allowed_origins } };
    return this.guardCache.settings;
  }

  private authSettings(): AuthSettings {
    const auth = this.deps.config.get().services.auth;
    return {
      username: auth.username,
      passwordHash: auth.password_hash,
      sessionToken: auth.session_token,
      sessionTokenDurationSecs: auth.session_token_duration_secs,
      lanAuthBypass: auth.lan_auth_bypass,
      rateLimitMax: auth.auth_rate_limit_max,
      rateLimitWindowSecs: auth.auth_rate_limit_window_secs,
    };
  }
}
