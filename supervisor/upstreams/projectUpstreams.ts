/**
 * The per-project upstream allowlist: which upstream servers an MCP session working in a
 * repository (its initialize `roots[0]`) may list and call.
 *
 * Where it comes from, first match wins:
 *  1. `mcp_upstreams` of the repository's entry in `<configDir>/repo-settings.json` (a map keyed by
 *     repository path, as the desktop app keeps it; POST /config/project-mcp-upstreams writes it);
 *  2. `mcp_upstreams` of `<repo>/.tuic.json` (checked in with the project);
 *  3. otherwise every upstream. `null` in either file also means every upstream.
 *
 * repo-settings.json is read at start and rewritten only through `set` (under the cross-process
 * lock, atomically, every other field of every entry kept). A corrupt file is logged and treated
 * as empty; `set` then refuses to overwrite it. `.tuic.json` is read once per repository and again
 * after a `set` for it.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { toDisposable, type Disposable } from '../../shared/disposable.js';
import { atomicWriteFile } from '../config/atomicWrite.js';
import { withFileLock } from '../config/fileLock.js';
import { isPlainObject, type JsonObject } from '../config/merge.js';

export const REPO_SETTINGS_FILE = 'repo-settings.json';
export const REPO_LOCAL_FILE = '.tuic.json';
const FIELD = 'mcp_upstreams';
const FILE_MODE = 0o600;
/** Repositories whose answer is cached (sessions name them; the bound only guards against invented paths). */
const EFFECTIVE_KEPT = 1024;

/** The upstream names a project may use; null = every upstream. */
export type Allowlist = ReadonlySet<string> | null;

export interface ProjectUpstreamsLog {
  warn(obj: object, msg: string): void;
}

export interface ProjectUpstreamsOptions {
  configDir: string;
  log: ProjectUpstreamsLog;
}

/** What the MCP layer reads. */
export interface ProjectAllowlists {
  allowlistFor(repoPath: string | null): Allowlist;
  /** Some project's allowlist changed. */
  onChanged(listener: () => void): Disposable;
}

export class RepoSettingsCorruptError extends Error {}

/** A repository path as a map key: absolute, no trailing separator. */
export function repoKey(repoPath: string): string {
  return resolve(repoPath);
}

/** `mcp_upstreams` of one settings object: a set, null (every upstream) or undefined (not set here). */
function allowlistField(entry: unknown): Allowlist | undefined {
  if (!isPlainObject(entry) || !(FIELD in entry)) return undefined;
  const value = entry[FIELD];
  if (value === null) return null;
  if (Array.isArray(value)) return new Set(value.filter((name): name is string => typeof name === 'string'));
  return undefined;
}

export class ProjectUpstreams implements ProjectAllowlists {
  private readonly path: string;
  private settings: JsonObject = {};
  private readonly local = new Map<string, Allowlist | undefined>();
  /** The answer per repository: every tools/list and tools/call of a session asks. */
  private readonly effective = new Map<string, Allowlist>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly opts: ProjectUpstreamsOptions) {
    this.path = join(opts.configDir, REPO_SETTINGS_FILE);
  }

  /** Reads repo-settings.json; a missing file is an empty map. */
  async load(): Promise<void> {
    const parsed = await this.readSettings();
    this.effective.clear();
    if (parsed.ok) this.settings = parsed.settings;
    else {
      this.opts.log.warn(
        { file: this.path, problem: parsed.problem },
        'repo-settings.json is unreadable: no project restricts its upstreams until it is fixed',
      );
    }
  }

  allowlistFor(repoPath: string | null): Allowlist {
    if (repoPath === null || repoPath === '') return null;
    const cached = this.effective.get(repoPath);
    if (cached !== undefined) return cached;
    const key = repoKey(repoPath);
    const fromSettings = allowlistField(this.entryFor(this.settings, key));
    const found = fromSettings !== undefined ? fromSettings : (this.localAllowlist(key) ?? null);
    // Keyed by the path as sessions give it.
    if (this.effective.size >= EFFECTIVE_KEPT) this.effective.clear();
    this.effective.set(repoPath, found);
    return found;
  }

  /** Sets (names) or clears (null = every upstream) the project's allowlist in repo-settings.json. */
  async set(repoPath: string, names: readonly string[] | null): Promise<void> {
    const key = repoKey(repoPath);
    await mkdir(this.opts.configDir, { recursive: true, mode: 0o700 });
    this.settings = await withFileLock(this.path, async (lock) => {
      // The latest file, not our copy: another process may have saved other settings meanwhile.
      const latest = await this.readSettings();
      if (!latest.ok) throw new RepoSettingsCorruptError(`${this.path} is not valid settings (${latest.problem}); fix or remove it first`);
      const settings = latest.settings;
      const existingKey = this.keyOf(settings, key) ?? key;
      const entry = isPlainObject(settings[existingKey]) ? (settings[existingKey] as JsonObject) : { path: key };
      settings[existingKey] = { ...entry, [FIELD]: names === null ? null : [...new Set(names)] };
      await atomicWriteFile(this.path, `${JSON.stringify(settings, null, 2)}\n`, { mode: FILE_MODE, beforeRename: lock.assertHeld });
      return settings;
    });
    this.local.delete(key);
    this.effective.clear();
    for (const listener of [...this.listeners]) listener();
  }

  onChanged(listener: () => void): Disposable {
    this.listeners.add(listener);
    return toDisposable(() => this.listeners.delete(listener));
  }

  /** The entry for `key`: keyed by its path, or (hand-written files) an entry whose `path` names it. */
  private entryFor(settings: JsonObject, key: string): unknown {
    const found = this.keyOf(settings, key);
    return found === undefined ? undefined : settings[found];
  }

  private keyOf(settings: JsonObject, key: string): string | undefined {
    if (key in settings) return key;
    for (const [name, entry] of Object.entries(settings)) {
      const path = isPlainObject(entry) ? entry['path'] : undefined;
      if (repoKey(name) === key || (typeof path === 'string' && path !== '' && repoKey(path) === key)) return name;
    }
    return undefined;
  }

  private localAllowlist(key: string): Allowlist | undefined {
    if (this.local.has(key)) return this.local.get(key);
    let found: Allowlist | undefined;
    const file = join(key, REPO_LOCAL_FILE);
    try {
      found = allowlistField(JSON.parse(readFileSync(file, 'utf8')));
    } catch (err) {
      // Most repositories have none; a broken one is reported once and restricts nothing.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR') {
        this.opts.log.warn({ file, err: (err as Error).message }, `${REPO_LOCAL_FILE} is unreadable; its mcp_upstreams is ignored`);
      }
    }
    if (this.local.size >= EFFECTIVE_KEPT) this.local.clear();
    this.local.set(key, found);
    return found;
  }

  private async readSettings(): Promise<{ ok: true; settings: JsonObject } | { ok: false; problem: string }> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, settings: {} };
      return { ok: false, problem: (err as Error).message };
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!isPlainObject(parsed)) return { ok: false, problem: 'not a JSON object' };
      return { ok: true, settings: parsed };
    } catch (err) {
      return { ok: false, problem: (err as Error).message };
    }
  }
}
