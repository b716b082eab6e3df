/** Every native tool, in tools/list order. Each tool module exports one factory; its deps are named in NativeToolDeps. */
import type { NativeTool } from './nativeTool.js';
import { createSessionTool } from './session.js';
import { createAgentTool } from './agent.js';
import type { AgentMessaging } from '../../agents/messaging.js';
import type { AgentSpawner } from '../../agents/agentSpawner.js';
import type { AgentBinaries } from '../../agents/agentBinaries.js';
import { createTaskTool } from './task.js';
import { createRepoTool } from './repo.js';
import type { RepoRegistry } from '../../repos/repoRegistry.js';
import type { WorktreeManager } from '../../repos/worktrees.js';
import type { GhCli } from '../../repos/ghCli.js';
import type { SessionService } from '../../sessions/sessionService.js';
import type { TaskRegistry } from '../../agents/tasks.js';
import { createProgressTool } from './progress.js';
import { createUiTool } from './ui.js';
import { createPluginDevGuideTool } from './pluginDevGuide.js';
import { createConfigTool } from './config.js';
import { createDebugTool } from './debug.js';
import type { EventBus } from '../../events/eventBus.js';
import type { ConfigStore } from '../../config/configStore.js';
import type { PromptLibrary } from '../../prompts/promptLibrary.js';
import type { ConfirmBroker } from '../confirmBroker.js';
import type { ProgressJournal } from '../../progress/progressJournal.js';
import type { WorkPool } from '../../pool/workPool.js';
import { createAiTerminalTools } from './aiTerminal.js';

/** What tool factories may use; each field is added by the tool that needs it. */
export interface NativeToolDeps {
  // DEPS: one line per dependency, added with the tool that needs it.
  sessions: SessionService;
  tasks: TaskRegistry;
  bus: EventBus;
  config: ConfigStore;
  /** config: the prompt library (prompt-library.json). */
  prompts: PromptLibrary;
  /** ui confirm: the pending-answer broker (routes/mcpConfirm.ts answers it). */
  confirmBroker: ConfirmBroker;
  progressJournal: ProgressJournal;
  /** A live PTY's cwd by session id (caller origin: toast origin_repo_path, progress project). */
  sessionCwd: (sessionId: string) => string | undefined;
  /** The repo an MCP session declared at initialize (roots), by Mcp-Session-Id; optional until recorded. */
  mcpRepoPath?: (mcpSessionId: string) => string | undefined;
  /** Where createLogger writes (debug action=logs). */
  logDir: string;
  /** agent: identities, the peer directory and mail (agents/messaging.ts), spawning, installed agents. */
  messaging: AgentMessaging;
  spawner: AgentSpawner;
  binaries: AgentBinaries;
  maxSessions: () => number;
  /** repo: known repositories, the worktree core, gh, and whether a protocol session's client is Claude Code. */
  repos: RepoRegistry;
  worktrees: WorktreeManager;
  gh: GhCli;
  isClaudeCode: (mcpSessionId: string) => boolean;
  /** ai_terminal: search_files and list_files walk files on the work pool. */
  pool: WorkPool;
}

export function createNativeTools(deps: NativeToolDeps): NativeTool[] {
  void deps;
  return [
    // TOOLS: one line per tool, in the order tools/list shows them: session, agent, task, repo, progress, ui, plugin_dev_guide, config, debug, ai_terminal_* (listed only with ai_terminal_mcp_enabled).
    createSessionTool(deps),
    createAgentTool(deps),
    createTaskTool(deps),
    createRepoTool(deps),
    createProgressTool(deps),
    createUiTool(deps),
    createPluginDevGuideTool(),
    createConfigTool(deps),
    createDebugTool(deps),
    ...createAiTerminalTools(deps),
  ];
}
