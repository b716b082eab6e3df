/**
 * Per-agent overrides from `<config dir>/agents.json`, as TUICommander keeps them: `{"agents": {"<type>":
 * {"intent_tab_title"?, "suggest_followups"?, "progress_tracking"?, "run_configs"?}}}`, each flag
 * null or absent to inherit the global setting. Effective = global AND (per agent ?? true).
 * `run_configs` are named launch recipes, `[{"name", "command", "args"?}]`: `agent action=spawn
 * agent_type=<name>` finds them before binary names, and their argv is authoritative. The file is
 * read again when it changes (one stat per lookup; lookups come with parsed markers, not per byte).
 */
import { readFileSync, statSync } from 'node:fs';

import type { Logger } from '../log.js';

export const AGENTS_FILE = 'agents.json';

export interface RunConfig {
  name: string;
  /** A binary name (looked up on PATH) or an absolute path. */
  command: string;
  /** Authoritative argv: `{prompt}` is replaced, else the prompt is appended last. */
  args: string[];
}

export interface AgentOverrides {
  intent_tab_title?: boolean | null;
  suggest_followups?: boolean | null;
  progress_tracking?: boolean | null;
  run_configs?: RunConfig[];
}

const FLAGS = ['intent_tab_title', 'suggest_followups', 'progress_tracking'] as const;

export class AgentSettings {
  private cached: { mtimeMs: number; size: number; agents: Record<string, AgentOverrides> } | null = null;

  constructor(
    private readonly path: string,
    private readonly log: Logger,
  ) {}

  /** The overrides for one agent type; empty when the file or the entry is missing or malformed. */
  forAgent(type: string | null): AgentOverrides {
    if (type === null) return {};
    return this.load()[type] ?? {};
  }

  /** The run config called `name` (case-insensitive), with the agent type it is listed under. */
  runConfig(name: string): { agentType: string; config: RunConfig } | null {
    const wanted = name.trim().toLowerCase();
    for (const [agentType, o] of Object.entries(this.load())) {
      const config = o.run_configs?.find((c) => c.name.toLowerCase() === wanted);
      if (config) return { agentType, config };
    }
    return null;
  }

  private load(): Record<string, AgentOverrides> {
    let st;
    try {
      st = statSync(this.path);
    } catch {
      this.cached = null;
      return {};
    }
    if (this.cached && this.cached.mtimeMs === st.mtimeMs && this.cached.size === st.size) return this.cached.agents;
    let agents: Record<string, AgentOverrides> = {};
    try {
      agents = parseAgents(JSON.parse(readFileSync(this.path, 'utf8')));
    } catch (err) {
      this.log.warn({ path: this.path, err: (err as Error).message }, 'agents.json is not valid JSON; per-agent settings ignored until it is fixed');
    }
    this.cached = { mtimeMs: st.mtimeMs, size: st.size, agents };
    return agents;
  }
}

/** Keeps only boolean or null flags of object entries: a wrong type is ignored, never fatal. */
function parseAgents(doc: unknown): Record<string, AgentOverrides> {
  const out: Record<string, AgentOverrides> = {};
  const agents = (doc as { agents?: unknown } | null)?.agents;
  if (typeof agents !== 'object' || agents === null) return out;
  for (const [type, entry] of Object.entries(agents as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const o: AgentOverrides = {};
    for (const flag of FLAGS) {
      const v = (entry as Record<string, unknown>)[flag];
      if (typeof v === 'boolean' || v === null) o[flag] = v;
    }
    const runConfigs = parseRunConfigs((entry as Record<string, unknown>)['run_configs']);
    if (runConfigs.length > 0) o.run_configs = runConfigs;
    out[type.toLowerCase()] = o;
  }
  return out;
}

/** Entries with a non-empty name and command and string args; others are ignored. */
function parseRunConfigs(list: unknown): RunConfig[] {
  if (!Array.isArray(list)) return [];
  const out: RunConfig[] = [];
  for (const item of list) {
    const { name, command, args } = (item ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || !name.trim() || typeof command !== 'string' || !command.trim()) continue;
    if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) continue;
    out.push({ name: name.trim(), command, args: (args as string[] | undefined) ?? [] });
  }
  return out;
}

/** Global setting AND the agent's override (absent or null inherits). */
export function effective(global: boolean, override: boolean | null | undefined): boolean {
  return global && (override ?? true);
}
