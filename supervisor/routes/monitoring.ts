/** GET /health (public), /stats, /metrics, /api/version and the password-hash helper. */
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import type { Metrics } from '../metrics.js';

/** bcrypt cost for remote-access password hashes: TUICommander's, about 250 ms a hash. */
export const BCRYPT_COST = 12;
/** bcrypt reads at most 72 bytes; refuse more rather than silently truncating a passphrase. */
const MAX_PASSWORD_BYTES = 72;

const TAG = 'monitoring';

const Count = Type.Integer({ minimum: 0 });

/** What /health tells a TCP caller without credentials: alive, and which version. */
export const PublicHealthAnswer = Type.Object(
  { ok: Type.Literal(true), version: Type.String() },
  { additionalProperties: false, description: 'On TCP without credentials: nothing but liveness and the version.' },
);

export const FullHealthAnswer = Type.Object({
  ok: Type.Literal(true),
  version: Type.String(),
  build: Type.Object({ version: Type.String(), node: Type.String({ description: 'The Node.js version tuicd runs on.' }) }),
  protocol_version: Type.Literal(1),
  instance_id: Type.String({ description: 'New at every start: a client sees a restart by its change.' }),
  uptime_secs: Count,
  session_count: Count,
  socket_path: Type.String(),
  listeners: Type.Object({
    socket: Type.Object({ path: Type.String() }),
    tcp: Type.Union([Type.Object({ host: Type.String(), port: Type.Integer({ minimum: 0, maximum: 65535 }), tls: Type.Boolean() }), Type.Null()], {
      description: 'null while remote access is off or its listener is down.',
    }),
    tcp_error: Type.Optional(Type.String({ description: 'Why remote access is on but the TCP listener is not (a taken port, bad TLS files).' })),
  }),
  credential_store: Type.Object(
    {
      backend: Type.String({ description: 'Where secrets are kept: a keyring, the owner-only vault file, or `probing` at start.' }),
      reason: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  ),
  http_engine: Type.Object({ name: Type.String(), detail: Type.String() }),
});

export const HealthAnswer = Type.Union([FullHealthAnswer, PublicHealthAnswer], {
  description: 'The full answer on the unix socket and on TCP with credentials; `{ok, version}` on TCP without them.',
});

export const StatsAnswer = Type.Object({
  active_sessions: Count,
  max_sessions: Type.Integer({ minimum: 1 }),
  available_slots: Count,
  closed_sessions: Type.Integer({
    minimum: 0,
    description: 'Sessions that ended and are still readable (tombstones); they hold no slot.',
  }),
  closed_bytes: Type.Integer({
    minimum: 0,
    description: 'What the pty host keeps for closed sessions (final screen, output and log tails), in bytes; 0 while it is not running.',
  }),
  closed_budget_bytes: Type.Integer({
    minimum: 0,
    description: 'The most closed sessions may hold together: past it the oldest are forgotten (their routes answer 404).',
  }),
  session_bytes: Type.Array(
    Type.Object({
      session_id: Type.String(),
      ring_bytes: Type.Integer({ minimum: 0, description: 'Raw output ring: grows in 128 KiB chunks up to its 2 MiB bound.' }),
      log_bytes: Type.Integer({ minimum: 0, description: 'Line log: its text (at most 2 MiB of UTF-8) and 6 bytes per line (position, flag, LF).' }),
      screen_bytes: Type.Integer({ minimum: 0, description: 'Screen grid: held while the screen is read, dropped when idle.' }),
    }),
    { description: 'What each running session holds in the pty host, in bytes; empty while it is not running.' },
  ),
});

export const MetricsAnswer = Type.Record(Type.String(), Type.Union([Type.Number(), Type.Record(Type.String(), Type.Number())]), {
  description: 'Each metric by name: a number, or by label set (`listener=socket,status=200`) a number each.',
});

const PasswordBody = Type.Object(
  { password: Type.String({ minLength: 1, description: `The password, at most ${MAX_PASSWORD_BYTES} bytes of UTF-8.`, errorMessage: 'password is required' }) },
  { errorMessage: 'password is required' },
);

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
  /** Closed sessions still readable, and the pty host's bytes for them against their budget. */
  closedSessions: () => Promise<{ sessions: number; bytes: number; budget_bytes: number }>;
  /** What each running session holds in the pty host (ring, log, screen), in bytes. */
  sessionBytes: () => Promise<Array<{ session_id: string; ring_bytes: number; log_bytes: number; screen_bytes: number }>>;
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
  const publicHealth: Reply = { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ ok: true, version: src.version }) };
  const health = (ctx: RequestContext): Reply => {
    // Paths, versions, counts and uptime are for trusted callers: an anonymous TCP probe learns it is alive.
    if (ctx.authenticated !== true) return publicHealth;
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
  const stats = async (): Promise<Reply> => {
    const [closed, sessionBytes] = await Promise.all([src.closedSessions(), src.sessionBytes()]);
    const active = src.sessionCount();
    const max = src.maxSessions();
    return json({
      active_sessions: active,
      max_sessions: max,
      available_slots: Math.max(0, max - active),
      closed_sessions: closed.sessions,
      closed_bytes: closed.bytes,
      closed_budget_bytes: closed.budget_bytes,
      session_bytes: sessionBytes,
    });
  };
  const hashPassword = defineRoute({
    method: 'POST',
    pattern: '/auth/hash-password',
    tag: 'auth',
    summary: 'A bcrypt hash (cost 12) of a password, for `services.auth.password_hash`',
    body: PasswordBody,
    answers: { 200: Type.Object({ hash: Type.String({ pattern: '^\\$2[aby]\\$12\\$' }) }) },
    handler: async ({ body }) => {
      if (Buffer.byteLength(body.password) > MAX_PASSWORD_BYTES)
        throw new ApiError('invalid_input', `password must be at most ${MAX_PASSWORD_BYTES} bytes`, { extra: { field: 'password', in: 'body' } });
      // Runs on the libuv thread pool: ~250 ms of work never blocks the event loop.
      return json({ hash: await bcryptHash(body.password, { cost: BCRYPT_COST }) });
    },
  });
  return [
    defineRoute({
      method: 'GET',
      pattern: '/health',
      tag: TAG,
      summary: 'Liveness and version; with credentials (or on the unix socket) also listeners, paths and session count',
      description:
        'Served without credentials on TCP, where it answers `{ok, version}` only; credentials sent with it are checked (and a wrong one counts as a failed login), and when they pass the answer is the full one the unix socket gives.',
      answers: { 200: HealthAnswer },
      public: true,
      optionalAuth: true,
      handler: (_input, ctx) => health(ctx),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/api/version',
      tag: TAG,
      summary: 'The version and the commit tuicd runs from',
      answers: {
        200: Type.Object({ version: Type.String(), git_hash: Type.Union([Type.String(), Type.Null()], { description: 'null without a .git checkout.' }) }),
      },
      handler: () => json({ version: src.version, git_hash: src.gitHash }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/stats',
      tag: TAG,
      summary: 'Sessions running, the limit, the slots left, and the closed sessions kept',
      answers: { 200: StatsAnswer },
      handler: stats,
    }),
    defineRoute({
      method: 'GET',
      pattern: '/metrics',
      tag: TAG,
      summary: 'Counters and gauges, as JSON or as Prometheus text',
      description: 'JSON by default; Prometheus text exposition (`text/plain; version=0.0.4`) with `?format=prometheus` or `Accept: text/plain`.',
      query: Type.Object({
        format: Type.Optional(Type.String({ description: '`prometheus` for the text exposition format; anything else, JSON.' })),
      }),
      answers: { 200: { description: 'The metrics: JSON, or Prometheus text when asked for.', contentType: 'application/json', schema: MetricsAnswer } },
      handler: ({ query }, ctx) => {
        const wantsText = query.format === 'prometheus' || /(^|,)\s*text\/plain/.test(ctx.headers['accept'] ?? '');
        if (wantsText) return { status: 200, headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }, body: metrics.toPrometheus() };
        return json(metrics.toJson());
      },
    }),
    hashPassword,
    // The same helper under the config path, where a settings page looks for it.
    { ...hashPassword, pattern: '/config/hash-password', spec: { ...hashPassword.spec!, tag: 'config' } },
  ];
}
