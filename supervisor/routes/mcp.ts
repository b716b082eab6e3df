/**
 * /mcp: POST (JSON-RPC), GET (server-to-client SSE stream), DELETE (end the protocol session),
 * plus GET /mcp/status and GET /mcp/instructions. `mcp_server_enabled: false` turns the protocol
 * routes into 404s without touching anything else; the TCP listener's request guard refuses foreign
 * Host/Origin headers (DNS rebinding) on them as JSON-RPC errors (`errorShape`). All three protocol routes refuse an unsupported
 * MCP-Protocol-Version header with 400.
 */
import { STATUS_CODES } from 'node:http';
import type { EngineResponse } from '../http/engine/types.js';

import { corsHeaders } from '../http/cors.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import { json } from '../http/types.js';
import { JsonRpcCode } from '../mcp/jsonRpc.js';
import type { McpService } from '../mcp/mcpService.js';
import { BadSessionHeader, jsonRpcErrorReply, presentedSessionId, protocolVersionRefusal } from '../mcp/transport.js';

export interface McpRouteDeps {
  /** Live PTY sessions and their cap, for /mcp/status. */
  ptySessionCount(): number;
  maxSessions(): number;
}

const MCP_PATH = '/mcp';

function disabledReply(path: string): Reply {
  return { status: 404, body: { error: `no such endpoint: ${path}` } };
}

/** Null when the request may reach the protocol routes; otherwise the refusal. */
function gate(service: McpService, ctx: RequestContext): Reply | null {
  // Host/Origin (DNS rebinding) on TCP: the server's request guard refused those before any route ran.
  return service.enabled ? null : disabledReply(ctx.path);
}

/** Writes a complete reply on a raw stream response (the stream route answers refusals itself). */
function endWith(res: EngineResponse, ctx: RequestContext, reply: Reply): void {
  const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
  res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
  res.writeHeader('Content-Type', 'application/json');
  const headers = { ...corsHeaders(ctx.listener, ctx.headers['origin']), ...reply.headers };
  for (const key in headers) if (key !== 'Content-Type') res.writeHeader(key, headers[key]!);
  res.end(body);
}

export function mcpRoutes(service: McpService, deps: McpRouteDeps): Route[] {
  return [
    {
      method: 'POST',
      pattern: MCP_PATH,
      errorShape: 'jsonrpc',
      handler: (ctx) => gate(service, ctx) ?? service.transport.handlePost(ctx),
    },
    {
      method: 'GET',
      pattern: MCP_PATH,
      errorShape: 'jsonrpc',
      handler: {
        stream(res, ctx) {
          const refusal = gate(service, ctx) ?? protocolVersionRefusal(ctx.headers);
          if (refusal) return endWith(res, ctx, refusal);
          let sessionId: string | null;
          try {
            sessionId = presentedSessionId(ctx.headers);
          } catch (err) {
            if (!(err instanceof BadSessionHeader)) throw err;
            return endWith(res, ctx, jsonRpcErrorReply(400, JsonRpcCode.SERVER_ERROR, err.message));
          }
          // 400, not 401: nothing here is about credentials, and a 401 must carry WWW-Authenticate.
          if (sessionId === null) {
            return endWith(
              res,
              ctx,
              jsonRpcErrorReply(400, JsonRpcCode.SERVER_ERROR, 'Bad Request: GET /mcp requires an Mcp-Session-Id header (call initialize first)'),
            );
          }
          service.streams.open(res, sessionId, corsHeaders(ctx.listener, ctx.headers['origin']));
        },
      },
    },
    {
      method: 'DELETE',
      pattern: MCP_PATH,
      errorShape: 'jsonrpc',
      noBody: true,
      handler: (ctx) => {
        const refusal = gate(service, ctx) ?? protocolVersionRefusal(ctx.headers);
        if (refusal) return refusal;
        let sessionId: string | null;
        try {
          sessionId = presentedSessionId(ctx.headers);
        } catch (err) {
          if (!(err instanceof BadSessionHeader)) throw err;
          return jsonRpcErrorReply(400, JsonRpcCode.SERVER_ERROR, err.message);
        }
        if (sessionId === null) return jsonRpcErrorReply(400, JsonRpcCode.SERVER_ERROR, 'Bad Request: DELETE /mcp requires an Mcp-Session-Id header');
        // Idempotent: a session the reaper already took is just as ended.
        service.sessions.delete(sessionId);
        return { status: 200 };
      },
    },
    {
      method: 'GET',
      pattern: '/mcp/status',
      handler: () =>
        json({
          enabled: service.enabled,
          running: true,
          active_sessions: deps.ptySessionCount(),
          mcp_clients: service.sessions.size,
          max_sessions: deps.maxSessions(),
          sse_streams: service.streams.openCount,
        }),
    },
    {
      method: 'GET',
      pattern: '/mcp/instructions',
      handler: () => json({ instructions: service.instructionsFor(service.catalog.surfaceFor({ requiresMetaTools: false })) }),
    },
  ];
}
