/**
 * Which config secrets live in the credential store instead of config.json (REFERENCE §5.2:
 * session token, relay token and VAPID private key are "never on disk"; the password hash stays
 * in the file). The store's own backend decides keyring or 0600 vault file.
 */
import { isPlainObject, type JsonObject } from './merge.js';

/** The slice of CredentialStore the config needs (tests hand in a small fake or the real store). */
export interface SecretVault {
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<unknown>;
}

export interface VaultedSecret {
  readonly parent: readonly string[];
  readonly key: string;
  /** Credential-store account; `/` keeps it apart from upstream names ([a-z0-9_-]+). */
  readonly account: string;
}

export const VAULTED_SECRETS: readonly VaultedSecret[] = [
  { parent: ['services', 'auth'], key: 'session_token', account: 'config/session_token' },
  { parent: ['services', 'relay'], key: 'token', account: 'config/relay_token' },
  { parent: ['services', 'push'], key: 'vapid_private_key', account: 'config/vapid_private_key' },
];

function parentOf(root: unknown, path: readonly string[], create: boolean): JsonObject | undefined {
  let node = root;
  for (const key of path) {
    if (!isPlainObject(node)) return undefined;
    if (create && !isPlainObject(node[key])) node[key] = {};
    node = node[key];
  }
  return isPlainObject(node) ? node : undefined;
}

/** The vaulted secret values found in a config document ('' or absent = none). */
export function secretValues(doc: unknown): Map<string, string> {
  const values = new Map<string, string>();
  for (const s of VAULTED_SECRETS) {
    const v = parentOf(doc, s.parent, false)?.[s.key];
    if (typeof v === 'string' && v !== '') values.set(s.account, v);
  }
  return values;
}

/** Blanks every vaulted secret in `doc` (mutated): what may be written to config.json. */
export function withoutSecrets<T>(doc: T): T {
  for (const s of VAULTED_SECRETS) {
    const parent = parentOf(doc, s.parent, false);
    if (parent && typeof parent[s.key] === 'string') parent[s.key] = '';
  }
  return doc;
}

/** Puts vault values into `doc` (mutated) where the file holds none. */
export function overlaySecrets(doc: unknown, values: ReadonlyMap<string, string>): void {
  for (const s of VAULTED_SECRETS) {
    const value = values.get(s.account);
    if (value === undefined) continue;
    const parent = parentOf(doc, s.parent, true);
    if (parent && (typeof parent[s.key] !== 'string' || parent[s.key] === '')) parent[s.key] = value;
  }
}

export async function readSecrets(vault: SecretVault): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  for (const s of VAULTED_SECRETS) {
    const v = await vault.get(s.account);
    if (v !== null && v !== '') values.set(s.account, v);
  }
  return values;
}

/**
 * Makes the vault hold `next`; returns an undo that puts `previous` back (a commit whose file write
 * failed must leave every secret as it was).
 */
export async function writeSecrets(vault: SecretVault, previous: ReadonlyMap<string, string>, next: ReadonlyMap<string, string>): Promise<() => Promise<void>> {
  const touched: string[] = [];
  // Every account is put back even when one restore fails; the first failure is reported after.
  const undo = async () => {
    let failure: unknown;
    for (const account of touched.reverse()) {
      const old = previous.get(account);
      try {
        if (old === undefined) await vault.delete(account);
        else await vault.set(account, old);
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  };
  try {
    for (const s of VAULTED_SECRETS) {
      const before = previous.get(s.account);
      const after = next.get(s.account);
      if (before === after) continue;
      touched.push(s.account);
      if (after === undefined) await vault.delete(s.account);
      else await vault.set(s.account, after);
    }
  } catch (err) {
    await undo().catch(() => undefined);
    throw err;
  }
  return undo;
}
