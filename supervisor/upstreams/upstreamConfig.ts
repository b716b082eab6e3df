/**
 * `mcp-upstreams.json`: the saved list of upstream MCP servers the hub proxies.
 * Shapes and defaults only; `validateUpstreamConfig` checks the rules that span fields and servers.
 */

export const UPSTREAMS_FILE = 'mcp-upstreams.json';

export const UpstreamDefaults = {
  ENABLED: true,
  /** Per-request deadline; 0 means none. */
  TIMEOUT_SECS: 30,
} as const;

export interface HttpTransport {
  type: 'http';
  url: string;
}

export interface StdioTransport {
  type: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export type UpstreamTransport = HttpTransport | StdioTransport;

export interface ToolFilter {
  mode: 'allow' | 'deny';
  /** Exact names, or a prefix ending in `*`. */
  patterns: string[];
}

export interface BearerAuth {
  type: 'bearer';
  token: string;
}

export interface OAuth2Auth {
  type: 'oauth2';
  client_id: string;
  client_secret?: string;
  scopes: string[];
  authorization_endpoint?: string;
  token_endpoint?: string;
}

export type UpstreamAuth = BearerAuth | OAuth2Auth;

/** A custom header whose value lives in the credential store under `<name>/header/<credential_ref>`. */
export interface SecretHeader {
  name: string;
  credential_ref: string;
}

export interface UpstreamServer {
  id: string;
  name: string;
  transport: UpstreamTransport;
  enabled: boolean;
  timeout_secs: number;
  tool_filter?: ToolFilter;
  auth?: UpstreamAuth;
  headers?: SecretHeader[];
}

export interface UpstreamConfig {
  servers: UpstreamServer[];
}

/** Thrown for a file or body whose shape is wrong (as opposed to rule violations, which are collected). */
export class UpstreamShapeError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(obj: Record<string, unknown>, key: string, where: string, required = true): string | undefined {
  const v = obj[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string') throw new UpstreamShapeError(`${where}.${key} must be a string`);
  return v;
}

function strings(v: unknown, where: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new UpstreamShapeError(`${where} must be an array of strings`);
  return [...v];
}

function transport(raw: unknown, where: string): UpstreamTransport {
  if (!isObject(raw)) throw new UpstreamShapeError(`${where} must be an object with a type`);
  if (raw['type'] === 'http') return { type: 'http', url: str(raw, 'url', where)! };
  if (raw['type'] === 'stdio') {
    const env = raw['env'] ?? {};
    if (!isObject(env) || !Object.values(env).every((v) => typeof v === 'string')) throw new UpstreamShapeError(`${where}.env must map names to strings`);
    const t: StdioTransport = {
      type: 'stdio',
      command: str(raw, 'command', where)!,
      args: strings(raw['args'], `${where}.args`),
      env: { ...(env as Record<string, string>) },
    };
    const cwd = str(raw, 'cwd', where, false);
    if (cwd !== undefined) t.cwd = cwd;
    return t;
  }
  throw new UpstreamShapeError(`${where}.type must be "http" or "stdio"`);
}

function auth(raw: unknown, where: string): UpstreamAuth | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw new UpstreamShapeError(`${where} must be an object with a type`);
  if (raw['type'] === 'bearer') return { type: 'bearer', token: str(raw, 'token', where)! };
  // `o_auth2` is the tag older files carry; `oauth2` is what we write.
  if (raw['type'] === 'oauth2' || raw['type'] === 'o_auth2') {
    const a: OAuth2Auth = { type: 'oauth2', client_id: str(raw, 'client_id', where)!, scopes: strings(raw['scopes'], `${where}.scopes`) };
    for (const key of ['client_secret', 'authorization_endpoint', 'token_endpoint'] as const) {
      const v = str(raw, key, where, false);
      if (v !== undefined) a[key] = v;
    }
    return a;
  }
  throw new UpstreamShapeError(`${where}.type must be "bearer" or "oauth2"`);
}

function toolFilter(raw: unknown, where: string): ToolFilter | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw) || (raw['mode'] !== 'allow' && raw['mode'] !== 'deny')) throw new UpstreamShapeError(`${where}.mode must be "allow" or "deny"`);
  return { mode: raw['mode'], patterns: strings(raw['patterns'], `${where}.patterns`) };
}

function headers(raw: unknown, where: string): SecretHeader[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw new UpstreamShapeError(`${where} must be an array`);
  const out = raw.map((h, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(h)) throw new UpstreamShapeError(`${at} must be an object`);
    // deny_unknown_fields: a `value` here would be a secret about to be written in plain text.
    const unknown = Object.keys(h).filter((k) => k !== 'name' && k !== 'credential_ref');
    if (unknown.length > 0) throw new UpstreamShapeError(`${at} has unknown fields: ${unknown.join(', ')} (header values live in the credential store)`);
    return { name: str(h, 'name', at)!, credential_ref: str(h, 'credential_ref', at)! };
  });
  return out.length > 0 ? out : undefined;
}

/** Reads one server, applying defaults; shape errors name the field. */
export function parseUpstreamServer(raw: unknown, index: number): UpstreamServer {
  const where = `servers[${index}]`;
  if (!isObject(raw)) throw new UpstreamShapeError(`${where} must be an object`);
  const enabled = raw['enabled'] ?? UpstreamDefaults.ENABLED;
  if (typeof enabled !== 'boolean') throw new UpstreamShapeError(`${where}.enabled must be a boolean`);
  const timeout = raw['timeout_secs'] ?? UpstreamDefaults.TIMEOUT_SECS;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 0 || timeout > 0xffff_ffff) {
    throw new UpstreamShapeError(`${where}.timeout_secs must be a non-negative integer`);
  }
  const server: UpstreamServer = {
    id: str(raw, 'id', where)!,
    name: str(raw, 'name', where)!,
    transport: transport(raw['transport'], `${where}.transport`),
    enabled,
    timeout_secs: timeout,
  };
  const filter = toolFilter(raw['tool_filter'], `${where}.tool_filter`);
  if (filter) server.tool_filter = filter;
  const a = auth(raw['auth'], `${where}.auth`);
  if (a) server.auth = a;
  const h = headers(raw['headers'], `${where}.headers`);
  if (h) server.headers = h;
  return server;
}

/** `{servers: [...]}` with defaults applied; a missing `servers` is an empty list. */
export function parseUpstreamConfig(raw: unknown): UpstreamConfig {
  if (!isObject(raw)) throw new UpstreamShapeError('the upstream config must be a JSON object');
  const servers = raw['servers'] ?? [];
  if (!Array.isArray(servers)) throw new UpstreamShapeError('servers must be an array');
  return { servers: servers.map((s, i) => parseUpstreamServer(s, i)) };
}
