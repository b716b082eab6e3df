/**
 * /mcp: POST (JSON-RPC), GET (server-to-client SSE stream), DELETE (end the protocol session),
 * plus GET /mcp/status, GET /mcp/instructions and GET /mcp/tools.json. `mcp_server_enabled: false`
 * turns the protocol routes into 404s without touching anything else; the TCP listener's request
 * guard refuses foreign Host/Origin headers (DNS rebinding) on them as JSON-RPC errors
 * (`errorShape`). All three protocol routes refuse an unsupported MCP-Protocol-Version header with
 * 400. POST reads its own body: every refusal of it is a JSON-RPC error, never `{error, code}`.
 */
import { STATUS_CODES } from 'node:http';
import { Type } from 'typebox';

import type { EngineResponse } from '../http/engine/types.js';
import { corsHeaders } from '../http/cors.js';
import { errorReply } from '../http/errorReply.js';
import { ErrorBodySchema } from '../http/openapi.js';
import { defineRoute, defineStreamRoute, type OtherAnswer } from '../http/routeSpec.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import { json } from '../http/types.js';
import { JsonRpcCode, MAX_BATCH_MESSAGES } from '../mcp/jsonRpc.js';
import type { McpService } from '../mcp/mcpService.js';
import type { ToolDefinition } from '../mcp/tools/nativeTool.js';
import { BadSessionHeader, jsonRpcErrorReply, presentedSessionId, protocolVersionRefusal } from '../mcp/transport.js';

interface McpRouteDeps {
  /** Live PTY sessions and their cap, for /mcp/status. */
  ptySessionCount(): number;
  maxSessions(): number;
}

const MCP_PATH = '/mcp';
const TAG = 'mcp';

/** Upstream tools are `{upstream}__{tool}`; native names never contain it. */
const UPSTREAM_SEPARATOR = '__';

// ---- The JSON-RPC 2.0 shapes /mcp speaks (documentation: POST checks its body itself) -------------

const JsonRpcIdSchema = Type.Union([Type.String(), Type.Number()], { description: 'A string or a number; never null.' });
const ParamsSchema = Type.Record(Type.String(), Type.Unknown(), { description: 'By name only: no MCP method takes positional params.' });

const JsonRpcMessageSchema = Type.Union(
  [
    Type.Object(
      { jsonrpc: Type.Literal('2.0'), id: JsonRpcIdSchema, method: Type.String({ minLength: 1 }), params: Type.Optional(ParamsSchema) },
      { title: 'request', additionalProperties: true },
    ),
    Type.Object(
      { jsonrpc: Type.Literal('2.0'), method: Type.String({ minLength: 1 }), params: Type.Optional(ParamsSchema) },
      { title: 'notification', additionalProperties: true },
    ),
    Type.Object(
      {
        jsonrpc: Type.Literal('2.0'),
        id: Type.Union([JsonRpcIdSchema, Type.Null()]),
        result: Type.Optional(Type.Unknown()),
        error: Type.Optional(Type.Unknown()),
      },
      { title: 'response', description: "A client's answer to a server request: acknowledged (202).", additionalProperties: true },
    ),
  ],
  { description: 'One JSON-RPC 2.0 message.' },
);

const McpPostBody = Type.Union(
  [
    JsonRpcMessageSchema,
    Type.Array(JsonRpcMessageSchema, {
      minItems: 1,
      maxItems: MAX_BATCH_MESSAGES,
      description: 'A batch: only MCP 2025-03-26 (by MCP-Protocol-Version, or the revision the session negotiated); never with initialize.',
    }),
  ],
  { description: 'A JSON-RPC message, or a batch of them. Refusals are JSON-RPC errors: 400 for the transport, 200 for a method.' },
);

const JsonRpcErrorObject = Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) });

const JsonRpcResponseSchema = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([JsonRpcIdSchema, Type.Null()]),
    result: Type.Optional(Type.Unknown()),
    error: Type.Optional(JsonRpcErrorObject),
  },
  { description: 'A JSON-RPC response: `result`, or `error` (an unknown method, bad params: still HTTP 200).' },
);

