/**
 * Linked worktrees: one shared core behind HTTP /worktrees and the MCP `repo` tool. Worktrees live
 * beside their repository in `<repo>__wt/<branch>`; the workspace id is that directory's name.
 * Removal never loses work silently: a dirty checkout is refused without force, and a branch is
 * deleted only when one of the removal rules proves its commits are in the base branch (in_sync,
 * ancestry, patch_equivalence), else kept or force-deleted.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

import type { EventBus } from '../events/eventBus.js';
import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';
import { directoryNameFor, generateBranchName } from './branchNames.js';
import { currentBranch, porcelainStatus, worktreeList, type StatusEntry, type WorktreeEntry } from './gitQueries.js';
import { git, GitError, gitExitCode } from './gitRunner.js';

export type RemovalRule = 'in_sync' | 'ancestry' | 'patch_equivalence' | 'kept_branch' | 'force';
export type WarmStatus = 'pending' | 'done' | 'failed' | 'skipped';

export interface WarmState {
  status: WarmStatus;
  warmed_directories: number;
  error?: string;
}

/** The merged repo-settings entry (repo-defaults underneath) for a repository. */
export type RepoSettingsLookup = (repoPath: string) => Promise<{ setup_script?: string; warm_artifacts?: boolean }>;

export interface WorktreeDeps {
  bus: EventBus;
  settings: RepoSettingsLookup;
  /** Working directories of live sessions (a worktree with sessions in it says so in its lifecycle). */
  sessionCwds: () => string[];
}

export interface CreateRequest {
  base_repo: string;
  branch_name?: string | undefined;
  base_ref?: string | undefined;
  creator_session?: string | undefined;
}

export interface ScriptResult {
  exit_code: number;
  stdout: string;
  stderr: string;
}

export interface CreatedWorktree {
  name: string;
  path: string;
  worktree_path: string;
  workspace_id: string;
  branch: string;
  base_repo: string;
  base_ref: string;
  instructions: { warm_artifacts: WarmState; setup_script: ScriptResult | null };
}

export interface RemoveOptions {
  deleteBranch: boolean;
  force: boolean;
  overrideLock?: boolean;
  expectedFingerprint?: string | undefined;
}

export interface RemoveResult {
  ok: true;
  removal_rule: RemovalRule;
  branch_delete_warning: string | null;
  branch: string | null;
  discarded_files: string[];
}

/** `sh -c` in a directory, output captured; no timeout. */
export function runScript(script: string, cwd: string): Promise<ScriptResult> {
  return new Promise((resolvePromise) => {
    execFile('sh', ['-c', script], { cwd, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string; signal?: string | null }) | null;
      const exit_code = !e ? 0 : e.signal ? -1 : typeof e.code === 'number' ? e.code : -1;
      resolvePromise({ exit_code, stdout, stderr });
    });
  });
}

function fingerprint(entries: readonly StatusEntry[]): string {
  return createHash('sha256')
    .update(
      entries
        .map((e) => `${e.code} ${e.path}`)
        .sort()
        .join('\n'),
    )
    .digest('hex')
    .slice(0, 16);
}

