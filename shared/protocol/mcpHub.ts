/**
 * The contract between the supervisor and the upstream hub worker thread (workers/mcp), and the
 * small reverse contract the supervisor serves to the hub (credentials read per attempt).
 * Tool lists and tool results ride as UTF-8 JSON payloads beside the header: the supervisor splices
 * them into /mcp responses without re-encoding.
 */
import { Type } from 'typebox';

import { defineProtocol } from './defineProtocol.js';
import { UpstreamServerSchema, UpstreamStatusSchema } from './upstreamServer.js';

export const MCP_HUB_PROTOCOL_VERSION = 2;

/** Every resilience constant of the proxy hub (circuit breaker, health checks, settle gate, tool names), in one place. */
export const HubConstants = {
  /** CB_THRESHOLD: consecutive failures that open the circuit. */
  CB_THRESHOLD: 3,
  /** CB_BASE_MS × 2^(opens−1), capped at CB_MAX_MS. */
  CB_BASE_MS: 1_000,
  CB_MAX_MS: 60_000,
  /** CB_MAX_RETRIES: the 11th open marks the upstream failed (manual reconnect). */
  CB_MAX_RETRIES: 10,
  /** HEALTH_CHECK_INTERVAL. */
  HEALTH_CHECK_INTERVAL_MS: 60_000,
  /** The first tools/list waits at most this long for boot connects to settle. */
  SETTLE_TIMEOUT_MS: 3_000,
  /** Clients (Grok, some gateways) refuse longer names: a qualified name past it is reported and skipped. */
  MAX_TOOL_NAME_LENGTH: 64,
  /** `{upstream}__{tool}`: the routing discriminator; native names never contain it. */
  SEPARATOR: '__',
} as const;

/** A JSON-RPC error an upstream (or the hub refusing on its behalf) answered with. */
export const JsonRpcErrorSchema = Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) });

/**
 * What lets the hub send an upstream's requests and progress back to the client whose request it
 * is serving: `route` is opaque to the hub (the supervisor's name for one client request, its
 * protocol session and request id); `progress_token` is the client's `_meta.progressToken`, which
 * the hub replaces with one of its own on the way up and restores on the way back.
 */
export const ClientRouteSchema = {
  route: Type.Optional(Type.String()),
  progress_token: Type.Optional(Type.Union([Type.String(), Type.Number()])),
};

/** The MCP methods `request` forwards to one upstream (everything but tools/call, which is `call`). */
export const FORWARDED_METHODS = ['resources/read', 'resources/subscribe', 'resources/unsubscribe', 'prompts/get', 'completion/complete'] as const;
export type ForwardedMethod = (typeof FORWARDED_METHODS)[number];

/** MCP's logging levels, lowest first (RFC 5424 severities). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type McpLogLevel = (typeof LOG_LEVELS)[number];
// Spelled out: a mapped array loses the tuple type, and the schema's static type became `never`.
export const McpLogLevelSchema = Type.Union([
  Type.Literal('debug'),
  Type.Literal('info'),
  Type.Literal('notice'),
  Type.Literal('warning'),
  Type.Literal('error'),
  Type.Literal('critical'),
  Type.Literal('alert'),
  Type.Literal('emergency'),
]);

export const UpstreamMetricsSchema = Type.Object({ call_count: Type.Integer(), error_count: Type.Integer(), last_latency_ms: Type.Integer() });

/** One row of GET /mcp/upstream-status, plus the stdio child's pid. */
export const UpstreamStatusRowSchema = Type.Object({
  name: Type.String(),
  status: UpstreamStatusSchema,
  transport: Type.Union([
    Type.Object({ type: Type.Literal('http'), url: Type.String() }),
    Type.Object({ type: Type.Literal('stdio'), command: Type.String(), args: Type.Array(Type.String()), cwd: Type.Union([Type.String(), Type.Null()]) }),
  ]),
  tool_count: Type.Integer(),
  /** Original (unprefixed) names, after the filter. */
  tools: Type.Array(Type.String()),
  metrics: UpstreamMetricsSchema,
  last_error: Type.Union([Type.String(), Type.Null()]),
  /** The stdio child's process id while it runs (tests check a hot reload left it alone). */
  pid: Type.Union([Type.Integer(), Type.Null()]),
  /** While `authenticating`: the pending OAuth flow's authorization URL (added by the supervisor). */
  authorization_url: Type.Optional(Type.String()),
  /** The scope a 403 insufficient_scope asked for: the next authorization requests it too. */
  auth_scope: Type.Optional(Type.String()),
});

