/**
 * The repositories tuicd knows: those registered in repositories.json (the client's file, saved
 * through PUT /config/repositories) plus those discovered from live sessions' working directories.
 * MCP instructions list them, `repo action=list` returns them, and they are the roots of the fs
 * traversal gate.
 */
import { basename, isAbsolute, resolve } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import type { EventBus } from '../events/eventBus.js';
import { DomainConfigFile, type JsonObject } from './domainConfigFile.js';
import { toplevelOf } from './gitRunner.js';

export const REPOSITORIES_FILE = 'repositories.json';

export interface KnownRepo {
  path: string;
  name: string;
  /** True when the user registered it; false when only a session's cwd revealed it. */
  registered: boolean;
}

/** repositories.json keeps repos as `{repos: {<path>: {...}}}` (TUICommander's shape) or `{repos: [<path>|{path}]}`. */
export function registeredPaths(file: JsonObject): string[] {
  const repos = file['repos'];
  const out: string[] = [];
  if (Array.isArray(repos)) {
    for (const r of repos) {
      if (typeof r === 'string') out.push(r);
      else if (typeof r === 'object' && r !== null && typeof (r as { path?: unknown }).path === 'string') out.push((r as { path: string }).path);
    }
  } else if (typeof repos === 'object' && repos !== null) out.push(...Object.keys(repos));
  return out;
}

function validateRepositories(value: JsonObject): void {
  const repos = value['repos'];
  if (repos !== undefined && (typeof repos !== 'object' || repos === null))
    throw new ApiError('invalid_input', "'repos' must be an object keyed by repository path, or an array of paths");
  for (const p of registeredPaths(value)) {
    if (!isAbsolute(p) || p.includes('\0') || p.split(/[\\/]/).includes('..'))
      throw new ApiError('invalid_input', `repository path must be absolute without '..': ${JSON.stringify(p).slice(0, 200)}`);
  }
}

export class RepoRegistry {
  readonly file: DomainConfigFile;
  private registered: string[] = [];
  /** cwd → top level (null: not in a repository); a cwd's repository does not move. */
  private readonly toplevels = new Map<string, string | null>();
  private discovered = new Set<string>();

  constructor(
    configDir: string,
    private readonly bus: EventBus,
    private readonly sessionCwds: () => string[],
  ) {
    this.file = new DomainConfigFile(configDir, REPOSITORIES_FILE, validateRepositories);
  }

  /** Reads the file; an unreadable one registers nothing (the error is the caller's to log). */
  async load(): Promise<void> {
    this.registered = registeredPaths(await this.file.read()).map((p) => resolve(p));
  }

  async save(value: unknown): Promise<void> {
    await this.file.write(value);
    await this.load();
    this.bus.publish('repositories-changed');
  }

  /** Resolves the repositories of live sessions' cwds (git runs once per new cwd). */
  async discover(): Promise<void> {
    const found = new Set<string>();
    for (const cwd of new Set(this.sessionCwds())) {
      let top = this.toplevels.get(cwd);
      if (top === undefined) {
        top = await toplevelOf(cwd);
        if (this.toplevels.size > 1000) this.toplevels.clear();
        this.toplevels.set(cwd, top);
      }
      if (top) found.add(top);
    }
    this.discovered = found;
  }

  /** What is known now, without running git (instructions render synchronously). */
  list(): KnownRepo[] {
    const seen = new Set<string>();
    const out: KnownRepo[] = [];
    for (const path of this.registered) {
      if (seen.has(path)) continue;
      seen.add(path);
      out.push({ path, name: basename(path), registered: true });
    }
    for (const path of this.discovered) {
      if (seen.has(path)) continue;
      seen.add(path);
      out.push({ path, name: basename(path), registered: false });
    }
    return out;
  }

  /** Registered and discovered roots: what the fs traversal gate lets absolute paths into. */
  roots(): string[] {
    return this.list().map((r) => r.path);
  }
}
