/**
 * Upstream secrets live in the credential store, never in mcp-upstreams.json: a Bearer token under
 * the upstream's name, a custom header's value under `<name>/header/<credential_ref>`. The file
 * keeps `auth: {type: "bearer", token: ""}`, so a token that reaches a save (a client sending one,
 * or a file written by hand) is moved out here first.
 */
import type { CredentialStore } from '../secrets/credentialStore.js';
import type { UpstreamConfig } from './upstreamConfig.js';

/** The part of the credential store the upstream code uses (tests and the routes hand in the real one). */
export type UpstreamSecrets = Pick<CredentialStore, 'get' | 'set' | 'delete'>;

export const bearerAccount = (upstream: string): string => upstream;
export const headerAccount = (upstream: string, credentialRef: string): string => `${upstream}/header/${credentialRef}`;

export interface BearerToken {
  account: string;
  value: string;
}

/** A copy with every Bearer token blanked: what clients, the hub and diffs see. */
export function withoutBearerTokens(config: UpstreamConfig): UpstreamConfig {
  return takeBearerTokens(structuredClone(config)).config;
}

/** Blanks the Bearer tokens of `config` in place and returns the non-empty ones with their accounts. */
export function takeBearerTokens(config: UpstreamConfig): { config: UpstreamConfig; tokens: BearerToken[] } {
  const tokens: BearerToken[] = [];
  for (const server of config.servers) {
    if (server.auth?.type !== 'bearer') continue;
    if (server.auth.token !== '') tokens.push({ account: bearerAccount(server.name), value: server.auth.token });
    server.auth.token = '';
  }
  return { config, tokens };
}

/** Reports a token that cannot be stored without ever quoting it. */
export class BearerTokenStoreError extends Error {}

/**
 * Stores the tokens and returns an undo that puts back what each account held before, so a file
 * write that fails afterwards leaves the store as it was (the two are one logical commit).
 */
export async function storeBearerTokens(secrets: UpstreamSecrets | null, tokens: readonly BearerToken[]): Promise<() => Promise<void>> {
  if (tokens.length === 0) return async () => undefined;
  if (secrets === null) {
    throw new BearerTokenStoreError(
      `Cannot keep the Bearer token of '${tokens[0]!.account}': no credential store is open, and tokens are never written to the config file`,
    );
  }
  const restore: Array<{ account: string; previous: string | null | undefined }> = [];
  const undo = async () => {
    for (const { account, previous } of restore.reverse()) {
      try {
        if (previous === null) await secrets.delete(account);
        else if (previous !== undefined) await secrets.set(account, previous);
      } catch (err) {
        process.emitWarning(`could not restore the credential of '${account}' after a failed save: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  };
  for (const { account, value } of tokens) {
    // undefined = unreadable now (keyring away): the new value stays even if the save fails later.
    const previous = await secrets.get(account).catch(() => undefined);
    try {
      await secrets.set(account, value);
    } catch (err) {
      await undo();
      throw new BearerTokenStoreError(`Cannot store the Bearer token of '${account}': ${scrub((err as Error)?.message ?? String(err), value)}`);
    }
    restore.push({ account, previous });
  }
  return undo;
}

/** Removes a secret from a message that might quote it (a keyring tool echoing its input). */
export function scrub(message: string, secret: string): string {
  return secret === '' ? message : message.split(secret).join('[redacted]');
}
