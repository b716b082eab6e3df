// Owns config.json: load (never creates or overwrites), partial save (re-read under the locks,
// merge, validate, atomic write), and change events. One commit path for every writer (PUT /config, the
// config tool, key generation), so no writer can skip the checks or clobber another's change.

import { mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { toDisposable, type Disposable } from '../../shared/disposable.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { atomicWriteFile } from './atomicWrite.js';
import { withFileLock } from './fileLock.js';
import { changedPaths, deepMerge, isPlainObject, pathTouches, type JsonObject } from './merge.js';
import { loadTlsCredentials, type TlsCredentialsErrorData } from './tlsCredentials.js';
import { assertDepth, assertKnownFields, defaultConfig, invalidConfig, normalizeConfig } from './normalize.js';
import type { AppConfig, ConfigSnapshot } from './schema.js';
import { preserveSecrets } from './secrets.js';
import { overlaySecrets, readSecrets, secretValues, withoutSecrets, writeSecrets, type SecretVault } from './configVault.js';

/** Read, lock or write failure (HTTP 500). Belongs in shared/errors.ts's table; kept local until it is added there. */
export const CONFIG_IO_FAILED = ErrorCode.CONFIG_IO_FAILED;

/** config.json holds a password hash: owner read/write only. The directory is owner-only too. */
const CONFIG_FILE_MODE = 0o600;
const CONFIG_DIR_MODE = 0o700;

/** A change here means the TCP listener must be rebound (TUICommander calls this server_settings_changed). */
const SERVER_SETTING_PATHS = [
  'services.server.enabled',
  'services.server.port',
  'services.server.ipv6_enabled',
  'services.auth.username',
  'services.auth.password_hash',
  'services.auth.lan_auth_bypass',
  'services.auth.auth_rate_limit_max',
  'services.auth.auth_rate_limit_window_secs',
  'services.tls', // a new certificate or mode needs a new listener as well
] as const;
/** A change here must fire notifications/tools/list_changed. */
const TOOL_PATHS = ['disabled_native_tools', 'collapse_tools', 'ai_terminal_mcp_enabled'] as const;

export interface ConfigStoreOptions {
  /** Path of config.json. Its directory is created (0700) on the first save, never on load. */
  path: string;
}

export interface ConfigChanges {
  /** Listener settings changed: rebind the TCP listener. */
  serverSettings: boolean;
  /** Native tool surface changed: emit tools/list_changed. */
  tools: boolean;
  /** Dotted paths of every changed leaf, relative to this store's previous view. */
  paths: readonly string[];
}

export interface ConfigUpdateResult {
  config: ConfigSnapshot;
  changed: ConfigChanges;
}

export interface ConfigChangeEvent extends ConfigUpdateResult {
  previous: ConfigSnapshot;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function serialize(config: AppConfig): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

function ioError(action: string, path: string, err: unknown): SupervisorError {
  if (err instanceof SupervisorError) return err;
  const cause = err as NodeJS.ErrnoException;
  return new SupervisorError(CONFIG_IO_FAILED, `Could not ${action} ${path}: ${cause.message ?? String(err)}`, {
    path,
    ...(cause.code === undefined ? {} : { errno: cause.code }),
  });
}

function describeChanges(previous: ConfigSnapshot, next: ConfigSnapshot): ConfigChanges {
  const paths = changedPaths(previous, next);
  const touches = (watched: readonly string[]) => paths.some((p) => watched.some((w) => pathTouches(p, w)));
  return { serverSettings: touches(SERVER_SETTING_PATHS), tools: touches(TOOL_PATHS), paths };
}

/**
 * A save that turns TLS on or names new files is refused (nothing written) unless the certificate
 * and key load: otherwise the listener would go down at the rebind and only /health would say why.
 */
function assertTlsFilesUsable(next: AppConfig, configDir: string): void {
  try {
    loadTlsCredentials(next.services.tls, configDir);
  } catch (err) {
    if (!(err instanceof SupervisorError) || err.code !== ErrorCode.TLS_CREDENTIALS_INVALID) throw err;
    throw invalidConfig(`/services/tls/${(err.data as TlsCredentialsErrorData).field}`, err.message);
  }
}

/** Touches services.tls: the save is then checked strictly instead of falling back to off. */
function touchesTls(delta: JsonObject): boolean {
  const services = delta['services'];
  return isPlainObject(services) && services['tls'] !== undefined;
}

interface DiskState {
  /** Raw file text, or undefined when the file does not exist. */
  text: string | undefined;
  /** Parsed document ({} when the file does not exist). */
  doc: unknown;
}

export class ConfigStore implements Disposable {
  readonly path: string;
  private current: ConfigSnapshot | undefined;
  /** Where the session token, relay token and VAPID key live once attached; until then, the file. */
  private vault: SecretVault | null = null;
  private readonly listeners = new Set<(event: ConfigChangeEvent) => void>();

  constructor(options: ConfigStoreOptions) {
    this.path = resolve(options.path);
  }

  /**
   * Reads config.json. A missing file gives the defaults (nothing is created); bad JSON throws
   * CONFIG_CORRUPT and a schema violation CONFIG_INVALID; the file is never touched by a load.
   */
  async load(): Promise<ConfigSnapshot> {
    const disk = await this.readDisk();
    this.current = deepFreeze(normalizeConfig(disk.doc, { strictTls: false, source: this.path }));
    return this.current;
  }

  /**
   * Moves the vaulted secrets out of config.json: values still in the file (older versions wrote
   * them there) go to the vault and the file is rewritten without them; the in-memory view then
   * carries the vault's values. Every later save keeps them out of the file.
   */
  async attachVault(vault: SecretVault): Promise<void> {
    try {
      await mkdir(dirname(this.path), { recursive: true, mode: CONFIG_DIR_MODE });
      await withFileLock(this.path, async (lock) => {
        const disk = await this.readDisk();
        const inVault = await readSecrets(vault);
        const inFile = secretValues(disk.doc);
        if (inFile.size > 0) {
          const merged = new Map([...inVault, ...inFile]);
          const undo = await writeSecrets(vault, inVault, merged);
          try {
            const text = serialize(withoutSecrets(structuredClone(disk.doc)) as AppConfig);
            await atomicWriteFile(this.path, text, { mode: CONFIG_FILE_MODE, beforeRename: lock.assertHeld });
          } catch (err) {
            await undo();
            throw err;
          }
          for (const [k, v] of inFile) inVault.set(k, v);
        }
        const doc = structuredClone(disk.doc);
        overlaySecrets(doc, inVault);
        this.current = deepFreeze(normalizeConfig(doc, { strictTls: false, source: this.path }));
        this.vault = vault;
      });
    } catch (err) {
      throw ioError('move secrets out of', this.path, err);
    }
  }

  /** The last loaded or saved config (deep-frozen). Call load() first. */
  get(): ConfigSnapshot {
    if (this.current === undefined) throw new Error('ConfigStore.get() called before load()');
    return this.current;
  }

  /**
   * Saves a partial config: deep-merged onto the latest file contents (re-read under the locks, so
   * concurrent writers in other processes compose), validated strictly, then written atomically.
   * Refused input throws CONFIG_INVALID (`Invalid config: <field>: <reason>`) and writes nothing.
   */
  async update(partial: unknown): Promise<ConfigUpdateResult> {
    if (!isPlainObject(partial)) throw invalidConfig('', 'must be a JSON object');
    assertDepth(partial);
    const delta = structuredClone(partial);
    preserveSecrets(delta);
    let event: ConfigChangeEvent | undefined;
    try {
      // The lock lives next to the file, so the directory must exist before locking.
      await mkdir(dirname(this.path), { recursive: true, mode: CONFIG_DIR_MODE });
      event = await withFileLock(this.path, (lock) => this.commit(delta, lock.assertHeld));
    } catch (err) {
      throw ioError('save', this.path, err);
    }
    if (event.changed.paths.length > 0) this.emit(event);
    return { config: event.config, changed: event.changed };
  }

  /** Called after every save that changed something (including changes another process made earlier). */
  onChange(listener: (event: ConfigChangeEvent) => void): Disposable {
    this.listeners.add(listener);
    return toDisposable(() => this.listeners.delete(listener));
  }

  dispose(): void {
    this.listeners.clear();
  }

  /** Runs under both locks: read latest, merge, validate, write, then swap the in-memory view. */
  private async commit(delta: JsonObject, assertHeld: () => void): Promise<ConfigChangeEvent> {
    const disk = await this.readDisk();
    assertKnownFields(delta, disk.doc);
    // A first save starts from the defaults so the new file lists keys in schema order.
    const base = disk.text === undefined ? defaultConfig() : disk.doc;
    // Read under the lock: another process may have rotated a secret since this one last looked.
    const vaultBefore = this.vault ? await readSecrets(this.vault) : new Map<string, string>();
    overlaySecrets(base, vaultBefore);
    const next = normalizeConfig(deepMerge(base, delta), { strictTls: touchesTls(delta) });
    if (touchesTls(delta)) assertTlsFilesUsable(next, dirname(this.path));
    // Vault first, file second, one logical commit: a failed file write puts every secret back.
    const undo = this.vault ? await writeSecrets(this.vault, vaultBefore, secretValues(next)) : null;
    const text = serialize(this.vault ? withoutSecrets(structuredClone(next)) : next);
    if (text !== disk.text) {
      try {
        await atomicWriteFile(this.path, text, { mode: CONFIG_FILE_MODE, beforeRename: assertHeld });
      } catch (err) {
        try {
          await undo?.();
        } catch (restoreErr) {
          throw new Error(`${(err as Error).message}; restoring the secrets it had already stored failed too: ${(restoreErr as Error).message}`);
        }
        throw err;
      }
    }
    const previous = this.current ?? this.previousFromDisk(disk.doc);
    const config = deepFreeze(next) as ConfigSnapshot;
    this.current = config;
    return { config, previous, changed: describeChanges(previous, config) };
  }

  private previousFromDisk(doc: unknown): ConfigSnapshot {
    try {
      return normalizeConfig(doc, { strictTls: false });
    } catch {
      // The old file was invalid (this save repaired it): there is no meaningful old view, use defaults.
      return defaultConfig();
    }
  }

  private async readDisk(): Promise<DiskState> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { text: undefined, doc: {} };
      throw ioError('read', this.path, err);
    }
    try {
      return { text, doc: JSON.parse(text.replace(/^\uFEFF/, '')) as unknown };
    } catch (err) {
      throw new SupervisorError(
        ErrorCode.CONFIG_CORRUPT,
        `Config file ${this.path} is not valid JSON (${(err as Error).message}); it was left untouched: fix or remove it`,
        { path: this.path, reason: (err as Error).message },
      );
    }
  }

  private emit(event: ConfigChangeEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        // One failing listener must not stop the others or fail a save that is already on disk.
        process.emitWarning(`config change listener failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }
}
