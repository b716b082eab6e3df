/**
 * One file-system watcher per known repository (not per session): `repo-changed` on /events when its
 * HEAD, index or refs (kind git-state) or its working tree (kind working-tree) change, and
 * `head-changed` when the checked-out branch moves. Bursts (a checkout touches thousands of files)
 * collapse into one event per kind per debounce window.
 */
import { watch, type FSWatcher } from 'node:fs';

import type { EventBus } from '../events/eventBus.js';
import type { Logger } from '../log.js';
import { currentBranch } from './gitQueries.js';
import { git } from './gitRunner.js';

export const WATCH_DEBOUNCE_MS = 300;

type Kind = 'git-state' | 'working-tree';

/** Files in the git dir whose change means the repository's state changed; the rest (objects, logs) is noise. */
function isStateFile(name: string): boolean {
  return name === 'HEAD' || name === 'index' || name === 'MERGE_HEAD' || name === 'packed-refs' || name.startsWith('refs');
}

class WatchedRepo {
  private readonly watchers: FSWatcher[] = [];
  private readonly timers = new Map<Kind, NodeJS.Timeout>();
  private branch: string | null = null;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const gitDir = (await git(this.path, ['rev-parse', '--absolute-git-dir'])).trim();
    this.branch = await currentBranch(this.path);
    if (this.closed) return;
    this.add(gitDir, false, (name) => isStateFile(name) && this.fire('git-state'));
    this.add(`${gitDir}/refs/heads`, true, () => this.fire('git-state'));
    this.add(this.path, true, (name) => {
      if (name === '.git' || name.startsWith('.git/')) return;
      this.fire('working-tree');
    });
  }

  private add(dir: string, recursive: boolean, onChange: (name: string) => void): void {
    try {
      const w = watch(dir, { recursive, persistent: false }, (_event, name) => onChange(typeof name === 'string' ? name : ''));
      w.on('error', (err) => this.log.warn({ err, repo: this.path }, 'repository watcher failed'));
      this.watchers.push(w);
    } catch (err) {
      // No recursive watching on this platform/Node: the top level still reports.
      if (recursive) return this.add(dir, false, onChange);
      this.log.warn({ err, dir }, 'cannot watch repository directory');
    }
  }

  private fire(kind: Kind): void {
    if (this.closed || this.timers.has(kind)) return;
    this.timers.set(
      kind,
      setTimeout(() => {
        this.timers.delete(kind);
        if (this.closed) return;
        this.bus.publish('repo-changed', { repo_path: this.path, kind });
        if (kind === 'git-state') void this.checkHead();
      }, WATCH_DEBOUNCE_MS),
    );
  }

  private async checkHead(): Promise<void> {
    const branch = await currentBranch(this.path).catch(() => null);
    if (this.closed || branch === this.branch) return;
    this.branch = branch;
    this.bus.publish('head-changed', { repo_path: this.path, branch });
  }

  close(): void {
    this.closed = true;
    for (const w of this.watchers) w.close();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

export class RepoWatcher {
  private readonly repos = new Map<string, WatchedRepo>();

  constructor(
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {}

  /** Watches exactly these repositories: new ones start, gone ones stop. */
  sync(paths: readonly string[]): void {
    const wanted = new Set(paths);
    for (const [path, w] of this.repos) {
      if (!wanted.has(path)) {
        w.close();
        this.repos.delete(path);
      }
    }
    for (const path of wanted) {
      if (this.repos.has(path)) continue;
      const w = new WatchedRepo(path, this.bus, this.log);
      this.repos.set(path, w);
      w.start().catch((err: unknown) => {
        this.log.warn({ err, repo: path }, 'not watching repository (not a git work tree?)');
        w.close();
      });
    }
  }

  get size(): number {
    return this.repos.size;
  }

  dispose(): void {
    for (const w of this.repos.values()) w.close();
    this.repos.clear();
  }
}
