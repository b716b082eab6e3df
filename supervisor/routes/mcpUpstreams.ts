/**
 * The upstream MCP server routes (REFERENCE §1.6): the saved list, its `{base, config}` save (which
 * also brings the running hub to it), manual reconnect, live status, and the credentials the hub
 * reads per request. Secret values go into the credential store and never come back out: not in
 * GET, not in an error message.
 *
 * Guard: like PUT /config these routes rely on the listener's own gate (`require_local_or_auth` in
 * the seed): the unix socket is owner-only and every TCP request is authenticated before it gets
 * here, so there is no further per-route check.
 */
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import { isPlainObject, type JsonObject } from '../config/merge.js';
import { UpstreamNotFoundError, type UpstreamControl } from '../upstreams/upstreamControl.js';
import { bearerAccount, headerAccount, scrub, type UpstreamSecrets } from '../upstreams/upstreamCredentials.js';
import { UpstreamApplyError, UpstreamIdConflictError, type UpstreamStore } from '../upstreams/upstreamStore.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';
import { MAX_NAME_CHARS } from '../upstreams/validateUpstreams.js';

/** Credential accounts are upstream names, so they follow the same rule (validateUpstreams.ts). */
const NAME_PATTERN = /^[a-z0-9_-]+$/;
/** A credential is a token or a header value: 64 KiB is far beyond any real one, and keyrings choke on more. */
export const MAX_CREDENTIAL_BYTES = 64 * 1024;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface McpUpstreamsRouteDeps {
  store: UpstreamStore;
  control: UpstreamControl;
  /** Null while no credential store is open: the credential routes then answer 503. */
  credentials: () => UpstreamSecrets | null;
  /** `services.server.port`, for the circular-proxy check. */
  ownPort: () => number;
}

/** The newest seed answers these routes with a JSON `null`. */
const JSON_NULL: Reply = { status: 200, headers: { 'Content-Type': 'application/json' }, body: 'null' };

/** A JSON object body; an empty body reads as `{}` so a missing field gets its own message. */
function objectBody(ctx: RequestContext): JsonObject {
  if (ctx.body.length === 0) return {};
  const body = parseJsonBody(ctx);
  if (!isPlainObject(body)) throw new HttpError(400, 'request body must be a JSON object');
  return body;
}

function upstreamName(body: JsonObject): string {
  const name = body['name'];
  if (typeof name !== 'string' || name === '') throw new HttpError(400, "missing 'name'");
  return name;
}

/** The account a credential request addresses: the Bearer token, or one custom header's value. */
function credentialAccount(body: JsonObject): { name: string; account: string } {
  const name = upstreamName(body);
  if (name.length > MAX_NAME_CHARS) throw new HttpError(400, `Name '${clipClientInput(name)}' is invalid: must be at most ${MAX_NAME_CHARS} characters`);
  if (!NAME_PATTERN.test(name))
    throw new HttpError(400, `Name '${clipClientInput(name)}' is invalid: must contain only lowercase letters, digits, hyphens, and underscores`);
  const header = body['header'];
  if (header === undefined || header === null) return { name, account: bearerAccount(name) };
  if (
    !isPlainObject(header) ||
    typeof header['name'] !== 'string' ||
    header['name'] === '' ||
    typeof header['credential_ref'] !== 'string' ||
    !UUID_PATTERN.test(header['credential_ref'])
  ) {
    throw new HttpError(400, "'header' must be {name, credential_ref} with a UUID credential_ref");
  }
  return { name, account: headerAccount(name, header['credential_ref']) };
}

function secretsOrRefuse(credentials: () => UpstreamSecrets | null): UpstreamSecrets {
  const secrets = credentials();
  if (secrets === null) throw new HttpError(503, 'no credential store is open');
  return secrets;
}

export function mcpUpstreamsRoutes(deps: McpUpstreamsRouteDeps): Route[] {
  const list = async () => json({ servers: (await deps.store.read()).servers });

  const save = async (ctx: RequestContext) => {
    const body = objectBody(ctx);
    if (!('base' in body)) throw new HttpError(400, "missing 'base'");
    if (!('config' in body)) throw new HttpError(400, "missing 'config'");
    try {
      await deps.store.save(body['base'], body['config'], { ownPort: deps.ownPort(), applyPlan: (plan) => deps.control.applyPlan(plan) });
    } catch (err) {
      if (err instanceof SupervisorError && err.code === ErrorCode.CONFIG_INVALID) throw new HttpError(400, err.message);
      // A stale copy adding an id someone else added since: the client must reload (the file is untouched).
      if (err instanceof UpstreamIdConflictError) throw new HttpError(409, err.message);
      // Saved, but the hub could not take it: its code and data decide the status (a hub past its
      // restart budget is 503 with Retry-After), the message says the file was saved.
      if (err instanceof UpstreamApplyError && err.cause instanceof SupervisorError) throw new SupervisorError(err.cause.code, err.message, err.cause.data);
      throw err; // conflicts, an unreadable file, write or hub failures: 500 with the message
    }
    return JSON_NULL;
  };

  const reconnect = async (ctx: RequestContext) => {
    const name = upstreamName(objectBody(ctx));
    try {
      await deps.control.reconnect(name);
    } catch (err) {
      if (err instanceof UpstreamNotFoundError) throw new HttpError(404, err.message);
      throw err;
    }
    return JSON_NULL;
  };

  const status = async () => json({ upstreams: await deps.control.status() });

  const setCredential = async (ctx: RequestContext) => {
    const body = objectBody(ctx);
    const { name, account } = credentialAccount(body);
    const token = body['token'];
    if (typeof token !== 'string' || token === '') throw new HttpError(400, "missing 'token'");
    if (Buffer.byteLength(token) > MAX_CREDENTIAL_BYTES) throw new HttpError(400, `'token' must be at most ${MAX_CREDENTIAL_BYTES} bytes`);
    const secrets = secretsOrRefuse(deps.credentials);
    try {
      await secrets.set(account, token);
    } catch (err) {
      throw new HttpError(500, `Could not store the credential of '${name}': ${scrub((err as Error)?.message ?? String(err), token)}`);
    }
    return JSON_NULL;
  };

  const deleteCredential = async (ctx: RequestContext) => {
    const { name, account } = credentialAccount(objectBody(ctx));
    const secrets = secretsOrRefuse(deps.credentials);
    try {
      await secrets.delete(account);
    } catch (err) {
      throw new HttpError(500, `Could not delete the credential of '${name}': ${(err as Error)?.message ?? String(err)}`);
    }
    return JSON_NULL;
  };

  return [
    { method: 'GET', pattern: '/mcp/upstreams', handler: list },
    { method: 'PUT', pattern: '/mcp/upstreams', handler: save },
    { method: 'POST', pattern: '/mcp/upstreams/reconnect', handler: reconnect },
    { method: 'GET', pattern: '/mcp/upstream-status', handler: status },
    { method: 'POST', pattern: '/mcp/upstreams/credential', handler: setCredential },
    { method: 'DELETE', pattern: '/mcp/upstreams/credential', handler: deleteCredential },
  ];
}