export const McpHubProtocol = defineProtocol({
  name: 'mcp-hub',
  version: MCP_HUB_PROTOCOL_VERSION,
  requests: {
    /**
     * Registers one upstream and starts connecting it in the background (answers before the
     * handshake). Errors: `Upstream '<n>' already registered`, `Upstream '<n>' points to TUIC itself — circular proxy`.
     * Re-arms the settle gate when the server is enabled.
     */
    connect: { params: Type.Object({ server: UpstreamServerSchema, own_port: Type.Union([Type.Integer(), Type.Null()]) }), result: Type.Object({}) },
    /** Unregisters and shuts down (stdio: graceful, detached). Error: `Upstream '<n>' not found`. */
    disconnect: { params: Type.Object({ name: Type.String() }), result: Type.Object({}) },
    /** Manual reconnect (also out of `failed`): status connecting, disconnect, connect. Error: `Upstream '<n>' not found`. */
    reconnect: { params: Type.Object({ name: Type.String() }), result: Type.Object({}) },
    /** An OAuth flow's status change (authenticating, needs_auth, or the status before a cancelled attempt). Error: `Upstream '<n>' not found`. */
    authStatus: {
      params: Type.Object({ name: Type.String(), status: UpstreamStatusSchema, last_error: Type.Union([Type.String(), Type.Null()]) }),
      result: Type.Object({}),
    },
    /** mark_initial_connect_complete: every saved upstream is registered (their handshakes may still run). */
    initialConnectComplete: { params: Type.Object({}), result: Type.Object({}) },
    /**
     * proxy_tool_call. Payload in: the arguments object as JSON. Reply payload: the CallToolResult
     * JSON: the upstream's own result unchanged when valid, else the compact text envelope; routing,
     * filter, breaker and upstream errors come back as `isError` envelopes too (never a channel error).
     */
    call: {
      params: Type.Object({ upstream: Type.String(), tool: Type.String(), ...ClientRouteSchema }),
      result: Type.Object({ upstream_error: Type.Boolean() }),
    },
    /**
     * One of FORWARDED_METHODS to one upstream. Payload in: the params as JSON, names and URIs
     * already the upstream's own (the supervisor strips the namespace), without `_meta.progressToken`
     * (carried in `progress_token`). Reply: `error` for a JSON-RPC error, the upstream's or the hub's
     * own refusal (unknown upstream -32602, not ready / circuit open -32603 with the reason, an
     * upstream without the capability -32601); else payload = the raw `result` as JSON, with resource
     * URIs inside it left as the upstream wrote them.
     */
    request: {
      params: Type.Object({ upstream: Type.String(), method: Type.String(), ...ClientRouteSchema }),
      result: Type.Object({ error: Type.Optional(JsonRpcErrorSchema) }),
    },
    /**
     * The lowest level any client asked for with logging/setLevel: sent to every ready upstream that
     * declares `logging`, and to each that becomes ready later.
     */
    setLogLevel: { params: Type.Object({ level: McpLogLevelSchema }), result: Type.Object({}) },
    /** A client notification for every ready upstream (notifications/roots/list_changed). Payload: params JSON, if any. */
    notifyUpstreams: { params: Type.Object({ method: Type.String() }), result: Type.Object({}) },
    status: { params: Type.Object({}), result: Type.Object({ upstreams: Type.Array(UpstreamStatusRowSchema) }) },
    /** Liveness: the supervisor's heartbeat (as the pty protocol's ping); a thread stuck in a loop never answers. */
    ping: { params: Type.Object({}), result: Type.Object({}) },
    /** Stops every upstream (stdio children closed then killed) before the worker exits. */
    shutdown: { params: Type.Object({}), result: Type.Object({}) },
  },
  events: {
    /**
     * The merged upstream tool list changed (or the settle state did). Payload: a JSON array of
     * tool definitions, names already `{upstream}__{tool}`, filters applied, descriptions and
     * schemas byte-for-byte as the upstream sent them. `settled`: boot connects are complete and
     * no enabled entry is `connecting`.
     */
    tools: Type.Object({ revision: Type.Integer(), settled: Type.Boolean(), count: Type.Integer() }),
    /**
     * The merged resources, resource templates and prompts changed (or what the upstreams can do).
     * Payload: JSON `{resources, resourceTemplates, prompts, capabilities}`: every entry as its
     * upstream listed it (all pages), with `uri` / `uriTemplate` namespaced (shared/upstreamUris.ts)
     * and prompt names `{upstream}__{name}`; `capabilities` = `{resources, subscribe, prompts,
     * completions, logging}` (booleans: any ready upstream declares it). `changed` names the lists
     * that differ from the last push, for list_changed notifications.
     */
    lists: Type.Object({
      revision: Type.Integer(),
      changed: Type.Array(Type.Union([Type.Literal('resources'), Type.Literal('prompts')])),
    }),
    /**
     * A notification from an upstream for clients: `notifications/message` (no route: for every
     * client whose level it meets; the supervisor sets `logger`), `notifications/progress` (route set,
     * the client's own token restored), `notifications/resources/updated` (uri namespaced: for the
     * clients subscribed to it). Payload: params JSON.
     */
    notification: Type.Object({ upstream: Type.String(), method: Type.String(), route: Type.Optional(Type.String()) }),
    /** Published on /events as `upstream-status-changed` {name, status, last_error}. */
    status: Type.Object({
      name: Type.String(),
      status: Type.Union([UpstreamStatusSchema, Type.Literal('disconnected')]),
      last_error: Type.Union([Type.String(), Type.Null()]),
    }),
    log: Type.Object({
      level: Type.Union([Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')]),
      msg: Type.String(),
      fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
});

export type McpHubProtocolT = typeof McpHubProtocol;

/** What the supervisor serves back to the hub on a second port. */
export const HubHostProtocol = defineProtocol({
  name: 'mcp-hub-host',
  version: 2,
  requests: {
    /**
     * A secret from the credential store, read per attempt so rotation takes effect at once.
     * `account` is the upstream name (Bearer) or `<name>/header/<credential_ref>`. Null = none stored.
     */
    credential: { params: Type.Object({ account: Type.String() }), result: Type.Object({ value: Type.Union([Type.String(), Type.Null()]) }) },
    /**
     * The upstream answered 401 to `rejected` (the bearer an attempt carried): a different valid
     * generation if one is stored now, else an OAuth refresh (serialized per upstream). Null: no
     * bearer to retry with (a plain token, or the authorization is gone: the upstream is needs_auth).
     */
    refreshCredential: {
      params: Type.Object({ upstream: Type.String(), rejected: Type.String() }),
      result: Type.Object({ value: Type.Union([Type.String(), Type.Null()]) }),
    },
    /**
     * An upstream's request to the client (sampling/createMessage, elicitation/create, roots/list)
     * while it serves `route` (the client request most recently forwarded to it and still open;
     * absent when none is: the supervisor then asks the last client that used the upstream, or
     * refuses). Payload in: params JSON. Reply: `error` (the client's, or -32601 when the client did
     * not declare the capability, or -32603 when no client can be asked), else payload = result JSON.
     */
    clientRequest: {
      params: Type.Object({ upstream: Type.String(), method: Type.String(), route: Type.Optional(Type.String()) }),
      result: Type.Object({ error: Type.Optional(JsonRpcErrorSchema) }),
    },
  },
  events: {},
});

export type HubHostProtocolT = typeof HubHostProtocol;
