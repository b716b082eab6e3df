/**
 * Authorizing an OAuth 2.1 upstream from wherever the person is: a browser on this machine, one
 * that reaches tuicd over TCP/TLS, or a phone that can reach neither and pastes the redirect URL.
 *
 * The MCP SDK's client auth (`@modelcontextprotocol/sdk/client/auth.js`) does the protocol pieces:
 * metadata discovery and its fallbacks, dynamic client registration (RFC 7591), the PKCE S256
 * authorization URL with `state` and `resource` (RFC 8707), and the code exchange. tuicd adds what a
 * headless server needs around them:
 * - flows that share nothing (each has its own state, verifier, redirect and callback server; a
 *   second Authorize never waits on the first), recorded before the upstream shows `authenticating`;
 * - three ways back (a per-flow loopback server, `GET /oauth/callback` on tuicd's listeners, and a
 *   pasted redirect URL), each answered with a page or a result that says what happened;
 * - cancel (the status before the attempt comes back), a 5-minute timeout with a sweep back to
 *   `needs_auth`, and late or repeated redirects that authorize nothing and say why;
 * - storage only in the credential store (tokens under the upstream's name, a registration beside
 *   them, reused by later flows), then a reconnect that takes the upstream to `ready`.
 */
import { createHash, randomBytes } from 'node:crypto';

import { exchangeAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationFull, OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';

import { ApiError } from '../../../shared/apiError.js';
import type { UpstreamStatus } from '../../../shared/protocol/upstreamServer.js';
import type { OAuth2Auth, UpstreamServer } from '../upstreamConfig.js';
import { CallbackServer } from './callbackServer.js';
import { callbackPage, outcomeStatus, type CallbackOutcome } from './callbackPage.js';
import { configuredClient, oauthAuthOf } from './oauthConfig.js';
import { discover, type Discovered } from './oauthDiscovery.js';
import { type OAuthStore, toStored } from './oauthStore.js';

export const FLOW_TIMEOUT_MS = 5 * 60_000;
/** A flow's loopback server stays this long past the flow's timeout, to explain a late redirect. */
export const CALLBACK_SERVER_GRACE_MS = 120_000;
const SWEEP_INTERVAL_MS = 15_000;
/** Ended flows remembered (to say why a late redirect authorizes nothing). */
const MAX_ENDED = 256;

/** What the flows need from the hub: the upstream's status, and a reconnect once tokens are stored. */
export interface OAuthHub {
  status(name: string): Promise<{ status: UpstreamStatus; lastError: string | null; authScope?: string } | null>;
  setAuthStatus(name: string, status: UpstreamStatus, lastError: string | null): Promise<void>;
  reconnect(name: string): Promise<void>;
}

export interface OAuthStartEvent {
  name: string;
  authorization_url: string;
  as_origin: string;
  cross_domain_as: boolean;
}

export interface OAuthFlowsDeps {
  /** The saved upstreams (the flow reads the named one's URL and auth). */
  servers: () => Promise<readonly UpstreamServer[]>;
  store: OAuthStore;
  hub: OAuthHub;
  onStart: (event: OAuthStartEvent) => void;
  log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
  /** Told what discovery found for an upstream URL once tokens are stored (the refresher reuses it). */
  discovered?: (url: string, found: Discovered) => void;
  fetch?: typeof fetch;
  now?: () => number;
  /** Test knobs: the flow timeout and the callback server's grace (FLOW_TIMEOUT_MS, CALLBACK_SERVER_GRACE_MS). */
  flowTimeoutMs?: number;
  callbackGraceMs?: number;
}

/** Where the authorization server sends the browser back. */
export type RedirectVia = { kind: 'loopback' } | { kind: 'listener'; baseUrl: string };

interface PendingFlow {
  state: string;
  upstream: string;
  serverUrl: string;
  codeVerifier: string;
  redirectUri: string;
  client: OAuthClientInformationMixed;
  discovered: Discovered;
  authorizationUrl: string;
  createdAt: number;
  previous: { status: UpstreamStatus; lastError: string | null };
  callback: CallbackServer | null;
}

export interface StartResult {
  authorization_url: string;
  as_origin: string;
  cross_domain_as: boolean;
  redirect_uri: string;
}

const LISTENER_CALLBACK_PATH = '/oauth/callback';

function isLoopbackCallback(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' && u.hostname === '127.0.0.1' && u.pathname === '/callback';
  } catch {
    return false;
  }
}

