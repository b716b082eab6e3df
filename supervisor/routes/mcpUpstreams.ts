/**
 * The upstream MCP server routes: the saved list, its `{base, config}` save (which also brings the
 * running hub to it), manual reconnect, live status, and the credentials the hub reads per
 * request. Secret values go into the credential store and never come back out: not in GET, not in
 * an error message.
 *
 * Guard: like PUT /config these routes rely on the listener's own gate: the unix socket is
 * owner-only and every TCP request is authenticated before it gets here, so there is no further
 * per-route check.
 */
import { ApiError } from '../../shared/apiError.js';
import { ErrorBodySchema } from '../http/openapi.js';
import { defineRoute, type OtherAnswer } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Reply, Route } from '../http/types.js';
import type { UpstreamControl } from '../upstreams/upstreamControl.js';
import { bearerAccount, headerAccount, scrub, type UpstreamSecrets } from '../upstreams/upstreamCredentials.js';
import {
  CredentialSetBody,
  CredentialTargetBody,
  MAX_CREDENTIAL_BYTES,
  NullAnswer,
  UpstreamListAnswer,
  UpstreamReconnectBody,
  UpstreamSaveBody,
  UpstreamStatusAnswer,
} from '../upstreams/upstreamSchemas.js';
import type { UpstreamStore } from '../upstreams/upstreamStore.js';

const TAG = 'hub';

export interface McpUpstreamsRouteDeps {
  store: UpstreamStore;
  control: UpstreamControl;
  /** Null while no credential store is open: the credential routes then answer 503. */
  credentials: () => UpstreamSecrets | null;
  /** `services.server.port`, for the circular-proxy check. */
  ownPort: () => number;
  /** The pending OAuth flow's authorization URL of an `authenticating` upstream. */
  pendingAuthorization?: (name: string) => string | null;
}

/** An error answer of this route's own, with the common error body. */
const refusal = (description: string): OtherAnswer => ({ description, schema: ErrorBodySchema });

/** These routes answer a JSON `null` when they are done. */
const JSON_NULL: Reply = { status: 200, headers: { 'Content-Type': 'application/json' }, body: 'null' };

/** The account a credential request addresses: the Bearer token, or one custom header's value. */
function credentialAccount(body: { name: string; header?: { name: string; credential_ref: string } | null }): string {
  return body.header ? headerAccount(body.name, body.header.credential_ref) : bearerAccount(body.name);
}

function secretsOrRefuse(credentials: () => UpstreamSecrets | null): UpstreamSecrets {
  const secrets = credentials();
  if (secrets === null) throw new ApiError('unavailable', 'no credential store is open');
  return secrets;
}

export function mcpUpstreamsRoutes(deps: McpUpstreamsRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/mcp/upstreams',
      tag: TAG,
      summary: 'The saved upstream MCP servers (mcp-upstreams.json), without secrets',
      answers: { 200: UpstreamListAnswer },
      handler: async () => json({ servers: (await deps.store.read()).servers }),
    }),
    defineRoute({
      method: 'PUT',
      pattern: '/mcp/upstreams',
      tag: TAG,
      summary: 'Save the upstream list: what changed from `base` to `config` is applied to the file as it is now, then to the running hub',
      description:
        'Every rule violation is reported at once (`invalid_input`, `Invalid upstream config: …`) and nothing is written. ' +
        'An id another save added since `base` was read is a `conflict`: reload and try again. ' +
        'When the file was saved but the hub could not take it, the error says so; a restarting hub answers 503 with Retry-After.',
      body: UpstreamSaveBody,
      emptyBody: {},
      answers: { 200: NullAnswer, 409: refusal('Another save added the same id meanwhile (`conflict`): reload; the file is untouched.') },
      handler: async ({ body }) => {
        await deps.store.save(body.base, body.config, { ownPort: deps.ownPort(), applyPlan: (plan) => deps.control.applyPlan(plan) });
        return JSON_NULL;
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/mcp/upstreams/reconnect',
      tag: TAG,
      summary: 'Reconnect one upstream now (also out of `failed`)',
      body: UpstreamReconnectBody,
      emptyBody: {},
      answers: { 200: NullAnswer, 404: refusal('No upstream of that name is registered.') },
      handler: async ({ body }) => {
        await deps.control.reconnect(body.name);
        return JSON_NULL;
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/mcp/upstream-status',
      tag: TAG,
      summary: "Every upstream's live status, transport, tools and call metrics",
      answers: { 200: UpstreamStatusAnswer },
      handler: async () => {
        const rows = await deps.control.status();
        const pending = deps.pendingAuthorization;
        if (pending === undefined) return json({ upstreams: rows });
        return json({
          upstreams: rows.map((row) => {
            const url = row.status === 'authenticating' ? pending(row.name) : null;
            return url === null ? row : { ...row, authorization_url: url };
          }),
        });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/mcp/upstreams/credential',
      tag: TAG,
      summary: "Store an upstream's Bearer token, or a custom header's value, in the credential store",
      body: CredentialSetBody,
      emptyBody: {},
      answers: { 200: NullAnswer, 503: refusal('No credential store is open, or a worker is restarting.') },
      handler: async ({ body }) => {
        // The schema bounds characters; a token of multi-byte characters can still be over in bytes.
        if (Buffer.byteLength(body.token) > MAX_CREDENTIAL_BYTES) {
          throw new ApiError('invalid_input', `'token' must be at most ${MAX_CREDENTIAL_BYTES} bytes`, { extra: { field: 'token', in: 'body' } });
        }
        const secrets = secretsOrRefuse(deps.credentials);
        try {
          await secrets.set(credentialAccount(body), body.token);
        } catch (err) {
          throw new ApiError('internal', `Could not store the credential of '${body.name}': ${scrub((err as Error)?.message ?? String(err), body.token)}`);
        }
        return JSON_NULL;
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/mcp/upstreams/credential',
      tag: TAG,
      summary: "Forget an upstream's Bearer token, or a custom header's value",
      body: CredentialTargetBody,
      emptyBody: {},
      answers: { 200: NullAnswer, 503: refusal('No credential store is open, or a worker is restarting.') },
      handler: async ({ body }) => {
        const secrets = secretsOrRefuse(deps.credentials);
        try {
          await secrets.delete(credentialAccount(body));
        } catch (err) {
          throw new ApiError('internal', `Could not delete the credential of '${body.name}': ${(err as Error)?.message ?? String(err)}`);
        }
        return JSON_NULL;
      },
    }),
  ];
}
