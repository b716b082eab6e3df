// The one schema for config.json (AppConfig): field names and defaults are TUICommander's, so
// its config.json reads as is (docs/configuration.md lists them).
// It yields the TypeScript type, the compiled check and the editor JSON Schema (jsonSchema.ts).
// Every field carries a default, so a missing file or a missing key reads as that default.

import Type, { type Static } from 'typebox';

/** Server knobs tuicd adds under `services.server`; the values TUICommander's server uses as constants. */
export const SERVER_KNOB_DEFAULTS = {
  /** Concurrent PTY sessions; TUICommander's 50 is a desktop figure, a headless host carries more. */
  max_sessions: 500,
  /** REQUEST_TIMEOUT 301 s: one second above the 300 s confirm/long-op window. Tests shorten it. */
  request_timeout_ms: 301_000,
  /** MAX_BODY_BYTES 2 MiB, as in TUICommander. */
  max_body_bytes: 2 * 1024 * 1024,
  /** MCP protocol sessions held at once; past it the least recently used idle one is evicted. */
  max_mcp_sessions: 10_000,
} as const;

/** Session cookie lifetime: 30 days (newest); the fork's 86400 is migrated on load (normalize.ts). */
export const SESSION_TOKEN_DURATION_SECS = 2_592_000;
export const LEGACY_SESSION_TOKEN_DURATION_SECS = 86_400;

const Port = (fallback: number, description: string) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: fallback, description: `${description}; 0 = any free port` });

export const ServerSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false, description: 'Start the remote TCP listener' }),
    port: Port(9876, 'Remote TCP port; TUIC_PORT overrides it for one process without persisting'),
    ipv6_enabled: Type.Boolean({ default: false, description: 'Bind [::] instead of 0.0.0.0' }),
    max_sessions: Type.Integer({ minimum: 1, default: SERVER_KNOB_DEFAULTS.max_sessions }),
    request_timeout_ms: Type.Integer({ minimum: 1, default: SERVER_KNOB_DEFAULTS.request_timeout_ms }),
    max_body_bytes: Type.Integer({ minimum: 1, default: SERVER_KNOB_DEFAULTS.max_body_bytes }),
    max_mcp_sessions: Type.Integer({
      minimum: 1,
      default: SERVER_KNOB_DEFAULTS.max_mcp_sessions,
      description: 'MCP protocol sessions held at once; past it the least recently used idle one is evicted',
    }),
    allowed_hosts: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
      default: [],
      description:
        "Extra Host names the TCP listener answers to (e.g. a Tailscale or reverse-proxy name); loopback, this machine's names and addresses are always allowed",
    }),
    allowed_origins: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
      default: [],
      description: "Browser origins (scheme://host[:port]) besides the listener's own that may call the TCP listener",
    }),
  },
  { default: {} },
);

export const AuthSchema = Type.Object(
  {
    username: Type.String({ default: '' }),
    password_hash: Type.String({ default: '', description: 'bcrypt hash; never returned by GET /config' }),
    session_token: Type.String({ default: '', description: 'Secret; never returned by GET /config' }),
    session_token_duration_secs: Type.Integer({ minimum: 1, default: SESSION_TOKEN_DURATION_SECS }),
    lan_auth_bypass: Type.Boolean({ default: false, description: 'Private-network clients skip auth' }),
    auth_rate_limit_max: Type.Integer({ minimum: 0, default: 5, description: '0 disables the limit' }),
    auth_rate_limit_window_secs: Type.Integer({ minimum: 1, default: 300 }),
  },
  { default: {} },
);

export const TlsOffSchema = Type.Object({ mode: Type.Literal('off') });
export const TlsManualSchema = Type.Object({
  mode: Type.Literal('manual'),
  cert_path: Type.String({ minLength: 1 }),
  key_path: Type.String({ minLength: 1 }),
});
/** On load anything that is neither shape reads as off (TUICommander's lenient parse); a save is strict. */
export const TlsSchema = Type.Union([TlsOffSchema, TlsManualSchema], { default: { mode: 'off' } });

export const RelaySchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    url: Type.String({ default: '' }),
    token: Type.String({ default: '', description: 'Secret; never returned by GET /config' }),
    session_id: Type.String({ default: '' }),
  },
  { default: {} },
);

export const PushSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: false }),
    vapid_private_key: Type.String({ default: '', description: 'Secret; never returned by GET /config' }),
    vapid_public_key: Type.String({ default: '' }),
    vapid_subject: Type.String({ default: 'mailto:noreply@tuicommander.com' }),
  },
  { default: {} },
);

export const ServicesSchema = Type.Object(
  {
    server: ServerSchema,
    auth: AuthSchema,
    tls: TlsSchema,
    relay: RelaySchema,
    push: PushSchema,
    keep_sessions_on_stop: Type.Boolean({
      default: false,
      description: 'On SIGTERM, leave the pty host and its sessions running for the next tuicd to adopt (as --keep-sessions does)',
    }),
    orphan_timeout_min: Type.Number({
      minimum: 0,
      default: 60,
      description: 'Minutes a pty host left without a supervisor keeps its sessions before ending them (a host with none exits at once)',
    }),
  },
  { default: {} },
);

/**
 * AppConfig. Unknown keys are allowed (no additionalProperties: false): keys this version does not
 * model are kept on disk untouched, so a newer or older writer's data survives our saves.
 */
export const AppConfigSchema = Type.Object({
  // tuicd choice: true when the key is missing. TUICommander's default is true too, but
  // its serde default for a *missing key* is false, so a TUICommander config.json without the key reads
  // as disabled. We do not copy that quirk: a missing file and a missing key both mean enabled.
  mcp_server_enabled: Type.Boolean({ default: true, description: 'Serve the /mcp route' }),
  mcp_port: Port(3845, 'Legacy, not the TCP listener port (see services.server.port)'),
  collapse_tools: Type.Boolean({ default: false, description: 'Replace tools/list with the meta-tools' }),
  disabled_native_tools: Type.Array(Type.String(), { default: ['config', 'debug'] }),
  ai_terminal_mcp_enabled: Type.Boolean({ default: false, description: 'Expose the ai_terminal_* tools' }),
  progress_tracking: Type.Boolean({ default: true }),
  intent_tab_title: Type.Boolean({ default: true }),
  suggest_followups: Type.Boolean({ default: true }),
  disabled_mcp_agents: Type.Array(Type.String(), { default: [] }),
  ego_executable: Type.String({ default: '', description: 'ACP binary; empty refuses ACP' }),
  // Display defaults, kept so a client's settings round-trip; the daemon itself ignores them.
  shell: Type.Union([Type.String(), Type.Null()], { default: null }),
  font_family: Type.String({ default: 'JetBrains Mono' }),
  font_size: Type.Number({ exclusiveMinimum: 0, default: 14 }),
  theme: Type.String({ default: 'commander' }),
  language: Type.String({ default: 'en' }),
  update_channel: Type.String({ default: 'stable' }),
  issue_filter: Type.String({ default: 'assigned' }),
  standby_timeout_minutes: Type.Integer({ minimum: 0, default: 5 }),
  index_strategy: Type.String({ default: 'active_and_switch' }),
  services: ServicesSchema,
});

export type AppConfig = Static<typeof AppConfigSchema>;
export type TlsConfig = Static<typeof TlsSchema>;

/** A config that must not be mutated: what ConfigStore hands out (it is also deep-frozen). */
export type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;
export type ConfigSnapshot = DeepReadonly<AppConfig>;
