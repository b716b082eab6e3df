/**
 * Config secrets in the credential store instead of config.json: the session token, relay token
 * and VAPID private key are never written to disk in clear; the password hash (a bcrypt hash, not
 * the password) stays in the file. The store's own backend decides keyring or 0600 vault file.
 */
import { objectAt } from './merge.js';
import { SECRET_FIELDS, type SecretField } from './secrets.js';

/** The slice of CredentialStore the config needs (tests hand in a small fake or the real store). */
export interface SecretVault {
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<unknown>;
}

/** The secrets that live in the store: every SECRET_FIELDS entry with a vault account. */
const VAULTED = SECRET_FIELDS.filter((f): f is SecretField & { vaultAccount: string } => f.vaultAccount !== undefined);

/** The vaulted secret values found in a config document ('' or absent = none). */
export function secretValues(doc: unknown): Map<string, string> {
  const values = new Map<string, string>();
  for (const s of VAULTED) {
    const v = objectAt(doc, s.parent)?.[s.key];
    if (typeof v === 'string' && v !== '') values.set(s.vaultAccount, v);
  }
  return values;
}

/** Blanks every vaulted secret in `doc` (mutated): what may be written to config.json. */
export function withoutSecrets<T>(doc: T): T {
  for (const s of VAULTED) {
    const parent = objectAt(doc, s.parent);
    if (parent && typeof parent[s.key] === 'string') parent[s.key] = '';
  }
  return doc;
}

/** Puts vault values into `doc` (mutated) where the file holds none. */
export function overlaySecrets(doc: unknown, values: ReadonlyMap<string, string>): void {
  for (const s of VAULTED) {
    const value = values.get(s.vaultAccount);
    if (value === undefined) continue;
    const parent = objectAt(doc, s.parent, true);
    if (parent && (typeof parent[s.key] !== 'string' || parent[s.key] === '')) parent[s.key] = value;
  }
}

export async function readSecrets(vault: SecretVault): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  for (const s of VAULTED) {
    const v = await vault.get(s.vaultAccount);
    if (v !== null && v !== '') values.set(s.vaultAccount, v);
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
    for (const s of VAULTED) {
      const before = previous.get(s.vaultAccount);
      const after = next.get(s.vaultAccount);
      if (before === after) continue;
      touched.push(s.vaultAccount);
      if (after === undefined) await vault.delete(s.vaultAccount);
      else await vault.set(s.vaultAccount, after);
    }
  } catch (err) {
    await undo().catch(() => undefined);
    throw err;
  }
  return undo;
}
