/**
 * The bearer an OAuth upstream's request carries, refreshed when it must be, once.
 *
 * Every request attempt reads the credential anew (a finished re-authorization takes effect at
 * once). A token set within 60 s of its expiry is refreshed before it is used; a 401 brings back the
 * exact bearer the server rejected. Refreshes are serialized per upstream, and each one re-reads
 * the store first: if the stored token is now a different generation that is still valid (another
 * caller refreshed, or an authorization completed), that one is used as it is; only the rejected or
 * expired generation goes to the token endpoint. So twenty calls that find the token expired
 * together cause one refresh. A rotated refresh token replaces the old one.
 *
 * A refresh the authorization server refuses (`invalid_grant`: revoked, expired, rotated away)
 * leaves the upstream in `needs_auth` with that reason, not `failed` and not a breaker failure:
 * the next authorization works as the first did. The SDK's `refreshAuthorization` makes the token
 * request; discovery is redone only when this process has not seen the upstream's server yet.
 */
import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';

import type { UpstreamStatus } from '../../../shared/protocol/upstreamServer.js';
import type { UpstreamServer } from '../upstreamConfig.js';
import { configuredClient, oauthAuthOf } from './oauthConfig.js';
import { discover, type Discovered } from './oauthDiscovery.js';
import { isExpired, type OAuthStore, parseStoredTokens, type StoredTokens, toStored } from './oauthStore.js';

export interface TokenRefresherDeps {
  servers: () => Promise<readonly UpstreamServer[]>;
  store: OAuthStore;
  /** The raw stored value of an account (a token set as JSON, or a plain Bearer token). */
  read: (account: string) => Promise<string | null>;
  setAuthStatus: (name: string, status: UpstreamStatus, lastError: string | null) => Promise<void>;
  log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
  fetch?: typeof fetch;
  now?: () => number;
}

export class TokenRefresher {
  private readonly queues = new Map<string, Promise<unknown>>();
  /** What discovery found per upstream URL in this process (a refresh needs the token endpoint). */
  private readonly discovered = new Map<string, Discovered>();
  private readonly fetchFn: typeof fetch;
  private readonly now: () => number;
  /** Refreshes made (tests and the bench count them). */
  refreshes = 0;

  constructor(private readonly deps: TokenRefresherDeps) {
    this.fetchFn = deps.fetch ?? globalThis.fetch;
    this.now = deps.now ?? Date.now;
  }

  /** Remembers a flow's discovery, so the first refresh does not repeat it. */
  remember(url: string, discovered: Discovered): void {
    this.discovered.set(url, discovered);
  }

  /** The bearer for a request to `upstream` now: its access token (refreshed first if expired), or a plain token as stored. */
  async bearer(upstream: string): Promise<string | null> {
    const value = await this.deps.read(upstream);
    const tokens = value === null ? null : parseStoredTokens(value);
    if (tokens === null) return value;
    if (!isExpired(tokens, this.now())) return tokens.access_token;
    return this.serialized(upstream, () => this.refreshUnless(upstream, (t) => !isExpired(t, this.now())));
  }

  /** After a 401: a different valid generation if one is stored now, else a refreshed token; null when there is none. */
  async afterRejection(upstream: string, rejected: string): Promise<string | null> {
    const value = await this.deps.read(upstream);
    if (value === null || parseStoredTokens(value) === null) return null; // a plain Bearer token is not refreshed
    return this.serialized(upstream, () => this.refreshUnless(upstream, (t) => t.access_token !== rejected && !isExpired(t, this.now())));
  }

  private serialized<T>(upstream: string, op: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(upstream) ?? Promise.resolve();
    const next = previous.then(op, op);
    const settled = next.catch(() => undefined);
    this.queues.set(upstream, settled);
    void settled.then(() => {
      if (this.queues.get(upstream) === settled) this.queues.delete(upstream);
    });
    return next;
  }

  /** Inside the upstream's queue: the stored set if `good` accepts it, else one refresh. */
  private async refreshUnless(upstream: string, good: (t: StoredTokens) => boolean): Promise<string | null> {
    const tokens = await this.deps.store.tokens(upstream);
    if (tokens === null) return null;
    if (good(tokens)) return tokens.access_token;
    if (tokens.refresh_token === undefined) {
      await this.lost(upstream, 'The access token expired and the authorization server gave no refresh token: authorize again');
      return null;
    }
    const server = (await this.deps.servers()).find((s) => s.name === upstream);
    if (server?.transport.type !== 'http') return null;
    try {
      const url = server.transport.url;
      let found = this.discovered.get(url);
      if (found === undefined) {
        found = await discover(new URL(url), oauthAuthOf(server), this.fetchFn, AbortSignal.timeout(30_000));
        this.discovered.set(url, found);
      }
      const client = configuredClient(oauthAuthOf(server)) ?? (await this.deps.store.client(upstream));
      if (client === null) {
        await this.lost(upstream, 'No OAuth client is known for this upstream (its registration is gone): authorize again');
        return null;
      }
      const fresh = await refreshAuthorization(found.authorizationServerUrl, {
        ...(found.metadata ? { metadata: found.metadata } : {}),
        clientInformation: client,
        refreshToken: tokens.refresh_token,
        resource: found.resource,
        fetchFn: this.fetchFn,
      });
      const stored = toStored(fresh, this.now(), tokens.refresh_token);
      await this.deps.store.saveTokens(upstream, stored);
      this.refreshes++;
      this.deps.log('info', `OAuth token of '${upstream}' refreshed`, { upstream });
      return stored.access_token;
    } catch (err) {
      const detail = (err as Error).message;
      await this.lost(upstream, `The token refresh was refused (${detail}): authorize again`);
      return null;
    }
  }

  /** The authorization is gone: needs_auth with the reason (never failed, never a breaker failure). */
  private async lost(upstream: string, reason: string): Promise<void> {
    this.deps.log('warn', `OAuth for '${upstream}': ${reason}`, { upstream });
    await this.deps.setAuthStatus(upstream, 'needs_auth', reason).catch(() => undefined);
  }
}
