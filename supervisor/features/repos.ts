/**
 * Repositories and files: the registry (repositories.json plus those discovered from live session
 * cwds), their watchers, worktrees, gh, per-repository settings and defaults, the worker pool that
 * keeps search and big diffs off this loop, the repo, worktree, GitHub and fs routes and the `repo`
 * tool. Discovery follows sessions coming and going.
 */
import type { Paths } from '../../shared/paths.js';
import type { EventBus } from '../events/eventBus.js';
import { RootGate } from '../fs/rootGate.js';
import type { Logger } from '../log.js';
import type { McpChannels } from '../mcp/channels.js';
import { createRepoTool } from '../mcp/tools/repo.js';
import { WorkPool } from '../pool/workPool.js';
import type { ProgressJournal } from '../progress/progressJournal.js';
import { DomainConfigFile } from '../repos/domainConfigFile.js';
import { GhCli } from '../repos/ghCli.js';
import { RepoRegistry } from '../repos/repoRegistry.js';
import { RepoWatcher } from '../repos/repoWatcher.js';
import { WorktreeManager } from '../repos/worktrees.js';
import { fsRoutes } from '../routes/fs.js';
import { githubRoutes } from '../routes/github.js';
import { repoRoutes } from '../routes/repo.js';
import { repoConfigRoutes } from '../routes/repoConfig.js';
import { repoHistoryRoutes } from '../routes/repoHistory.js';
import { repoOrphanRoutes } from '../routes/repoOrphans.js';
import { worktreeRoutes } from '../routes/worktrees.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { ProjectUpstreams } from '../upstreams/projectUpstreams.js';
import { REPO_SETTINGS_FILE, repoKey } from '../upstreams/projectUpstreams.js';
import type { Feature } from './feature.js';

const REPO_DEFAULTS_FILE = 'repo-defaults.json';

export interface ReposDeps {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  bus: EventBus;
  log: Logger;
  sessions: SessionService;
  /** The repo tool reads a repository's progress entries. */
  progressJournal: ProgressJournal;
  /** A saved repo-settings.json changes project allowlists: they are read again. */
  projects: ProjectUpstreams;
  /** The repository a protocol session declared, and whether its client is Claude Code (repo tool). */
  channels: McpChannels;
}

export interface ReposFeature extends Feature {
  readonly repos: RepoRegistry;
  /** The work pool, for other features' CPU-heavy file work (ai_terminal search). */
  readonly pool: WorkPool;
}

export function reposFeature(deps: ReposDeps): ReposFeature {
  const { paths, bus, log, sessions, channels } = deps;
  const liveCwds = () =>
    sessions
      .list()
      .filter((r) => r.exit === null)
      .map((r) => r.cwd);
  const pool = new WorkPool();
  const repos = new RepoRegistry(paths.configDir, bus, liveCwds);
  const repoSettings = new DomainConfigFile(paths.configDir, REPO_SETTINGS_FILE);
  const repoDefaults = new DomainConfigFile(paths.configDir, REPO_DEFAULTS_FILE);
  const gh = new GhCli(deps.env);
  const repoWatcher = new RepoWatcher(bus, log);
  const worktrees = new WorktreeManager({
    bus,
    sessionCwds: liveCwds,
    // repo-defaults.json underneath, the repository's own repo-settings.json entry on top.
    settings: async (repo) => {
      const [defaults, settings] = await Promise.all([repoDefaults.read().catch(() => ({})), repoSettings.read().catch(() => ({}))]);
      const entry = (settings as Record<string, unknown>)[repoKey(repo)];
      const merged = { ...defaults, ...(typeof entry === 'object' && entry !== null ? entry : {}) } as Record<string, unknown>;
      return {
        ...(typeof merged['setup_script'] === 'string' && merged['setup_script'] !== '' ? { setup_script: merged['setup_script'] } : {}),
        ...(typeof merged['warm_artifacts'] === 'boolean' ? { warm_artifacts: merged['warm_artifacts'] } : {}),
      };
    },
  });
  // The one gate every path a request names passes: registered and discovered repositories, their
  // known worktrees, and live sessions' working directories.
  const gate = new RootGate(() => [...repos.roots(), ...worktrees.knownWorktreePaths(), ...liveCwds()]);
  const subscriptions: Array<{ dispose(): void }> = [];
  return {
    name: 'repos',
    repos,
    pool,
    routes: [
      ...repoConfigRoutes({ registry: repos, gate, repoSettings, repoDefaults, onRepoSettingsSaved: () => deps.projects.load() }),
      ...repoRoutes(pool, gate),
      ...repoHistoryRoutes(gate),
      ...repoOrphanRoutes(gate),
      ...githubRoutes(gh, gate),
      ...worktreeRoutes(worktrees, () => repos.roots(), gate),
      ...fsRoutes(pool, gate),
    ],
    tools: [
      createRepoTool({
        repos,
        worktrees,
        gh,
        gate,
        sessions,
        progressJournal: deps.progressJournal,
        isClaudeCode: (id) => channels.isClaudeCode(id),
        sessionCwd: (sessionId) => sessions.resolve(sessionId)?.cwd,
        mcpRepoPath: (id) => channels.repoPath(id),
      }),
    ],
    // Reads repositories.json (an unreadable one registers nothing and says so) and keeps the
    // discovered repositories and their watchers in step with sessions coming and going.
    prepare: async () => {
      await repos
        .load()
        .catch((err: unknown) => log.error({ err, file: repos.file.path }, 'repositories.json unreadable: no repository registered until it is fixed'));
      let listedFor: string | null = null;
      const refresh = () => {
        void repos
          .discover()
          .then(async () => {
            const roots = repos.roots();
            repoWatcher.sync(roots);
            // Their worktrees become roots of the gate as soon as the repositories are known (asked
            // again only when the set of repositories changes, not on every session coming and going).
            const key = roots.join('\0');
            if (key === listedFor) return;
            listedFor = key;
            await worktrees.list(roots).catch(() => undefined);
          })
          .catch((err: unknown) => log.warn({ err }, 'repository discovery failed'));
      };
      subscriptions.push(bus.on('session-created', refresh), bus.on('session-closed', refresh), bus.on('repositories-changed', refresh));
      refresh();
    },
    dispose: async () => {
      for (const s of subscriptions) s.dispose();
      repoWatcher.dispose();
      await pool.destroy();
    },
  };
}