/** A registration can serve a redirect when it lists it (any port for a loopback one, as RFC 8252 requires of servers). */
function registrationServes(client: OAuthClientInformationFull, redirectUri: string): boolean {
  return client.redirect_uris.some((r) => r === redirectUri || (isLoopbackCallback(r) && isLoopbackCallback(redirectUri)));
}

export class OAuthFlows {
  private readonly pending = new Map<string, PendingFlow>();
  /** state → why it no longer authorizes anything (cancelled, expired, used). */
  private readonly ended = new Map<string, { upstream: string; reason: string }>();
  /** Every loopback server still up (a flow's outlives it by the grace period). */
  private readonly servers = new Set<CallbackServer>();
  private readonly fetchFn: typeof fetch;
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | null = null;
  private readonly flowTimeoutMs: number;
  private readonly graceMs: number;

  constructor(private readonly deps: OAuthFlowsDeps) {
    this.fetchFn = deps.fetch ?? globalThis.fetch;
    this.now = deps.now ?? Date.now;
    this.flowTimeoutMs = deps.flowTimeoutMs ?? FLOW_TIMEOUT_MS;
    this.graceMs = deps.callbackGraceMs ?? CALLBACK_SERVER_GRACE_MS;
  }

  startSweeping(): void {
    if (this.sweeper !== null) return;
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  dispose(): void {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const server of this.servers) server.close();
    this.servers.clear();
    this.pending.clear();
  }

  /** The authorization URL of the upstream's newest pending flow (shown beside `authenticating`). */
  pendingUrl(upstream: string): string | null {
    return this.newestFlow(upstream)?.authorizationUrl ?? null;
  }

  private newestFlow(upstream: string): PendingFlow | null {
    let newest: PendingFlow | null = null;
    for (const flow of this.pending.values()) if (flow.upstream === upstream && (newest === null || flow.createdAt >= newest.createdAt)) newest = flow;
    return newest;
  }

  /**
   * For an MCP client that takes URL elicitations and just failed to call a tool of `upstream`: the
   * pending flow's URL, or a new loopback flow's, when the upstream waits for authorization; else null.
   */
  async authorizationFor(upstream: string): Promise<{ url: string; asOrigin: string; elicitationId: string } | null> {
    const status = await this.deps.hub.status(upstream).catch(() => null);
    if (status === null || (status.status !== 'needs_auth' && status.status !== 'authenticating')) return null;
    if (this.newestFlow(upstream) === null) await this.start(upstream, { kind: 'loopback' });
    const flow = this.newestFlow(upstream);
    if (flow === null) return null; // ended already (a redirect came back in between)
    // The elicitation id names the flow without being its state (the redirect's capability).
    const elicitationId = createHash('sha256').update(flow.state).digest('base64url').slice(0, 22);
    return { url: flow.authorizationUrl, asOrigin: flow.discovered.asOrigin, elicitationId };
  }

