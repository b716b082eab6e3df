// The four config secrets: stripped on the way out (GET /config, MCP config get) and preserved on
// the way in, so a client that round-trips a redacted config never wipes a secret by accident.

import { objectAt, type JsonObject } from './merge.js';
import type { ConfigSnapshot } from './schema.js';

export interface SecretField {
  /** Object holding the secret, from the config root. */
  readonly parent: readonly string[];
  readonly key: string;
  /** Output-only presence flag exposed instead of the value. */
  readonly flag: string;
  /**
   * Credential-store account holding the value once a store is attached (never in config.json);
   * absent = kept in the file (the password hash). `/` keeps it apart from upstream names.
   */
  readonly vaultAccount?: string;
}

export const SECRET_FIELDS: readonly SecretField[] = [
  { parent: ['services', 'auth'], key: 'password_hash', flag: 'password_hash_exists' },
  { parent: ['services', 'auth'], key: 'session_token', flag: 'session_token_exists', vaultAccount: 'config/session_token' },
  { parent: ['services', 'relay'], key: 'token', flag: 'token_exists', vaultAccount: 'config/relay_token' },
  { parent: ['services', 'push'], key: 'vapid_private_key', flag: 'vapid_private_key_exists', vaultAccount: 'config/vapid_private_key' },
];

/** The client view of the config: AppConfig minus the secrets, plus their `*_exists` flags. */
export type ClientConfig = JsonObject;

/** Returns a deep copy with every secret removed and replaced by its boolean `*_exists` flag. */
export function redactForClient(config: ConfigSnapshot): ClientConfig {
  const copy = structuredClone(config) as unknown as JsonObject;
  for (const field of SECRET_FIELDS) {
    const parent = objectAt(copy, field.parent);
    if (parent === undefined) continue;
    const value = parent[field.key];
    delete parent[field.key];
    parent[field.flag] = typeof value === 'string' && value !== '';
  }
  return copy;
}

/** Removes `*_exists` flags found in a document read from disk (TUICommander wrote some of them). */
export function stripSecretFlags(doc: JsonObject): void {
  for (const field of SECRET_FIELDS) {
    const parent = objectAt(doc, field.parent);
    if (parent !== undefined) delete parent[field.flag];
  }
}

/**
 * Rewrites an incoming partial (mutated in place) so the merge keeps or clears secrets on purpose:
 * - `*_exists` flags are output-only and always removed;
 * - an empty secret ("") means "unchanged" (the client only ever saw the flag) and is dropped;
 * - `*_exists: false` with no new value, or `null`, clears the secret (explicit clear).
 */
export function preserveSecrets(partial: JsonObject): void {
  for (const field of SECRET_FIELDS) {
    const parent = objectAt(partial, field.parent);
    if (parent === undefined) continue;
    const flag = parent[field.flag];
    delete parent[field.flag];
    const value = parent[field.key];
    if (flag === false && (value === undefined || value === '')) parent[field.key] = null;
    else if (value === '') delete parent[field.key];
  }
}
