// Where tuicd's secrets live: the OS keyring when a real one answers a round trip at startup, else
// an owner-only vault file. Which one is in use is always reported (backend + reason), and a secret
// recorded in a keyring that is unreachable now reads as an error, never as "no secret".

import { join } from 'node:path';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';

import { KeyringBackend, keyringLabel, platformKeyring, probeKeyring, type KeyringBackendName } from './keyringBackend.js';
import { VaultFile, type VaultDoc } from './vaultFile.js';

/** The keyring service name TUICommander uses, so both find the same secrets. */
export const DEFAULT_SERVICE = 'tuicommander-mcp';
export const VAULT_FILE_NAME = 'vault.json';
/** A healthy keyring answers the probe in well under 1 s (node start included); a hung bus must not hang startup. */
export const DEFAULT_PROBE_TIMEOUT_MS = 2_000;
/** `file` or `keyring` forces the backend (tests, headless boxes); unset means probe and fall back. */
export const STORE_ENV = 'TUIC_CREDENTIAL_STORE';
/** Names are keyring account names: keep them short and printable. */
const NAME_MAX_CHARS = 256;

export type CredentialBackend = KeyringBackendName | 'file';

export interface CredentialStoreOptions {
  configDir: string;
  /** Keyring service name; default `tuicommander-mcp`. */
  service?: string;
  /** false = file vault without probing (STORE_ENV still wins); default true. */
  preferKeyring?: boolean;
  probeTimeoutMs?: number;
  /** Read for STORE_ENV and handed to the probe (D-Bus address); default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface CredentialStoreStatus {
  backend: CredentialBackend;
  reason?: string;
}

interface Choice {
  keyring: KeyringBackend | null;
  reason?: string;
}

function own(map: Record<string, string>, name: string): string | undefined {
  return Object.hasOwn(map, name) ? map[name] : undefined;
}

function checkName(name: string): void {
  // `__proto__` would set the prototype of the plain objects the vault is made of.
  if (typeof name !== 'string' || name === '' || name.length > NAME_MAX_CHARS || /[\u0000-\u001f\u007f]/.test(name) || name === '__proto__') {
    throw new TypeError(`credential name must be 1-${NAME_MAX_CHARS} printable characters, got ${JSON.stringify(name)}`);
  }
}

async function chooseBackend(opts: Required<CredentialStoreOptions>, vaultPath: string): Promise<Choice> {
  const forced = opts.env[STORE_ENV] ?? '';
  if (forced !== '' && forced !== 'file' && forced !== 'keyring') {
    throw new SupervisorError(ErrorCode.CONFIG_INVALID, `${STORE_ENV} must be "file" or "keyring", got ${JSON.stringify(forced)}`, { env: STORE_ENV });
  }
  if (forced === 'file') return { keyring: null, reason: `${STORE_ENV}=file` };
  const required = forced === 'keyring';
  if (!required && !opts.preferKeyring) return { keyring: null, reason: 'OS keyring disabled by configuration' };
  const backend = platformKeyring();
  let reason = `no OS keyring support on ${process.platform}`;
  if (backend !== null) {
    const probe = await probeKeyring({ service: opts.service, backend, timeoutMs: opts.probeTimeoutMs, env: opts.env });
    if (probe.ok) return { keyring: await KeyringBackend.load(backend, opts.service) };
    reason = probe.reason;
  }
  if (required) throw new SupervisorError(ErrorCode.KEYRING_UNAVAILABLE, `${STORE_ENV}=keyring but ${reason}`, { env: STORE_ENV });
  return { keyring: null, reason: `${reason}; secrets are kept in the owner-only file ${vaultPath}` };
}

export class CredentialStore {
  private constructor(
    readonly backend: CredentialBackend,
    /** Why the file backend is in use; undefined on a keyring. */
    readonly reason: string | undefined,
    private readonly vault: VaultFile,
    private readonly keyring: KeyringBackend | null,
  ) {}

  /**
   * Probes the keyring (in a child, bounded by probeTimeoutMs) and opens the vault file. Fails with
   * VAULT_CORRUPT on a malformed vault (left untouched), KEYRING_UNAVAILABLE when STORE_ENV=keyring
   * and no keyring answers, CONFIG_INVALID on a bad STORE_ENV value.
   */
  static async open(options: CredentialStoreOptions): Promise<CredentialStore> {
    const opts: Required<CredentialStoreOptions> = {
      configDir: options.configDir,
      service: options.service ?? DEFAULT_SERVICE,
      preferKeyring: options.preferKeyring ?? true,
      probeTimeoutMs: options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
      env: options.env ?? process.env,
    };
    const vault = new VaultFile(join(opts.configDir, VAULT_FILE_NAME));
    await vault.prepare();
    await vault.read(); // a corrupt vault stops startup here, before anything could be written
    const choice = await chooseBackend(opts, vault.path);
    const store = new CredentialStore(choice.keyring?.name ?? 'file', choice.reason, vault, choice.keyring);
    // Housekeeping only: an unwritable vault surfaces on the first set(), with its own error.
    await store.dropStaleKeyringCopies().catch(() => undefined);
    return store;
  }

  get vaultPath(): string {
    return this.vault.path;
  }

  /** For logs and /health. */
  status(): CredentialStoreStatus {
    return this.reason === undefined ? { backend: this.backend } : { backend: this.backend, reason: this.reason };
  }

  /** The secret, or null if none is recorded. KEYRING_UNAVAILABLE / KEYRING_FAILED when it exists but cannot be read. */
  async get(name: string): Promise<string | null> {
    checkName(name);
    const doc = await this.vault.peek();
    const inFile = own(doc.secrets, name);
    if (inFile !== undefined) return inFile;
    const where = own(doc.keyring, name);
    if (where === undefined) return null;
    const value = await this.reachableKeyring(name, where).get(name);
    if (value === null) {
      throw new SupervisorError(
        ErrorCode.KEYRING_FAILED,
        `"${name}" is recorded in ${keyringLabel(where)} but it has no such entry (removed outside tuicd, or another keyring is answering); set or delete it to resolve`,
        { backend: where, name, missing: true },
      );
    }
    return value;
  }

  /** True when a value is recorded, even in a keyring unreachable now: `*_exists` flags stay honest. */
  async has(name: string): Promise<boolean> {
    checkName(name);
    const doc = await this.vault.peek();
    return Object.hasOwn(doc.secrets, name) || Object.hasOwn(doc.keyring, name);
  }

  /** Stores in the keyring when there is one (and removes a file copy), else in the vault file. */
  async set(name: string, value: string): Promise<void> {
    checkName(name);
    if (typeof value !== 'string' || value === '') throw new TypeError(`credential "${name}" needs a non-empty string value; use delete() to clear it`);
    await this.vault.update(async (doc) => {
      const previous = own(doc.keyring, name);
      if (this.keyring !== null) {
        await this.keyring.set(name, value);
        delete doc.secrets[name];
        doc.keyring[name] = this.keyring.name;
        if (own(doc.stale, name) === this.keyring.name) delete doc.stale[name]; // overwritten: it is the live copy now
        if (previous !== undefined && previous !== this.keyring.name) doc.stale[name] = previous;
      } else {
        if (previous !== undefined) this.markStale(doc, name, previous);
        doc.secrets[name] = value;
      }
    });
  }

  /** Removes the secret wherever it is; true if one was recorded. */
  delete(name: string): Promise<boolean> {
    checkName(name);
    return this.vault.update(async (doc) => {
      const inFile = Object.hasOwn(doc.secrets, name);
      delete doc.secrets[name];
      const where = own(doc.keyring, name);
      if (where !== undefined && where === this.keyring?.name) {
        await this.keyring.delete(name);
        delete doc.keyring[name];
      } else if (where !== undefined) {
        this.markStale(doc, name, where); // its keyring is unreachable: forget it now, erase it later
      }
      if (this.keyring !== null && own(doc.stale, name) === this.keyring.name) {
        await this.keyring.delete(name);
        delete doc.stale[name];
      }
      return inFile || where !== undefined;
    });
  }

  private markStale(doc: VaultDoc, name: string, where: string): void {
    doc.stale[name] = where;
    delete doc.keyring[name];
  }

  private reachableKeyring(name: string, where: string): KeyringBackend {
    if (this.keyring !== null && this.keyring.name === where) return this.keyring;
    throw new SupervisorError(
      ErrorCode.KEYRING_UNAVAILABLE,
      `"${name}" is held in ${keyringLabel(where)}, which is not in use now (${this.reason ?? `using ${this.backend}`})`,
      { backend: where, name },
    );
  }

  /** Best effort at startup: erase keyring copies superseded while this keyring was unreachable. */
  private async dropStaleKeyringCopies(): Promise<void> {
    const keyring = this.keyring;
    if (keyring === null) return;
    const doc = await this.vault.read();
    if (!Object.values(doc.stale).includes(keyring.name)) return;
    await this.vault.update(async (fresh) => {
      for (const [name, where] of Object.entries(fresh.stale)) {
        if (where !== keyring.name) continue;
        try {
          await keyring.delete(name);
          delete fresh.stale[name];
        } catch {
          // Still recorded as stale: the next start tries again; the live value is unaffected.
        }
      }
    });
  }
}