  async start(name: string, via: RedirectVia): Promise<StartResult> {
    const server = (await this.deps.servers()).find((s) => s.name === name);
    if (!server) throw new ApiError('not_found', `Upstream '${name}' not found`);
    if (server.transport.type !== 'http') throw new ApiError('invalid_input', `Upstream '${name}' is a stdio server: only HTTP upstreams authorize with OAuth`);
    if (server.auth?.type === 'bearer')
      throw new ApiError('conflict', `Upstream '${name}' is configured with a static Bearer token: remove its auth to authorize with OAuth`);
    if (!server.enabled) throw new ApiError('conflict', `Upstream '${name}' is disabled: enable it before authorizing`);
    const before = await this.deps.hub.status(name);
    if (before === null) throw new ApiError('not_found', `Upstream '${name}' not found`);
    const auth = oauthAuthOf(server);
    const serverUrl = new URL(server.transport.url);
    const discovered = await discover(serverUrl, auth, this.fetchFn, AbortSignal.timeout(30_000));
    for (const warning of discovered.warnings) this.deps.log('warn', `OAuth for '${name}': ${warning}`, { upstream: name });

    let callback: CallbackServer | null = null;
    let redirectUri: string;
    const state = randomBytes(32).toString('base64url');
    if (via.kind === 'loopback') {
      const server = new CallbackServer(
        async (query) => this.answerRedirect(query),
        () => this.servers.delete(server),
      );
      callback = server;
      this.servers.add(server);
      await server.listen();
      redirectUri = callback.redirectUri;
    } else {
      redirectUri = new URL(LISTENER_CALLBACK_PATH, via.baseUrl).href;
    }
    try {
      const client = await this.clientFor(name, auth, discovered, redirectUri);
      // The configured scopes, else what the challenge asked for, else what the resource says it
      // supports; plus what a 403 insufficient_scope asked for (a step-up).
      const base = auth.scopes.length > 0 ? auth.scopes.join(' ') : (discovered.challengeScope ?? discovered.resourceMetadata?.scopes_supported?.join(' '));
      const scope = [...new Set([...(base ?? '').split(' '), ...(before.authScope ?? '').split(' ')].filter(Boolean))].join(' ') || undefined;
      const { authorizationUrl, codeVerifier } = await startAuthorization(discovered.authorizationServerUrl, {
        ...(discovered.metadata ? { metadata: discovered.metadata } : {}),
        clientInformation: client,
        redirectUrl: redirectUri,
        state,
        resource: discovered.resource,
        ...(scope ? { scope } : {}),
      });
      const flow: PendingFlow = {
        state,
        upstream: name,
        serverUrl: serverUrl.href,
        codeVerifier,
        redirectUri,
        client,
        discovered,
        authorizationUrl: authorizationUrl.href,
        createdAt: this.now(),
        previous: { status: before.status, lastError: before.lastError },
        callback,
      };
      // Recorded first: the status never says "awaiting authorization" for a flow that does not exist.
      this.pending.set(state, flow);
      callback?.closeIn(this.flowTimeoutMs + this.graceMs);
      await this.deps.hub.setAuthStatus(name, 'authenticating', null);
      const result = { authorization_url: flow.authorizationUrl, as_origin: discovered.asOrigin, cross_domain_as: discovered.crossDomain };
      this.deps.onStart({ name, ...result });
      this.deps.log('info', `OAuth authorization started for '${name}'`, { upstream: name, as_origin: discovered.asOrigin, redirect: via.kind });
      return { ...result, redirect_uri: redirectUri };
    } catch (err) {
      callback?.close();
      this.pending.delete(state);
      throw err;
    }
  }

  /** The configured client, else the kept registration, else a new one (RFC 7591), kept for next time. */
  private async clientFor(name: string, auth: OAuth2Auth, discovered: Discovered, redirectUri: string): Promise<OAuthClientInformationMixed> {
    const configured = configuredClient(auth);
    if (configured !== null) return configured;
    const kept = await this.deps.store.client(name);
    if (kept !== null && registrationServes(kept, redirectUri)) return kept;
    if (discovered.metadata && !discovered.metadata.registration_endpoint)
      throw new ApiError(
        'conflict',
        `Upstream '${name}': the authorization server offers no dynamic client registration; set auth.client_id (an OAuth client registered with it) in the upstream's config`,
      );
    let registered: OAuthClientInformationFull;
    try {
      registered = await registerClient(discovered.authorizationServerUrl, {
        ...(discovered.metadata ? { metadata: discovered.metadata } : {}),
        clientMetadata: {
          client_name: 'tuicd',
          redirect_uris: [...new Set([...(kept?.redirect_uris ?? []), redirectUri])],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        },
        fetchFn: this.fetchFn,
      });
    } catch (err) {
      throw new ApiError('bad_gateway', `Upstream '${name}': dynamic client registration failed: ${(err as Error).message}`);
    }
    await this.deps.store.saveClient(name, registered);
    return registered;
  }

  /** A redirect arriving on a loopback server or `GET /oauth/callback`: the page to show. */
  async answerRedirect(query: URLSearchParams): Promise<{ status: number; html: string; done: boolean }> {
    const outcome = await this.complete(query);
    return { status: outcomeStatus(outcome), html: callbackPage(outcome), done: outcome.kind === 'authorized' };
  }

