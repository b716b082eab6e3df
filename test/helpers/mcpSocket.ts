/** A bare MCP client over tuicd's unix socket (POST /mcp, JSON answers): initialize, tools/list, tools/call. */
import assert from 'node:assert/strict';

import type { Tuicd } from './tuicdProcess.js';

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

export interface McpSocketClient {
  readonly sessionId: string;
  listTools(): Promise<Array<{ name: string; description: string; inputSchema: Record<string, unknown> }>>;
  /** A tools/call's text payload parsed, and whether it was a tool error. */
  callTool(name: string, args: object): Promise<{ isError: boolean; value: any }>;
}

let rpcId = 0;

export async function mcpSocketClient(t: Tuicd, opts: { tuicSession?: string; clientName?: string } = {}): Promise<McpSocketClient> {
  const extra: Record<string, string> = opts.tuicSession === undefined ? {} : { 'x-tuic-session': opts.tuicSession };
  const init = await t.socket(
    'POST',
    '/mcp',
    JSON.stringify({
      jsonrpc: '2.0',
      id: ++rpcId,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: opts.clientName ?? 'socket-test', version: '1' } },
    }),
    { ...MCP_HEADERS, ...extra },
  );
  assert.equal(init.status, 200, init.text);
  const sessionId = init.headers['mcp-session-id'] as string;
  const rpc = async (method: string, params: object) => {
    const r = await t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }), { ...MCP_HEADERS, 'Mcp-Session-Id': sessionId });
    assert.equal(r.status, 200, r.text);
    const body = r.json();
    assert.equal(body.error, undefined, r.text);
    return body.result;
  };
  return {
    sessionId,
    listTools: async () => (await rpc('tools/list', {})).tools,
    callTool: async (name, args) => {
      const result = await rpc('tools/call', { name, arguments: args });
      return { isError: result.isError === true, value: JSON.parse(result.content[0].text) };
    },
  };
}