const jsonRpcRefusal = (description: string): OtherAnswer => ({ description, schema: JsonRpcResponseSchema });
const disabledAnswer: OtherAnswer = { description: '`mcp_server_enabled` is false: no such endpoint (`not_found`).', schema: ErrorBodySchema };

/** The same, for GET and DELETE (a refused header): id null, code -32000. */
const HEADER_REFUSAL = jsonRpcRefusal('No (or a malformed) Mcp-Session-Id, or an unsupported MCP-Protocol-Version: a JSON-RPC error, id null.');

// ---- GET /mcp/tools.json ---------------------------------------------------------------------------

const NativeToolDoc = Type.Object(
  {
    name: Type.String(),
    description: Type.String({ description: 'What tools/list sends: the summary, an `Actions:` list, notes.' }),
    inputSchema: Type.Object({ type: Type.Literal('object') }, { additionalProperties: true, description: 'JSON Schema of the arguments.' }),
    actions: Type.Array(Type.String(), { description: 'The values `action` takes, in declaration order; empty for a tool without actions.' }),
  },
  { additionalProperties: true },
);

const ToolsDocAnswer = Type.Object({
  tools: Type.Array(NativeToolDoc, {
    description: 'The native tools /mcp lists now (tools/list, classic surface), in its order; disabled tools are left out.',
  }),
});

/** A native tool's actions: the `action` enum its declaration generated (mcp/tools/nativeTool.ts defineTool). */
function actionsOf(definition: ToolDefinition): string[] {
  const values = (definition.inputSchema['properties'] as Record<string, { enum?: unknown }> | undefined)?.['action']?.enum;
  return Array.isArray(values) ? values.filter((a): a is string => typeof a === 'string') : [];
}

// ---- the routes ------------------------------------------------------------------------------------

function disabledReply(path: string): Reply {
  return errorReply('not_found', `no such endpoint: ${path}`);
}

/** Null when the request may reach the protocol routes; otherwise the refusal. */
function gate(service: McpService, ctx: RequestContext): Reply | null {
  // Host/Origin (DNS rebinding) on TCP: the server's request guard refused those before any route ran.
  return service.enabled ? null : disabledReply(ctx.path);
}

/** Writes a complete reply on a raw stream response (the stream route answers refusals itself); no stream stays open. */
function endWith(res: EngineResponse, ctx: RequestContext, reply: Reply): undefined {
  const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
  res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
  res.writeHeader('Content-Type', 'application/json');
  const headers = { ...corsHeaders(ctx.listener, ctx.headers['origin']), ...reply.headers };
  for (const key in headers) if (key !== 'Content-Type') res.writeHeader(key, headers[key]!);
  res.end(body);
  return undefined;
}

