/**
 * One configured upstream MCP server as it crosses into the hub worker: the `mcp-upstreams.json`
 * entry after defaults (supervisor/upstreams/upstreamConfig.ts parses and validates the file).
 * Secret values never travel here: bearer tokens and header values are read from the credential
 * store per attempt (HubHostProtocol.credential).
 */
import { Type, type Static } from 'typebox';

export const UpstreamTransportSchema = Type.Union([
  Type.Object({ type: Type.Literal('http'), url: Type.String() }),
  Type.Object({
    type: Type.Literal('stdio'),
    command: Type.String(),
    args: Type.Array(Type.String()),
    env: Type.Record(Type.String(), Type.String()),
    cwd: Type.Optional(Type.String()),
  }),
]);

export const ToolFilterSchema = Type.Object({
  mode: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
  patterns: Type.Array(Type.String()),
});

export const UpstreamServerSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  transport: UpstreamTransportSchema,
  enabled: Type.Boolean(),
  timeout_secs: Type.Integer({ minimum: 0 }),
  tool_filter: Type.Optional(ToolFilterSchema),
  /** Only the kind matters to the worker (the OAuth flow is a later issue; bearer tokens come from the store). */
  auth: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true })),
  headers: Type.Optional(Type.Array(Type.Object({ name: Type.String(), credential_ref: Type.String() }))),
});

export type UpstreamServerWire = Static<typeof UpstreamServerSchema>;

/** Wire statuses of an upstream. An entry starts `connecting` when enabled, else `disabled`. */
export const UpstreamStatusSchema = Type.Union([
  Type.Literal('connecting'),
  Type.Literal('ready'),
  Type.Literal('circuit_open'),
  Type.Literal('disabled'),
  Type.Literal('failed'),
  Type.Literal('needs_auth'),
  Type.Literal('authenticating'),
]);
export type UpstreamStatus = Static<typeof UpstreamStatusSchema>;

/** The MCP revision the proxy speaks to upstreams (every HTTP POST carries it; stdio offers it in initialize). */
export const UPSTREAM_PROTOCOL_VERSION = '2025-11-25';
/** clientInfo.name in upstream initialize, and the User-Agent product. */
export const PROXY_CLIENT_NAME = 'tuicommander';
export const PROXY_USER_AGENT_PRODUCT = 'tuicommander-mcp-proxy';
