/**
 * What an OAuth upstream keeps, and where: only in the credential store (the OS keyring, else the
 * owner-only vault file, not encrypted: a key kept beside it would protect nothing), never in
 * mcp-upstreams.json or a log.
 *
 * - Tokens, under the upstream's name (the account a Bearer token uses, so the hub's per-attempt
 *   credential read finds them): `{"type":"oauth2", access_token, refresh_token?, expires_at?}`,
 *   `expires_at` in epoch seconds; absent means "no known expiry", never treated as expired.
 * - A dynamically registered client (RFC 7591), under `<name>/oauth-client`: reused by every later
 *   flow until the upstream's transport changes (a registration is bound to its authorization server).
 */
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

import type { UpstreamSecrets } from '../upstreamCredentials.js';

/** A token within this many seconds of its expiry counts as expired (refreshed before use). */
export const EXPIRY_MARGIN_S = 60;

export interface StoredTokens {
  type: 'oauth2';
  access_token: string;
  refresh_token?: string;
  /** Epoch seconds. */
  expires_at?: number;
}

export const tokensAccount = (upstream: string): string => upstream;
export const clientAccount = (upstream: string): string => `${upstream}/oauth-client`;

/** The stored tokens when `value` is an OAuth token set; null for anything else (a plain Bearer token). */
export function parseStoredTokens(value: string | null): StoredTokens | null {
  if (value === null || !value.startsWith('{')) return null;
  try {
    const parsed = JSON.parse(value) as Partial<StoredTokens>;
    if (parsed.type !== 'oauth2' || typeof parsed.access_token !== 'string') return null;
    return {
      type: 'oauth2',
      access_token: parsed.access_token,
      ...(typeof parsed.refresh_token === 'string' ? { refresh_token: parsed.refresh_token } : {}),
      ...(typeof parsed.expires_at === 'number' ? { expires_at: parsed.expires_at } : {}),
    };
  } catch {
    return null;
  }
}

export function isExpired(tokens: StoredTokens, nowMs: number): boolean {
  return tokens.expires_at !== undefined && tokens.expires_at - EXPIRY_MARGIN_S <= nowMs / 1000;
}

/**
 * The token set to store after an exchange or a refresh. A refresh answer without a refresh token
 * keeps the one it was made with (a server that does not rotate); one with a new token replaces it.
 */
export function toStored(tokens: OAuthTokens, nowMs: number, previousRefresh?: string): StoredTokens {
  const refresh = tokens.refresh_token ?? previousRefresh;
  return {
    type: 'oauth2',
    access_token: tokens.access_token,
    ...(refresh !== undefined ? { refresh_token: refresh } : {}),
    ...(typeof tokens.expires_in === 'number' ? { expires_at: Math.floor(nowMs / 1000) + tokens.expires_in } : {}),
  };
}

export class OAuthStore {
  constructor(private readonly secrets: () => UpstreamSecrets | null) {}

  private store(): UpstreamSecrets {
    const s = this.secrets();
    if (s === null) throw new Error('no credential store is open: OAuth tokens are never written to a file in the clear');
    return s;
  }

  async tokens(upstream: string): Promise<StoredTokens | null> {
    return parseStoredTokens(await this.store().get(tokensAccount(upstream)));
  }

  async saveTokens(upstream: string, tokens: StoredTokens): Promise<void> {
    await this.store().set(tokensAccount(upstream), JSON.stringify(tokens));
  }

  async client(upstream: string): Promise<OAuthClientInformationFull | null> {
    const value = await this.store().get(clientAccount(upstream));
    if (value === null) return null;
    try {
      const parsed = JSON.parse(value) as OAuthClientInformationFull;
      return typeof parsed.client_id === 'string' ? parsed : null;
    } catch {
      return null;
    }
  }

  async saveClient(upstream: string, client: OAuthClientInformationFull): Promise<void> {
    await this.store().set(clientAccount(upstream), JSON.stringify(client));
  }

  /** Forgets the OAuth tokens and the registration (a transport moved to another server); a plain Bearer token stays. */
  async forget(upstream: string): Promise<void> {
    const s = this.store();
    if (parseStoredTokens(await s.get(tokensAccount(upstream))) !== null) await s.delete(tokensAccount(upstream));
    await s.delete(clientAccount(upstream));
  }
}
