/** GET /health (public), /stats, /metrics, /api/version and the password-hash helper. */
import { hash as bcryptHash } from '@node-rs/bcrypt';

import type { Metrics } from '../metrics.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';

/** The spec's cost for remote-access password hashes. */
export const BCRYPT_COST = 12;
/** bcrypt reads at most 72 bytes; refuse more rather than silently truncating a passphrase. */
const MAX_PASSWORD_BYTES = 72;

export interface HealthSource {
  version: string;
  /** The commit tuicd runs from; null without a .git checkout. */
  gitHash: string | null;
  instanceId: string;
  startedAtMs: number;
  socketPath: string;
  /** `tls`: the port serves TLS beside plain HTTP. */
  tcp: () => { host: string; port: number; tls: boolean } | null;
  /** Why remote access is on but the TCP listener is not (a taken port, bad TLS files); null otherwise. */
  tcpError: () => string | null;
  sessionCount: () => number;
  maxSessions: () => number;
  credentialStore: () => { backend: string; reason?: string };
  /** Which HTTP engine serves, and why (uWS, or why not). */
  httpEngine: { name: string; detail: string };
}

export function monitoringRoutes(src: HealthSource, metrics: Metrics): Route[] {
  // /health is the hottest public route (liveness probes, bridges): its body changes at most once a
  // second (uptime is in seconds), so it is serialized once per change, not once per request.
  const JSON_HEADERS = { 'Content-Type': 'application/json' };
  let cachedKey = '';
  let cachedBody = '';
  const health = (): Reply => {
    const tcp = src.tcp();
    const tcpError = tcp === null ? src.tcpError() : null;
    const uptime = Math.floor((Date.now() - src.startedAtMs) / 1000);
    const sessions = src.sessionCount();
    const store = src.credentialStore();
    const key = `${uptime}|${sessions}|${tcp?.host ?? ''}|${tcp?.port ?? ''}|${tcp?.tls ?? ''}|${tcpError ?? ''}|${store.backend}`;
    if (key !== cachedKey) {
      cachedKey = key;
      cachedBody = JSON.stringify({
        ok: true,
        version: src.version,
        build: { version: src.version, node: process.version },
        protocol_version: 1,
        instance_id: src.instanceId,
        uptime_secs: uptime,
        session_count: sessions,
        socket_path: src.socketPath,
        listeners: {
          socket: { path: src.socketPath },
          tcp: tcp ? { host: tcp.host, port: tcp.port, tls: tcp.tls } : null,
          ...(tcpError === null ? {} : { tcp_error: tcpError }),
        },
        credential_store: store,
        http_engine: src.httpEngine,
      });
    }
    return { status: 200, headers: JSON_HEADERS, body: cachedBody };
  };
  const stats = (): Reply => {
    const active = src.sessionCount();
    const max = src.maxSessions();
    return json({ active_sessions: active, max_sessions: max, available_slots: Math.max(0, max - active) });
  };
  const metricsRoute = (ctx: RequestContext): Reply => {
    const accept = ctx.headers['accept'] ?? '';
    const wantsText = ctx.query.get('format') === 'prometheus' || /(^|,)\s*text\/plain/.test(accept);
    if (wantsText) return { status: 200, headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }, body: metrics.toPrometheus() };
    return json(metrics.toJson());
  };
  const hashPassword = async (ctx: RequestContext): Promise<Reply> => {
    const body = parseJsonBody<unknown>(ctx);
    // JSON `null` (or any non-object) is a client's mistake, not a 500 from reading a property of it.
    const password = typeof body === 'object' && body !== null ? (body as { password?: unknown }).password : undefined;
    if (typeof password !== 'string' || password.length === 0) throw new HttpError(400, 'password is required');
    if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) throw new HttpError(400, `password must be at most ${MAX_PASSWORD_BYTES} bytes`);
    // Runs on the libuv thread pool: ~250 ms of work never blocks the event loop.
    return json({ hash: await bcryptHash(password, { cost: BCRYPT_COST }) });
  };
  return [
    { method: 'GET', pattern: '/health', handler: health, public: true },
    { method: 'GET', pattern: '/api/version', handler: () => json({ version: src.version, git_hash: src.gitHash }) },
    { method: 'GET', pattern: '/stats', handler: stats },
    { method: 'GET', pattern: '/metrics', handler: metricsRoute },
    { method: 'POST', pattern: '/auth/hash-password', handler: hashPassword },
    { method: 'POST', pattern: '/config/hash-password', handler: hashPassword },
  ];
}
