/**
 * The /mcp endpoint's protocol sessions and their GET streams, built before the MCP service and the
 * agents that both use them: the service serves them, agents push mail on them and ask who is still
 * there (the ports agents/ports.ts declares, implemented here).
 */
import type { MailChannel, ProtocolSessionFacts } from '../agents/ports.js';
import { McpStreams, type McpStreamOptions } from './mcpStreams.js';
import { McpSessionStore, type McpSessionStoreOptions } from './protocolSessions.js';

/** A protocol session that held its stream or made a request within this long still owns its identity (register's takeover guard). */
export const LIVE_OWNER_MS = 5 * 60_000;

export interface McpChannelsOptions {
  /** The store's cap (`services.server.max_mcp_sessions`), read on every insert. */
  maxSessions: () => number;
  sessionStore?: Omit<McpSessionStoreOptions, 'maxSessions'>;
  streams?: McpStreamOptions;
}

export class McpChannels implements MailChannel, ProtocolSessionFacts {
  readonly sessions: McpSessionStore;
  readonly streams: McpStreams;

  constructor(opts: McpChannelsOptions) {
    this.sessions = new McpSessionStore({ ...opts.sessionStore, maxSessions: opts.maxSessions });
    this.streams = new McpStreams(this.sessions, opts.streams);
  }

  push(mcpSessionId: string, message: object): boolean {
    return this.streams.push(mcpSessionId, message);
  }

  channelCapable(mcpSessionId: string): boolean {
    const meta = this.sessions.get(mcpSessionId);
    return meta?.is_claude_code === true && meta.has_sse_stream;
  }

  isLive(mcpSessionId: string): boolean {
    const meta = this.sessions.get(mcpSessionId);
    return meta !== undefined && (meta.has_sse_stream || this.sessions.now() - meta.last_activity_ms < LIVE_OWNER_MS);
  }

  assertedIdentity(mcpSessionId: string): string | null {
    return this.sessions.get(mcpSessionId)?.tuic_session ?? null;
  }

  /** The repository a protocol session declared at initialize (its roots), if any. */
  repoPath(mcpSessionId: string): string | undefined {
    return this.sessions.get(mcpSessionId)?.repo_path ?? undefined;
  }

  /** Whether a protocol session's client is Claude Code (known from initialize). */
  isClaudeCode(mcpSessionId: string): boolean {
    return this.sessions.get(mcpSessionId)?.is_claude_code ?? false;
  }
}
