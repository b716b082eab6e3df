/**
 * Where an upstream's authorization server is. An unauthenticated probe of the MCP endpoint; its
 * 401 challenge (`WWW-Authenticate: Bearer resource_metadata=…`) names the RFC 9728 protected
 * resource metadata, which names the authorization server, whose RFC 8414 metadata (or OIDC
 * discovery) gives the endpoints. The SDK's client auth does the metadata fetches and the
 * well-known fallbacks when the challenge names nothing; this adds the probe, the configured
 * endpoint overrides, and the off-domain check.
 *
 * An authorization server on another registrable domain than the MCP server (a gateway, a hosted
 * identity provider), or metadata whose issuer differs from where it was found, is reported
 * (`cross_domain_as`, a warning), never refused: the person authorizing sees the origin and decides.
 */
import { discoverOAuthServerInfo, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

import { ApiError } from '../../../shared/apiError.js';
import type { OAuth2Auth } from '../upstreamConfig.js';

export interface Discovered {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata | undefined;
  resourceMetadata: OAuthProtectedResourceMetadata | undefined;
  /** The RFC 8707 resource to ask a token for. */
  resource: URL;
  asOrigin: string;
  crossDomain: boolean;
  /** The scope the 401 challenge asked for, if it named one. */
  challengeScope: string | undefined;
  /** Why it is flagged (issuer mismatch, another domain), for the log. */
  warnings: string[];
}

/** Second-level labels under which registrations sit one level deeper (`example.co.uk`). */
const SHARED_SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac']);

/** The registrable part of a host, without a public-suffix list: IPs and single labels as they are. */
export function registrableDomain(hostname: string): string {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (/^[\d.]+$/.test(host) || host.includes(':') || !host.includes('.')) return host;
  const labels = host.split('.');
  const keep = labels.length >= 3 && labels[labels.length - 1]!.length === 2 && SHARED_SECOND_LEVEL.has(labels[labels.length - 2]!) ? 3 : 2;
  return labels.slice(-keep).join('.');
}

/** Asks the MCP endpoint without credentials; returns what its 401 challenge names (resource metadata, scope). */
async function probe(serverUrl: URL, fetchFn: typeof fetch, signal: AbortSignal): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const response = await fetchFn(serverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tuicd-oauth-probe', version: '1' } },
    }),
    signal,
  });
  await response.body?.cancel().catch(() => undefined);
  return response.status === 401 ? extractWWWAuthenticateParams(response) : {};
}

export async function discover(serverUrl: URL, auth: OAuth2Auth, fetchFn: typeof fetch, signal: AbortSignal): Promise<Discovered> {
  let resourceMetadataUrl: URL | undefined;
  let challengeScope: string | undefined;
  try {
    ({ resourceMetadataUrl, scope: challengeScope } = await probe(serverUrl, fetchFn, signal));
  } catch (err) {
    throw new ApiError('bad_gateway', `the upstream did not answer the discovery probe: ${(err as Error).message}`);
  }
  let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
  try {
    info = await discoverOAuthServerInfo(serverUrl, { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), fetchFn });
  } catch (err) {
    throw new ApiError('bad_gateway', `OAuth discovery failed: ${(err as Error).message}`);
  }
  const metadata = info.authorizationServerMetadata ? { ...info.authorizationServerMetadata } : undefined;
  if (metadata && auth.authorization_endpoint) metadata.authorization_endpoint = auth.authorization_endpoint;
  if (metadata && auth.token_endpoint) metadata.token_endpoint = auth.token_endpoint;
  const endpoints: AuthorizationServerMetadata | undefined =
    metadata ??
    (auth.authorization_endpoint && auth.token_endpoint
      ? ({
          issuer: info.authorizationServerUrl,
          authorization_endpoint: auth.authorization_endpoint,
          token_endpoint: auth.token_endpoint,
          response_types_supported: ['code'],
        } as AuthorizationServerMetadata)
      : undefined);
  const authorizeAt = new URL(endpoints?.authorization_endpoint ?? new URL('/authorize', info.authorizationServerUrl).href);
  const warnings: string[] = [];
  if (endpoints?.issuer && endpoints.issuer.replace(/\/$/, '') !== info.authorizationServerUrl.replace(/\/$/, ''))
    warnings.push(`the metadata's issuer ${endpoints.issuer} differs from where it was found (${info.authorizationServerUrl})`);
  const crossDomain = registrableDomain(authorizeAt.hostname) !== registrableDomain(serverUrl.hostname);
  if (crossDomain) warnings.push(`the authorization server ${authorizeAt.origin} is on another domain than the MCP server ${serverUrl.origin}`);
  const resource = info.resourceMetadata?.resource ? new URL(info.resourceMetadata.resource) : new URL(serverUrl.href);
  resource.hash = '';
  return {
    authorizationServerUrl: info.authorizationServerUrl,
    metadata: endpoints,
    resourceMetadata: info.resourceMetadata,
    resource,
    asOrigin: authorizeAt.origin,
    crossDomain,
    challengeScope,
    warnings,
  };
}
