/**
 * Authorizing an OAuth upstream, headless: start a flow (the authorization URL to open anywhere),
 * come back by whichever way the person's browser can (the flow's loopback server, `GET
 * /oauth/callback` on tuicd's own listeners, or the redirect URL pasted from a phone), or cancel.
 *
 * Guard: start, cancel and the pasted callback are ordinary routes (the socket is owner-only, TCP is
 * authenticated). `GET /oauth/callback` is public: the browser coming back from the authorization
 * server may carry no tuicd credential, and the flow's 256-bit `state` is what makes a redirect count.
 */
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { ErrorBodySchema } from '../http/openapi.js';
import { defineRoute, type OtherAnswer } from '../http/routeSpec.js';
import { json, type Route } from '../http/types.js';
import type { OAuthFlows, RedirectVia } from '../upstreams/oauth/oauthFlows.js';

const TAG = 'hub';

const refusal = (description: string): OtherAnswer => ({ description, schema: ErrorBodySchema });

const UpstreamName = Type.String({ minLength: 1, maxLength: 64, errorMessage: "'name' is required (an upstream's name)", description: "The upstream's name." });

const StartAnswer = Type.Object({
  authorization_url: Type.String({ description: 'Open this in a browser to authorize.' }),
  as_origin: Type.String({ description: "The authorization server's origin (show it before opening the URL)." }),
  cross_domain_as: Type.Boolean({ description: 'The authorization server is on another domain than the MCP server: a warning, not a refusal.' }),
  redirect_uri: Type.String({ description: 'Where the authorization server will send the browser back.' }),
});

export function upstreamOAuthRoutes(flows: OAuthFlows): Route[] {
  return [
    defineRoute({
      method: 'POST',
      pattern: '/mcp/upstreams/oauth/start',
      tag: TAG,
      summary: 'Start authorizing an OAuth upstream: the authorization URL to open, and where the browser comes back',
      description:
        'Discovery (the 401 challenge, RFC 9728, RFC 8414 or OIDC), the configured client or dynamic registration (RFC 7591), PKCE S256 and `state`. ' +
        '`redirect: "loopback"` (default) opens a callback server on 127.0.0.1 for this flow; a browser elsewhere lands on an address it cannot open: paste it into POST /mcp/upstreams/oauth/callback. ' +
        '`redirect: "listener"` sends the browser back to GET /oauth/callback on the listener this request came in on (TCP only). The upstream shows `authenticating` until the flow ends (5 minutes at most).',
      body: Type.Object({
        name: UpstreamName,
        redirect: Type.Optional(
          Type.Union([Type.Literal('loopback'), Type.Literal('listener')], {
            errorMessage: "'redirect' must be loopback or listener",
            description: 'Default loopback.',
          }),
        ),
      }),
      answers: {
        200: StartAnswer,
        404: refusal('No such upstream.'),
        409: refusal('The upstream is disabled, has a static Bearer token, or its server offers no registration and no client_id is configured.'),
        502: refusal('Discovery or registration failed at the upstream or its authorization server.'),
      },
      handler: async ({ body }, ctx) => {
        let via: RedirectVia = { kind: 'loopback' };
        if (body.redirect === 'listener') {
          const host = ctx.headers.host;
          if (ctx.listener !== 'tcp' || !host)
            throw new ApiError('invalid_input', "redirect 'listener' needs a request over the TCP listener (the browser must reach the address it came to)", {
              extra: { field: 'redirect', in: 'body' },
            });
          via = { kind: 'listener', baseUrl: `${ctx.tls ? 'https' : 'http'}://${host}` };
        }
        return json(await flows.start(body.name, via));
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/mcp/upstreams/oauth/cancel',
      tag: TAG,
      summary: "Cancel an upstream's pending authorization; its status goes back to what it was before",
      body: Type.Object({ name: UpstreamName }),
      answers: { 200: Type.Object({ cancelled: Type.Integer({ minimum: 1 }) }), 404: refusal('No authorization is pending for this upstream.') },
      handler: async ({ body }) => json(await flows.cancel(body.name)),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/mcp/upstreams/oauth/callback',
      tag: TAG,
      summary: 'Finish an authorization with the redirect URL the browser was sent to (pasted from a phone or another machine)',
      body: Type.Object({
        url: Type.String({
          minLength: 1,
          maxLength: 8192,
          errorMessage: "'url' is required (the whole redirect address)",
          description: 'The address the browser landed on.',
        }),
      }),
      answers: {
        200: Type.Object({ ok: Type.Literal(true), upstream: Type.String() }),
        403: refusal('The authorization server denied access.'),
        410: refusal('The flow was cancelled, expired, already used, or never existed.'),
        502: refusal('The token exchange failed.'),
      },
      handler: async ({ body }) => {
        const outcome = await flows.completePasted(body.url);
        switch (outcome.kind) {
          case 'authorized':
            return json({ ok: true, upstream: outcome.upstream });
          case 'denied':
            throw new ApiError(
              'forbidden',
              `The authorization server denied access for '${outcome.upstream}' (${outcome.detail}); start a new authorization to retry`,
            );
          case 'expired':
            throw new ApiError('gone', `${outcome.reason} Start a new authorization to retry.`);
          default:
            throw new ApiError('bad_gateway', `The token exchange for '${outcome.upstream}' failed: ${outcome.detail}`);
        }
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/oauth/callback',
      tag: TAG,
      summary: "Where an authorization server sends the browser back (redirect 'listener'): a page saying what happened",
      query: Type.Object(
        {
          state: Type.Optional(Type.String()),
          code: Type.Optional(Type.String()),
          error: Type.Optional(Type.String()),
          error_description: Type.Optional(Type.String()),
        },
        { additionalProperties: true },
      ),
      public: true,
      answers: {
        200: { description: 'Authorized (HTML).', contentType: 'text/html' },
        403: { description: 'Denied at the authorization server (HTML).', contentType: 'text/html' },
        410: { description: 'Cancelled, expired, used or unknown (HTML).', contentType: 'text/html' },
        502: { description: 'The token exchange failed (HTML).', contentType: 'text/html' },
      },
      handler: async (_input, ctx) => {
        const page = await flows.answerRedirect(ctx.query);
        return {
          status: page.status,
          headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' },
          body: page.html,
        };
      },
    }),
  ];
}
