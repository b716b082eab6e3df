/**
 * Which agent an MCP caller is, for its per-agent settings (agents.json): the agent detected in the
 * PTY it is bound to, else what its clientInfo.name says (`claude` or `tuic-bridge` → claude, and the
 * other agents by name); null when neither tells.
 */

/** clientInfo.name fragments, first match wins: the bridge speaks for Claude Code's own installs. */
const CLIENT_AGENTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/claude|tuic-bridge/i, 'claude'],
  [/codex/i, 'codex'],
  [/cursor/i, 'cursor'],
  [/gemini/i, 'gemini'],
  [/aider/i, 'aider'],
  // A word of its own: `amp` inside another name (`example`, `sampler`) is not Amp.
  [/\bamp(?:code)?\b/i, 'amp'],
  [/goose/i, 'goose'],
];

export function agentTypeOfClient(clientName: string | null): string | null {
  if (clientName === null) return null;
  for (const [pattern, agent] of CLIENT_AGENTS) if (pattern.test(clientName)) return agent;
  return null;
}

export function callerAgentType(boundAgentType: string | null | undefined, clientName: string | null): string | null {
  return boundAgentType ?? agentTypeOfClient(clientName);
}