  /** A redirect URL pasted by the person (the phone case): the same completion, as data. */
  async completePasted(url: string): Promise<CallbackOutcome> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ApiError('invalid_input', "'url' is not a URL: paste the whole address the browser was sent to", { extra: { field: 'url', in: 'body' } });
    }
    if (!parsed.searchParams.has('state'))
      throw new ApiError('invalid_input', "'url' has no state parameter: paste the address the authorization server redirected to", {
        extra: { field: 'url', in: 'body' },
      });
    return this.complete(parsed.searchParams);
  }

  async complete(query: URLSearchParams): Promise<CallbackOutcome> {
    const state = query.get('state') ?? '';
    const flow = this.pending.get(state);
    if (!flow) {
      const ended = this.ended.get(state);
      return ended
        ? { kind: 'expired', upstream: ended.upstream, reason: ended.reason }
        : {
            kind: 'expired',
            upstream: null,
            reason: 'No authorization request with this state is pending (it may have been started by an earlier tuicd run).',
          };
    }
    // Taken now: a second redirect with the same state (a reload) finds it used.
    this.end(flow, 'This authorization was already completed.');
    const error = query.get('error');
    if (error !== null) {
      const detail = error + (query.get('error_description') ? `: ${query.get('error_description')}` : '');
      const lastError =
        error === 'access_denied'
          ? `Authorization was denied at the authorization server (${detail})`
          : `The authorization server answered with an error (${detail})`;
      await this.deps.hub.setAuthStatus(flow.upstream, 'needs_auth', lastError);
      this.deps.log('warn', `OAuth authorization for '${flow.upstream}' refused`, { upstream: flow.upstream, error });
      return { kind: 'denied', upstream: flow.upstream, detail };
    }
    const code = query.get('code');
    if (code === null || code === '') {
      await this.deps.hub.setAuthStatus(flow.upstream, 'needs_auth', 'The redirect carried no authorization code');
      return { kind: 'failed', upstream: flow.upstream, detail: 'the redirect carried no authorization code' };
    }
    try {
      const tokens = await exchangeAuthorization(flow.discovered.authorizationServerUrl, {
        ...(flow.discovered.metadata ? { metadata: flow.discovered.metadata } : {}),
        clientInformation: flow.client,
        authorizationCode: code,
        codeVerifier: flow.codeVerifier,
        redirectUri: flow.redirectUri,
        resource: flow.discovered.resource,
        fetchFn: this.fetchFn,
      });
      await this.deps.store.saveTokens(flow.upstream, toStored(tokens, this.now()));
      this.deps.discovered?.(flow.serverUrl, flow.discovered);
    } catch (err) {
      const detail = (err as Error).message;
      await this.deps.hub.setAuthStatus(flow.upstream, 'needs_auth', `The token exchange failed: ${detail}`);
      this.deps.log('warn', `OAuth token exchange for '${flow.upstream}' failed`, { upstream: flow.upstream, error: detail });
      return { kind: 'failed', upstream: flow.upstream, detail };
    }
    for (const other of [...this.pending.values()])
      if (other.upstream === flow.upstream) this.end(other, 'Another authorization for this upstream completed first.');
    this.deps.log('info', `OAuth authorization for '${flow.upstream}' completed`, { upstream: flow.upstream });
    await this.deps.hub.reconnect(flow.upstream);
    return { kind: 'authorized', upstream: flow.upstream };
  }

  /** Drops the upstream's pending flows and puts back the status it had before the first of them. */
  async cancel(name: string): Promise<{ cancelled: number }> {
    const flows = [...this.pending.values()].filter((f) => f.upstream === name).sort((a, b) => a.createdAt - b.createdAt);
    if (flows.length === 0) throw new ApiError('not_found', `No OAuth authorization is pending for upstream '${name}'`);
    for (const flow of flows) this.end(flow, 'This authorization was cancelled.');
    const previous = flows[0]!.previous;
    await this.deps.hub.setAuthStatus(name, previous.status === 'authenticating' ? 'needs_auth' : previous.status, previous.lastError);
    return { cancelled: flows.length };
  }

  /** Drops flows past their timeout; each one's upstream goes back to `needs_auth` (nothing else would move it). */
  async sweep(): Promise<string[]> {
    const now = this.now();
    const expired = [...this.pending.values()].filter((f) => now - f.createdAt >= this.flowTimeoutMs);
    const upstreams = new Set<string>();
    for (const flow of expired) {
      this.end(flow, `This authorization request expired (${Math.round(this.flowTimeoutMs / 60_000)} minutes passed without a redirect).`);
      upstreams.add(flow.upstream);
    }
    for (const name of upstreams) {
      if (this.newestFlow(name) !== null) continue; // a newer flow for it is still running
      await this.deps.hub.setAuthStatus(name, 'needs_auth', 'The authorization was not completed within 5 minutes').catch(() => undefined);
    }
    return [...upstreams];
  }

  /** Moves a flow from pending to ended; its callback server stays up to its grace, to explain a late redirect. */
  private end(flow: PendingFlow, reason: string): void {
    this.pending.delete(flow.state);
    this.ended.set(flow.state, { upstream: flow.upstream, reason });
    if (this.ended.size > MAX_ENDED) this.ended.delete(this.ended.keys().next().value!);
  }
}
