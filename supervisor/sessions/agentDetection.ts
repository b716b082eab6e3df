/**
 * Which AI agent runs in a session: the leader of the terminal's foreground process
 * group, classified by its name, else by a path component (Claude's native installs run a binary
 * named after its version, under `claude/versions/`). A shell in the foreground means no agent; an
 * unknown program falls back to the type the session was spawned as. Read from /proc on demand
 * (when output shows the foreground group changed, and when asked), never on a timer.
 */
import { readFileSync, readlinkSync } from 'node:fs';

import { foregroundOf } from './foreground.js';

export type AgentType = 'claude' | 'gemini' | 'opencode' | 'aider' | 'codex' | 'amp' | 'cursor' | 'goose' | 'grok' | 'droid' | 'pi';

const AGENT_BY_NAME: Readonly<Record<string, AgentType>> = {
  claude: 'claude',
  gemini: 'gemini',
  opencode: 'opencode',
  aider: 'aider',
  codex: 'codex',
  amp: 'amp',
  'cursor-agent': 'cursor',
  goose: 'goose',
  grok: 'grok',
  droid: 'droid',
  pi: 'pi',
};

/** The program names agents install (claude, cursor-agent…): what spawn and detect look up on PATH. */
export const AGENT_BINARIES: readonly string[] = Object.keys(AGENT_BY_NAME);

/** The program an agent type runs as. */
export function binaryOf(type: AgentType): string {
  return Object.keys(AGENT_BY_NAME).find((name) => AGENT_BY_NAME[name] === type)!;
}

const SHELL_NAMES = new Set(['zsh', 'bash', 'fish', 'sh', 'dash', 'ksh', 'csh', 'tcsh', 'nushell', 'nu', 'powershell', 'pwsh', 'cmd', 'ash', 'mksh']);

/** What a process is, for agent detection: an agent, a shell (no agent), or unknown. */
export type Classification = { kind: 'agent'; type: AgentType } | { kind: 'shell' } | { kind: 'unknown' };

/**
 * Classifies a program by its name (comm, or argv[0]'s basename) and the paths it runs from (its
 * executable and its first arguments: a Node agent is `node …/bin/codex`).
 */
export function classifyProgram(name: string, paths: readonly string[] = []): Classification {
  const lower = name.toLowerCase().replace(/^-/, ''); // a login shell's argv[0] is "-bash"
  const byName = AGENT_BY_NAME[lower];
  if (byName) return { kind: 'agent', type: byName };
  if (SHELL_NAMES.has(lower)) return { kind: 'shell' };
  for (const path of paths) {
    const parts = path.split('/').filter((p) => p !== '');
    // Claude's native installer: ~/.local/share/claude/versions/<version>
    const versions = parts.lastIndexOf('versions');
    if (versions > 0 && parts[versions - 1] === 'claude' && versions === parts.length - 2) return { kind: 'agent', type: 'claude' };
    const base = parts.at(-1)?.toLowerCase();
    if (base !== undefined && AGENT_BY_NAME[base]) return { kind: 'agent', type: AGENT_BY_NAME[base]! };
  }
  return { kind: 'unknown' };
}

/** The executable and the first two argv entries of `pid` (an interpreter's script is argv[1]). */
function pathsOf(pid: number): string[] {
  const paths: string[] = [];
  try {
    paths.push(readlinkSync(`/proc/${pid}/exe`));
  } catch {
    // Gone, or not ours to read.
  }
  try {
    paths.push(
      ...readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .slice(0, 2)
        .filter((a) => a.startsWith('/') || a.includes('/')),
    );
  } catch {
    // Gone.
  }
  return paths;
}

export interface AgentDetection {
  /** The agent type the session has now: detected, else the spawn-time type when the foreground is unknown. */
  agentType: AgentType | null;
  /** What was looked at, for `debug agent_detection`. */
  foreground: { pid: number; name: string; paths: string[]; classification: Classification['kind'] } | null;
  source: 'foreground' | 'spawn' | 'none';
}

export function detectAgent(sessionPid: number, spawnType: AgentType | null): AgentDetection {
  const fg = foregroundOf(sessionPid);
  if (fg === null) return { agentType: spawnType, foreground: null, source: spawnType === null ? 'none' : 'spawn' };
  // foregroundOf named it already (the leader's, else the shell's when the leader is unreadable).
  const name = fg.name;
  const paths = pathsOf(fg.pid);
  const c = classifyProgram(name, paths);
  const foreground = { pid: fg.pid, name, paths, classification: c.kind };
  if (c.kind === 'agent') return { agentType: c.type, foreground, source: 'foreground' };
  if (c.kind === 'shell') return { agentType: null, foreground, source: 'foreground' };
  return { agentType: spawnType, foreground, source: spawnType === null ? 'none' : 'spawn' };
}

/** Every agent type, in the order messages and schemas list them. */
export const AGENT_TYPE_NAMES: readonly AgentType[] = [...new Set(Object.values(AGENT_BY_NAME))];
const AGENT_TYPES: ReadonlySet<string> = new Set(AGENT_TYPE_NAMES);

/** `agent_type` values a spawn request may name: the types themselves (cursor, not cursor-agent). */
export function parseAgentType(value: unknown): AgentType | null {
  return typeof value === 'string' && AGENT_TYPES.has(value) ? (value as AgentType) : null;
}
