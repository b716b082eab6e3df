/**
 * What an upstream's config says about its OAuth: the `auth` field when it is `oauth2`, else an
 * empty one (no auth field: discovery and dynamic registration decide), and the configured client.
 */
import type { OAuthClientInformation } from '@modelcontextprotocol/sdk/shared/auth.js';

import type { OAuth2Auth, UpstreamServer } from '../upstreamConfig.js';

export function oauthAuthOf(server: UpstreamServer): OAuth2Auth {
  return server.auth?.type === 'oauth2' ? server.auth : { type: 'oauth2', client_id: '', scopes: [] };
}

/** The client the config names (`client_id`, optional `client_secret`), used as given; null when none is. */
export function configuredClient(auth: OAuth2Auth): OAuthClientInformation | null {
  if (auth.client_id === '') return null;
  return { client_id: auth.client_id, ...(auth.client_secret ? { client_secret: auth.client_secret } : {}) };
}