export function mcpRoutes(service: McpService, deps: McpRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'POST',
      pattern: MCP_PATH,
      tag: TAG,
      summary: 'MCP Streamable HTTP: one JSON-RPC message (or a 2025-03-26 batch) in, its answer out',
      description:
        'Answers `application/json`, unless a request served by an upstream has messages for the client before its answer ' +
        "(progress, log messages, the upstream's sampling, elicitation or roots request) and `Accept` lists `text/event-stream`: " +
        'then the answer turns into an SSE stream at the first such message and ends with the JSON-RPC response. ' +
        '`initialize` mints a protocol session (`Mcp-Session-Id` answer header); later requests present it. ' +
        'Notifications and client responses (the answers to those requests) get 202 without a body.',
      body: McpPostBody,
      bodyCheckedByHandler: true,
      answers: {
        200: {
          description: 'The JSON-RPC response, or an array of them for a batch (or, as above, an SSE stream ending with the response).',
          schema: Type.Union([JsonRpcResponseSchema, Type.Array(JsonRpcResponseSchema)]),
        },
        202: null,
        400: jsonRpcRefusal('Not JSON, not JSON-RPC, a bad batch, a malformed Mcp-Session-Id or an unsupported MCP-Protocol-Version: a JSON-RPC error.'),
        404: disabledAnswer,
      },
      errorShape: 'jsonrpc',
      handler: (_input, ctx) => gate(service, ctx) ?? service.transport.handlePost(ctx),
    }),
    defineStreamRoute({
      method: 'GET',
      pattern: MCP_PATH,
      tag: TAG,
      summary: "The protocol session's server-to-client stream (notifications/tools/list_changed and the like)",
      description: 'Needs `Mcp-Session-Id` (an unknown id is created). A newer stream for the same session supersedes an older one.',
      answers: {
        200: { description: 'An event stream of `event: message` frames, each one JSON-RPC message.', contentType: 'text/event-stream' },
        400: HEADER_REFUSAL,
        404: disabledAnswer,
      },
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
          return service.streams.open(res, sessionId, corsHeaders(ctx.listener, ctx.headers['origin']));
        },
      },
    }),
    defineRoute({
      method: 'DELETE',
      pattern: MCP_PATH,
      tag: TAG,
      summary: 'End the protocol session named by `Mcp-Session-Id`; an id this server does not hold (never made, or ended) is 404',
      answers: {
        200: null,
        400: HEADER_REFUSAL,
        404: {
          description:
            'No protocol session has that id (a JSON-RPC error, id null, `data.code: not_found`), or `mcp_server_enabled` is false (`{error, code: not_found}`).',
          schema: Type.Union([JsonRpcResponseSchema, ErrorBodySchema]),
        },
      },
      errorShape: 'jsonrpc',
      noBody: true,
      handler: (_input, ctx) => {
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
        // MCP: a session the server no longer holds answers 404 (the client starts a new one).
        if (!service.sessions.delete(sessionId)) {
          return jsonRpcErrorReply(404, JsonRpcCode.SERVER_ERROR, 'Not Found: no MCP session has this Mcp-Session-Id', null, undefined, { code: 'not_found' });
        }
        return { status: 200 };
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/mcp/status',
      tag: TAG,
      summary: "The MCP endpoint's state: enabled, protocol sessions, open streams, PTY sessions and their cap",
      answers: {
        200: Type.Object({
          enabled: Type.Boolean({ description: '`mcp_server_enabled`.' }),
          running: Type.Literal(true),
          active_sessions: Type.Integer({ minimum: 0, description: 'Live PTY sessions.' }),
          mcp_clients: Type.Integer({ minimum: 0, description: 'MCP protocol sessions.' }),
          max_sessions: Type.Integer({ minimum: 0, description: 'The PTY session cap.' }),
          sse_streams: Type.Integer({ minimum: 0, description: 'Open GET /mcp streams.' }),
        }),
      },
      handler: () =>
        json({
          enabled: service.enabled,
          running: true,
          active_sessions: deps.ptySessionCount(),
          mcp_clients: service.sessions.size,
          max_sessions: deps.maxSessions(),
          sse_streams: service.streams.openCount,
        }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/mcp/instructions',
      tag: TAG,
      summary: 'The instructions initialize sends a client (classic surface), rendered for the live state',
      answers: { 200: Type.Object({ instructions: Type.String() }) },
      handler: () => json({ instructions: service.instructionsFor(service.catalog.surfaceFor({ requiresMetaTools: false })) }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/mcp/tools.json',
      tag: TAG,
      summary: "Each native MCP tool's name, description, input schema and actions",
      description: 'The same declarations tools/list serves on /mcp (classic surface, upstream tools left out), plus the `action` values of each.',
      answers: { 200: ToolsDocAnswer },
      handler: () =>
        json({
          tools: service.catalog
            .enabledDefinitions()
            .filter((d) => !d.name.includes(UPSTREAM_SEPARATOR))
            .map((d) => ({ ...d, actions: actionsOf(d) })),
        }),
    }),
  ];
}
