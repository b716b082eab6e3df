/** What the bridge answers by itself: while tuicd is unreachable, and for a message it cannot forward. */

import { negotiateProtocolVersion, SERVER_NAME } from '../shared/mcpRevisions.js';
import { JsonRpcCode } from '../shared/jsonRpcCodes.js';

export const JsonRpcErrors = {
  PARSE_ERROR: JsonRpcCode.PARSE_ERROR,
  METHOD_NOT_FOUND: JsonRpcCode.METHOD_NOT_FOUND,
  /** The reference bridge's code for a request it could not carry to tuicd (-32000). */
  TRANSPORT_FAILED: JsonRpcCode.SERVER_ERROR,
} as const;

export type JsonRpcId = string | number | null;

export function errorLine(id: JsonRpcId, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

export function resultLine(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** initialize answered without tuicd: enough for the client to start; the real one is replayed on reconnect. */
export function offlineInitializeResult(requestedVersion: unknown, version: string): object {
  return {
    protocolVersion: negotiateProtocolVersion(requestedVersion),
    capabilities: { tools: { listChanged: true } },
    serverInfo: { name: SERVER_NAME, version },
  };
}

/**
 * A request tuicd cannot hear: no tools (so the client shows none rather than failing), a tool call
 * that says why, Method not found for the rest.
 */
export function offlineAnswer(id: JsonRpcId, method: string, why: string): string {
  if (method === 'tools/list') return resultLine(id, { tools: [] });
  if (method === 'tools/call') {
    return resultLine(id, {
      content: [{ type: 'text', text: `TUICommander MCP is unavailable. ${why} The bridge reconnects by itself when it comes back; try again then.` }],
      isError: true,
    });
  }
  if (method === 'ping') return resultLine(id, {});
  return errorLine(id, JsonRpcErrors.METHOD_NOT_FOUND, `Method not found: ${method} (TUICommander MCP is unavailable: ${why})`);
}
