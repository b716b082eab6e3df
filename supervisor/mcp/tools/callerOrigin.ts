/**
 * Where a tool call came from, for events a client shows (toast, confirm, tab) and for the progress
 * journal's project. Only a caller bound to a PTY gets a session id: a guessed id would send a
 * client's click to somebody else's terminal.
 */
import type { CallerContext } from './nativeTool.js';

/** Lookups the origin needs; both answer undefined when they know nothing. */
export interface CallerOriginDeps {
  /** Working directory of a live PTY session, by session id. */
  sessionCwd: (sessionId: string) => string | undefined;
  /** The repo an MCP session declared (initialize roots), by Mcp-Session-Id; optional until the transport records it. */
  mcpRepoPath?: (mcpSessionId: string) => string | undefined;
}

export interface CallerOrigin {
  /** The caller's TUIC session, present only when it runs in one of our PTYs. */
  origin_session_id?: string;
  /** The bound PTY's cwd, else the MCP session's declared repo. */
  origin_repo_path?: string;
}

export function callerOrigin(caller: CallerContext, deps: CallerOriginDeps): CallerOrigin {
  const origin: CallerOrigin = {};
  if (caller.boundSessionId !== null) {
    origin.origin_session_id = caller.tuicSession ?? caller.boundSessionId;
    const cwd = deps.sessionCwd(caller.boundSessionId);
    if (cwd !== undefined) origin.origin_repo_path = cwd;
  }
  if (origin.origin_repo_path === undefined && caller.mcpSessionId !== null && deps.mcpRepoPath) {
    const repo = deps.mcpRepoPath(caller.mcpSessionId);
    if (repo !== undefined) origin.origin_repo_path = repo;
  }
  return origin;
}
