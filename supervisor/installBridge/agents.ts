/**
 * The agents install-bridge knows: where each keeps its MCP servers, under which key, in what shape,
 * and how to tell it is installed (its config file or directory exists, or its CLI is on PATH).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

import type { ConfigFormat } from './editor.js';

/** The key of the entry in every agent's config. */
export const ENTRY_KEY = 'tuicommander';

export interface AgentSpec {
  id: string;
  name: string;
  format: ConfigFormat;
  /** Candidate config files: the first that exists is edited, else the first is created. */
  files: string[];
  /** The mapping the entry goes into (one key at the top level, possibly with a dot in it: "amp.mcpServers"). */
  parent: string;
  entry(launcher: string): Record<string, unknown>;
  /** Directories whose existence means the agent is installed. */
  dirs: string[];
  /** CLI names whose presence on PATH means the agent is installed. */
  clis: string[];
  /** Only touched when its config file already exists (pi). */
  onlyIfFileExists?: boolean;
}

export interface AgentEnv {
  home: string;
  /** $XDG_CONFIG_HOME when absolute, else ~/.config: where Zed, opencode, goose, Amp and (on Linux) VS Code look. */
  xdgConfigHome: string;
  platform: NodeJS.Platform;
  path: string;
}

export function agentEnv(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): AgentEnv {
  const home = env['HOME'] || homedir();
  const xdg = env['XDG_CONFIG_HOME'];
  return { home, xdgConfigHome: xdg?.startsWith('/') ? xdg : join(home, '.config'), platform, path: env['PATH'] ?? '' };
}

/** Claude Code rejects a stdio entry with missing or null args/env in some versions: both always present. */
const stdioEntry = (launcher: string): Record<string, unknown> => ({ type: 'stdio', command: launcher, args: [], env: {} });

export function agentTable(e: AgentEnv): AgentSpec[] {
  const h = (...p: string[]): string => join(e.home, ...p);
  const x = (...p: string[]): string => join(e.xdgConfigHome, ...p);
  const vscodeUser = e.platform === 'darwin' ? h('Library', 'Application Support', 'Code', 'User') : x('Code', 'User');
  return [
    {
      id: 'claude',
      name: 'Claude Code',
      format: 'json',
      files: [h('.claude.json')],
      parent: 'mcpServers',
      entry: stdioEntry,
      dirs: [h('.claude')],
      clis: ['claude'],
    },
    {
      id: 'cursor',
      name: 'Cursor',
      format: 'json',
      files: [h('.cursor', 'mcp.json')],
      parent: 'mcpServers',
      entry: stdioEntry,
      dirs: [h('.cursor')],
      clis: ['cursor', 'cursor-agent'],
    },
    {
      id: 'windsurf',
      name: 'Windsurf',
      format: 'json',
      files: [h('.codeium', 'windsurf', 'mcp_config.json')],
      parent: 'mcpServers',
      entry: stdioEntry,
      dirs: [h('.codeium', 'windsurf')],
      clis: ['windsurf'],
    },
    {
      id: 'gemini',
      name: 'Gemini CLI',
      format: 'json',
      files: [h('.gemini', 'settings.json')],
      parent: 'mcpServers',
      entry: stdioEntry,
      dirs: [h('.gemini')],
      clis: ['gemini'],
    },
    {
      id: 'droid',
      name: 'Droid',
      format: 'json',
      files: [h('.factory', 'mcp.json')],
      parent: 'mcpServers',
      entry: stdioEntry,
      dirs: [h('.factory')],
      clis: ['droid'],
    },
    {
      id: 'pi',
      name: 'pi',
      format: 'json',
      files: [h('.pi', 'agent', 'mcp.json')],
      parent: 'mcpServers',
      entry: stdioEntry,
      dirs: [],
      clis: [],
      onlyIfFileExists: true,
    },
    {
      id: 'vscode',
      name: 'VS Code',
      format: 'json',
      files: [join(vscodeUser, 'mcp.json')],
      parent: 'servers',
      entry: stdioEntry,
      dirs: [vscodeUser],
      clis: ['code'],
    },
    {
      id: 'zed',
      name: 'Zed',
      format: 'json',
      files: [x('zed', 'settings.json')],
      parent: 'context_servers',
      entry: stdioEntry,
      dirs: [x('zed')],
      clis: ['zed', 'zeditor'],
    },
    // Amp's settings file is flat: "amp.mcpServers" is one literal key.
    {
      id: 'amp',
      name: 'Amp',
      format: 'json',
      files: [x('amp', 'settings.json')],
      parent: 'amp.mcpServers',
      entry: stdioEntry,
      dirs: [x('amp')],
      clis: ['amp'],
    },
    {
      id: 'opencode',
      name: 'opencode',
      format: 'json',
      files: [x('opencode', 'opencode.json'), x('opencode', 'opencode.jsonc')],
      parent: 'mcp',
      entry: (launcher) => ({ type: 'local', command: [launcher], enabled: true }),
      dirs: [x('opencode')],
      clis: ['opencode'],
    },
    {
      id: 'codex',
      name: 'Codex',
      format: 'toml',
      files: [h('.codex', 'config.toml')],
      parent: 'mcp_servers',
      // Codex hands its MCP children only the variables it is told to: without this the bridge never sees whose session it serves.
      entry: (launcher) => ({ command: launcher, env_vars: ['TUIC_SESSION'] }),
      dirs: [h('.codex')],
      clis: ['codex'],
    },
    {
      id: 'grok',
      name: 'Grok',
      format: 'toml',
      files: [h('.grok', 'config.toml')],
      parent: 'mcp_servers',
      entry: (launcher) => ({ command: launcher }),
      dirs: [h('.grok')],
      clis: ['grok'],
    },
    {
      id: 'goose',
      name: 'goose',
      format: 'yaml',
      files: [x('goose', 'config.yaml')],
      parent: 'extensions',
      // goose's stdio extension shape; env_keys name secrets goose looks up, not variables to pass (goose passes its own env on).
      entry: (launcher) => ({
        type: 'stdio',
        name: ENTRY_KEY,
        description: 'TUICommander: terminal sessions and agents (tuic-bridge)',
        cmd: launcher,
        args: [],
        envs: {},
        env_keys: [],
        timeout: 300,
        enabled: true,
      }),
      dirs: [x('goose')],
      clis: ['goose'],
    },
  ];
}

function exists(p: string, kind: 'file' | 'dir'): boolean {
  try {
    const st = statSync(p);
    return kind === 'file' ? st.isFile() : st.isDirectory();
  } catch {
    return false;
  }
}

export function onPath(name: string, path: string): boolean {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const full = join(dir, name);
    try {
      accessSync(full, constants.X_OK);
      if (statSync(full).isFile()) return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** The config file to edit: the first candidate that exists, else the first (to be created). */
export function configFile(agent: AgentSpec): { file: string; exists: boolean } {
  const found = agent.files.find((f) => exists(f, 'file'));
  return found !== undefined ? { file: found, exists: true } : { file: agent.files[0]!, exists: false };
}

export function isInstalled(agent: AgentSpec, e: AgentEnv): boolean {
  if (agent.files.some((f) => exists(f, 'file'))) return true;
  if (agent.onlyIfFileExists) return false;
  return agent.dirs.some((d) => exists(d, 'dir')) || agent.clis.some((c) => onPath(c, e.path));
}
