/**
 * Baseline for the tools/call bench: the MCP TypeScript SDK as its README shows it — an `McpServer`
 * per session behind `StreamableHTTPServerTransport` on `node:http` — with one tool equivalent to
 * tuicd's `session action=list` (a small JSON list returned as compact text), and server-everything's
 * `echo` for the proxy bench.
 *
 * JSON responses (`enableJsonResponse`) by default, so both servers answer a tools/call with the same
 * wire shape (tuicd answers in the HTTP body); `--responses sse` keeps the SDK's own default, where
 * each POST is answered on an SSE stream (the README's configuration). DNS-rebinding protection on,
 * as tuicd's TCP listener has it.
 * Also the reference server the conformance harness was validated against.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { parseArgs } from 'node:util';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
// zod is the SDK's own schema library (its dependency and required peer); McpServer takes nothing else.
import { z } from 'zod';

import { serveNodeHttpOnBoth } from '../http/bareServer.js';
import { BARE_SESSION_ROWS } from './toolsCallShared.js';

const { values } = parseArgs({
  options: { socket: { type: 'string' }, 'max-seconds': { type: 'string', default: '1800' }, responses: { type: 'string', default: 'json' } },
});
if (!values.socket || !['json', 'sse'].includes(values.responses))
  throw new Error('usage: bareSdkServer --socket <path> [--max-seconds N] [--responses json|sse]');
const socketPath = values.socket;

const transports = new Map<string, StreamableHTTPServerTransport>();
let port = 0;

function newSession(): StreamableHTTPServerTransport {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: values.responses === 'json',
    enableDnsRebindingProtection: true,
    allowedHosts: [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`],
    onsessioninitialized: (id) => void transports.set(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId) transports.delete(transport.sessionId);
  };
  const server = new McpServer({ name: 'bare-sdk', version: '0.0.0-bench' });
  server.registerTool('session', { description: 'Terminal sessions. action=list lists them.', inputSchema: { action: z.string() } }, ({ action }) => {
    if (action !== 'list') return { content: [{ type: 'text', text: JSON.stringify({ error: `Unknown action '${action}'` }) }], isError: true };
    return { content: [{ type: 'text', text: JSON.stringify(BARE_SESSION_ROWS) }], isError: false };
  });
  // The proxy bench's call: server-everything's `echo`, same schema and answer.
  server.registerTool(
    'echo',
    { description: 'Echoes back the input string', inputSchema: { message: z.string().describe('Message to echo') } },
    ({ message }) => ({
      content: [{ type: 'text', text: `Echo: ${message}` }],
    }),
  );
  void server.connect(transport);
  return transport;
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

const handler: http.RequestListener = (req, res) => {
  void (async () => {
    if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end();
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? transports.get(id) : undefined;
    if (req.method !== 'POST') {
      if (!known) return void res.writeHead(400).end('unknown or missing mcp-session-id');
      return known.handleRequest(req, res);
    }
    const body = await readJson(req);
    if (known) return known.handleRequest(req, res, body);
    if (id === undefined && isInitializeRequest(body)) return newSession().handleRequest(req, res, body);
    res.writeHead(id === undefined ? 400 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no valid session' }, id: null }));
  })().catch((err: unknown) => {
    if (!res.headersSent) res.writeHead(500).end(String(err));
  });
};

serveNodeHttpOnBoth('bare-sdk-mcp', handler, socketPath, Number(values['max-seconds']), (p) => (port = p));
