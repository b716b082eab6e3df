/**
 * What agents/ needs from the MCP endpoint's protocol sessions, declared here and implemented on the
 * MCP side (mcp/channels.ts), so agents/ never imports mcp/. The composition root builds the MCP
 * channels first and hands them to both.
 */

/** The caller of an agent operation: its protocol session and the identity its initialize asserted. */
export interface AgentCaller {
  /** The protocol session (`Mcp-Session-Id`), when the caller presented or holds one. */
  readonly mcpSessionId: string | null;
  /** The identity its initialize asserted with x-tuic-session (the PTY's environment), when known. */
  readonly tuicSession: string | null;
}

/** Mail delivery's channel route: a push on a protocol session's GET /mcp stream. */
export interface MailChannel {
  /** Sends a JSON-RPC notification on every open GET stream of the protocol session; false when it has none. */
  push(mcpSessionId: string, message: object): boolean;
  /** A Claude Code client holding its GET stream: it takes `notifications/claude/channel`. */
  channelCapable(mcpSessionId: string): boolean;
}

/** What register asks about the protocol sessions an identity is routed to (its takeover guard). */
export interface ProtocolSessionFacts {
  /** Holds its GET stream, or made a request recently: an identity routed through it still has an owner. */
  isLive(mcpSessionId: string): boolean;
  /** The identity its initialize asserted with x-tuic-session, if any. */
  assertedIdentity(mcpSessionId: string): string | null;
}