/** The main repository of any checkout: a linked worktree normalizes to the repository that owns it, whose top its worktrees sit beside. */
export async function mainRepoOf(path: string): Promise<string> {
  let common: string;
  try {
    common = (await git(path, ['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
  } catch (err) {
    throw new ApiError('invalid_input', `not a git repository: ${quoteClientInput(path)} (${(err as Error).message})`);
  }
  if (basename(common) !== '.git')
    throw new ApiError('invalid_input', `bare repositories have no main checkout to create worktrees beside: ${quoteClientInput(path)}`);
  return dirname(common);
}

export class WorktreeManager {
  private readonly warm = new Map<string, WarmState>();
  /** Worktree paths seen, so the fs gate can let clients into them (they sit beside, not inside, the repo). */
  private readonly knownPaths = new Set<string>();

  constructor(private readonly deps: WorktreeDeps) {}

  knownWorktreePaths(): string[] {
    return [...this.knownPaths];
  }

  /** The main repository of any checkout (a linked worktree normalizes to the repository that owns it). */
  mainRepoOf(path: string): Promise<string> {
    return mainRepoOf(path);
  }

  baseDirOf(repo: string): string {
    return `${repo}__wt`;
  }

  async create(req: CreateRequest): Promise<CreatedWorktree> {
    const repo = await this.mainRepoOf(req.base_repo);
    const branch = req.branch_name ?? generateBranchName(await this.localBranches(repo));
    try {
      return await this.createIn(repo, branch, req);
    } catch (err) {
      this.deps.bus.publish('worktree-create-failed', { repo_path: repo, branch, reason: (err as Error).message });
      throw err;
    }
  }

  private async createIn(repo: string, branch: string, req: CreateRequest): Promise<CreatedWorktree> {
    if (branch.startsWith('-') || (await gitExitCode(repo, ['check-ref-format', '--branch', branch])) !== 0)
      throw new ApiError('invalid_input', `not a valid branch name: ${quoteClientInput(branch)}`);
    const baseRef = req.base_ref ?? 'HEAD';
    if (baseRef.startsWith('-') || (await gitExitCode(repo, ['rev-parse', '--verify', '-q', `${baseRef}^{commit}`])) !== 0)
      throw new ApiError('invalid_input', `base_ref does not name a commit: ${quoteClientInput(baseRef)}`);
    // Stale-worktree recovery: a checkout deleted by hand still holds its branch until pruned.
    await git(repo, ['worktree', 'prune']);
    const path = join(this.baseDirOf(repo), directoryNameFor(branch));
    if (existsSync(path)) throw new ApiError('conflict', `a worktree directory already exists: ${path}`);
    const branchExists = (await gitExitCode(repo, ['show-ref', '--verify', '-q', `refs/heads/${branch}`])) === 0;
    try {
      if (branchExists) await git(repo, ['worktree', 'add', '-q', path, branch]);
      else await git(repo, ['worktree', 'add', '-q', '-b', branch, path, baseRef]);
    } catch (err) {
      if (err instanceof GitError) throw new ApiError('conflict', err.message);
      throw err;
    }
    this.knownPaths.add(path);
    const settings = await this.deps.settings(repo);
    const setup = settings.setup_script ? await runScript(settings.setup_script, path) : null;
    const warm = this.startWarming(repo, path, settings.warm_artifacts !== false);
    const workspace_id = basename(path);
    const created: CreatedWorktree = {
      name: workspace_id,
      path,
      worktree_path: path,
      workspace_id,
      branch,
      base_repo: repo,
      base_ref: baseRef,
      instructions: { warm_artifacts: { ...warm }, setup_script: setup },
    };
    this.deps.bus.publish('worktree-created', {
      repo_path: repo,
      workspace_id,
      branch,
      worktree_path: path,
      kind: 'worktree',
      ...(req.creator_session ? { creator_session: req.creator_session } : {}),
    });
    return created;
  }

  /**
   * Git-ignored top-level directories of the repository (node_modules, build output) are copied into
   * the new checkout in the background, so its first build is warm; the status moves pending → done|failed.
   */
  private startWarming(repo: string, path: string, enabled: boolean): WarmState {
    const state: WarmState = { status: enabled ? 'pending' : 'skipped', warmed_directories: 0 };
    this.warm.set(path, state);
    if (!enabled) return state;
    void (async () => {
      try {
        const out = await git(repo, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']);
        const dirs = out.split('\0').filter((e) => e.endsWith('/') && !e.slice(0, -1).includes('/'));
        for (const d of dirs) {
          await cp(join(repo, d), join(path, d), { recursive: true, force: false, errorOnExist: false, verbatimSymlinks: true });
          state.warmed_directories++;
        }
        state.status = 'done';
      } catch (err) {
        state.status = 'failed';
        state.error = (err as Error).message;
      }
    })();
    return state;
  }

  warmState(path: string): WarmState {
    return this.warm.get(path) ?? { status: 'done', warmed_directories: 0 };
  }

  private async localBranches(repo: string): Promise<string[]> {
    return (await git(repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads'])).split('\n').filter(Boolean);
  }

  /** Linked worktrees of a repository (the main checkout excluded). */
  async linked(repoPath: string): Promise<WorktreeEntry[]> {
    const repo = await this.mainRepoOf(repoPath);
    const list = (await worktreeList(repo)).filter((w) => resolve(w.path) !== repo && !w.bare);
    for (const w of list) this.knownPaths.add(w.path);
    return list;
  }

  async list(repos: readonly string[]): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    for (const r of new Set(repos)) {
      let entries: WorktreeEntry[];
      try {
        entries = await this.linked(r);
      } catch {
        continue; // a registered path that is not (or no longer) a repository
      }
      const main = await this.mainRepoOf(r);
      for (const w of entries)
        out.push({
          workspace_id: basename(w.path),
          branch: w.branch,
          path: w.path,
          base_repo: main,
          kind: 'worktree',
          detached: w.detached,
          missing_checkout: w.prunable || !existsSync(w.path),
          warm_artifacts: this.warmState(w.path),
        });
    }
    return out;
  }

  async paths(repoPath: string): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const w of await this.linked(repoPath))
      out[basename(w.path)] = { branch: w.branch, path: w.path, kind: 'worktree', warm_artifacts: { status: this.warmState(w.path).status } };
    return out;
  }

  private async find(repoPath: string, workspaceId: string): Promise<{ repo: string; wt: WorktreeEntry }> {
    const repo = await this.mainRepoOf(repoPath);
    const wt = (await this.linked(repo)).find((w) => basename(w.path) === workspaceId || w.branch === workspaceId);
    if (!wt) throw new ApiError('not_found', `no worktree ${quoteClientInput(workspaceId)} in ${repo}`);
    return { repo, wt };
  }

  /** Where a branch's commits stand against the base (the main checkout's branch). */
  private async commitStatus(
    repo: string,
    branch: string,
  ): Promise<{ rule: 'in_sync' | 'ancestry' | 'patch_equivalence' | null; target: string; unmerged: number }> {
    const target = (await currentBranch(repo)) ?? 'HEAD';
    const [tip, targetTip] = await Promise.all([git(repo, ['rev-parse', `refs/heads/${branch}`]), git(repo, ['rev-parse', target])]);
    if (tip.trim() === targetTip.trim()) return { rule: 'in_sync', target, unmerged: 0 };
    if ((await gitExitCode(repo, ['merge-base', '--is-ancestor', `refs/heads/${branch}`, target])) === 0) return { rule: 'ancestry', target, unmerged: 0 };
    // `git cherry`: `-` lines are commits whose patch is already upstream (a squash or rebase merge).
    const cherry = (await git(repo, ['cherry', target, `refs/heads/${branch}`])).split('\n').filter(Boolean);
    const unmerged = cherry.filter((l) => l.startsWith('+')).length;
    return { rule: unmerged === 0 && cherry.length > 0 ? 'patch_equivalence' : null, target, unmerged };
  }

  async lifecycle(repoPath: string, workspaceId: string): Promise<Record<string, unknown>> {
    const { repo, wt } = await this.find(repoPath, workspaceId);
    const missing = !existsSync(wt.path);
    const live = this.deps.sessionCwds().filter((c) => c === wt.path || c.startsWith(wt.path + '/')).length;
    const warnings: string[] = [];
    if (live > 0) warnings.push(`${live} live session(s) run inside this worktree`);
    try {
      const entries = missing ? [] : await porcelainStatus(wt.path);
      const dirty = entries.filter((e) => !e.untracked).map((e) => e.path);
      const untracked = entries.filter((e) => e.untracked).map((e) => e.path);
      let commit_status: 'unmerged' | 'in_sync' | 'merged' | 'unknown' = 'unknown';
      if (wt.branch) {
        const cs = await this.commitStatus(repo, wt.branch);
        commit_status = cs.rule === 'in_sync' ? 'in_sync' : cs.rule ? 'merged' : 'unmerged';
      }
      const removal_safety = commit_status === 'unknown' ? 'unknown' : entries.length === 0 && commit_status !== 'unmerged' ? 'safe' : 'requires_force';
      return {
        dirty_files: dirty,
        untracked_files: untracked,
        missing_checkout: missing,
        dirty_fingerprint: fingerprint(entries),
        submodule_unpushed_commits: [],
        commit_status,
        removal_safety,
        live_sessions: live,
        warnings,
      };
    } catch (err) {
      // Unknown fails closed: nothing here may call a checkout safe that it could not inspect.
      return {
        dirty_files: null,
        untracked_files: [],
        missing_checkout: missing,
        submodule_unpushed_commits: [],
        commit_status: 'unknown',
        removal_safety: 'unknown',
        error: (err as Error).message,
        live_sessions: live,
        warnings,
      };
    }
  }

  async remove(repoPath: string, workspaceId: string, opts: RemoveOptions): Promise<RemoveResult> {
    const { repo, wt } = await this.find(repoPath, workspaceId);
    const present = existsSync(wt.path);
    const entries = present ? await porcelainStatus(wt.path) : [];
    if (opts.expectedFingerprint !== undefined && fingerprint(entries) !== opts.expectedFingerprint) {
      throw new ApiError('conflict', 'the worktree changed since its lifecycle was read (dirty fingerprint differs); read it again');
    }
    if (entries.length > 0 && !opts.force) {
      const shown = entries
        .slice(0, 10)
        .map((e) => e.path)
        .join(', ');
      throw new ApiError('conflict', `worktree has uncommitted work (${entries.length} file(s): ${shown}); pass force=true to discard it`);
    }
    const status = wt.branch ? await this.commitStatus(repo, wt.branch) : null;
    const args = ['worktree', 'remove'];
    if (opts.force || opts.overrideLock) args.push('--force');
    if (opts.overrideLock) args.push('--force'); // twice: also removes a locked worktree
    if (present) await git(repo, [...args, wt.path]);
    else await git(repo, ['worktree', 'prune']);
    this.knownPaths.delete(wt.path);
    this.warm.delete(wt.path);

    let rule: RemovalRule = opts.force && entries.length > 0 ? 'force' : 'kept_branch';
    let warning: string | null = null;
    if (wt.branch && status && opts.deleteBranch) {
      if (status.rule) {
        await git(repo, ['branch', '-D', '--', wt.branch]);
        if (rule !== 'force') rule = status.rule;
      } else if (opts.force) {
        await git(repo, ['branch', '-D', '--', wt.branch]);
        rule = 'force';
        warning = `branch '${wt.branch}' was deleted with ${status.unmerged} commit(s) not in '${status.target}' (force)`;
      } else {
        rule = 'kept_branch';
        warning = `worktree removed, but branch '${wt.branch}' was kept: ${status.unmerged} commit(s) are not in '${status.target}'`;
      }
    }
    this.deps.bus.publish('worktree-removed', { repo_path: repo, workspace_id: basename(wt.path), branch: wt.branch });
    return { ok: true, removal_rule: rule, branch_delete_warning: warning, branch: wt.branch, discarded_files: opts.force ? entries.map((e) => e.path) : [] };
  }

  /** archive = remove the checkout, keep the branch; delete = remove both (unmerged asks first unless forced). */
  async finalize(
    repoPath: string,
    workspaceId: string,
    action: 'archive' | 'delete',
    force: boolean,
    expectedFingerprint?: string,
  ): Promise<Record<string, unknown>> {
    if (action === 'delete' && !force) {
      const life = await this.lifecycle(repoPath, workspaceId);
      if (life['commit_status'] === 'unmerged' || life['removal_safety'] !== 'safe')
        return { action: 'needs_confirmation', merged: life['commit_status'] === 'merged' || life['commit_status'] === 'in_sync', lifecycle: life };
    }
    const result = await this.remove(repoPath, workspaceId, { deleteBranch: action === 'delete', force, expectedFingerprint });
    return { action, ...result };
  }
}
