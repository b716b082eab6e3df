/**
 * GET /openapi.json: an OpenAPI 3.1 document built at start from the routes' own declarations
 * (routeSpec.ts). Nothing in it is written by hand: a route's params, query, body and answers are
 * the schemas its input is checked against. typebox schemas are JSON Schema, which 3.1 takes as is.
 */
import type { TSchema } from 'typebox';
import { Type } from 'typebox';

import { API_ERROR_CODES } from '../../shared/apiError.js';
import type { AnswerSpec, OtherAnswer, RouteSpec } from './routeSpec.js';
import type { Route, WsRoute } from './types.js';

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, for a person; at most 200 characters of client input are quoted.' }),
    code: Type.Union(
      API_ERROR_CODES.map((c) => Type.Literal(c)),
      { description: 'Stable, machine-readable: match on this, not on `error`.' },
    ),
    field: Type.Optional(Type.String({ description: 'invalid_input: the field that failed (`data`, `args[0]`).' })),
    in: Type.Optional(Type.Union([Type.Literal('path'), Type.Literal('query'), Type.Literal('body')])),
  },
  { additionalProperties: true },
);

/** The errors any route may answer, by status, beside those it declares. */
const ERROR_STATUSES = {
  input: { 400: 'The input does not match the schema (`code: invalid_input`, `field` names it).' },
  auth: {
    401: 'TCP only: credentials missing or wrong (Basic, the `tui-session` cookie or `?token=`).',
    403: 'TCP only: the Host or Origin is not allowed.',
    429: 'TCP only: too many failed logins from this address (Retry-After).',
  },
  body: {
    413: 'The body is over `services.server.max_body_bytes` (2 MiB).',
    415: 'TCP only: the body is not `application/json`.',
  },
  always: {
    408: 'The handler took longer than `services.server.request_timeout_ms`.',
    500: 'A bug on our side; the log has it.',
    503: 'A worker (the pty host, the hub) is restarting (Retry-After).',
  },
} as const;

export interface OpenApiOptions {
  version: string;
  routes: readonly Route[];
  wsRoutes: readonly WsRoute[];
}

type Json = Record<string, unknown>;

/** Plain JSON Schema: typebox's own markers dropped. */
function jsonSchema(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

/** `/sessions/:id/write` → `/sessions/{id}/write`; a `*rest` segment is a `{rest}` holding slashes. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

/** A schema may have no `type` (a union, `anyOf`): typebox marks every schema it builds with `~kind`. */
function isOther(answer: AnswerSpec): answer is OtherAnswer {
  return typeof (answer as OtherAnswer).description === 'string' && (answer as { type?: unknown }).type === undefined && !('~kind' in answer);
}

function answerObject(status: number, answer: AnswerSpec | null): Json {
  if (answer === null) return { description: status === 204 ? 'No content.' : 'No body.' };
  if (isOther(answer)) {
    const content: Json = {};
    content[answer.contentType ?? 'application/json'] = answer.schema ? { schema: jsonSchema(answer.schema) } : {};
    return { description: answer.description, content };
  }
  const schema = jsonSchema(answer);
  return { description: typeof schema['description'] === 'string' ? schema['description'] : 'OK.', content: { 'application/json': { schema } } };
}

function parameters(spec: RouteSpec | undefined, pattern: string): Json[] {
  const out: Json[] = [];
  const names = pattern
    .split('/')
    .filter((s) => s.startsWith(':') || s.startsWith('*'))
    .map((s) => s.slice(1));
  for (const name of names) {
    const schema = spec?.params?.properties[name];
    out.push({ name, in: 'path', required: true, schema: schema ? jsonSchema(schema) : { type: 'string' } });
  }
  if (spec?.query) {
    const required = new Set(spec.query.required ?? []);
    for (const [name, schema] of Object.entries(spec.query.properties)) {
      const s = jsonSchema(schema);
      const p: Json = { name, in: 'query', required: required.has(name), schema: s };
      if (typeof s['description'] === 'string') p['description'] = s['description'];
      out.push(p);
    }
  }
  return out;
}

function operationId(method: string, pattern: string): string {
  const words = pattern
    .split('/')
    .filter(Boolean)
    .map((s) => (s.startsWith(':') || s.startsWith('*') ? `by-${s.slice(1)}` : s));
  return [method.toLowerCase(), ...words]
    .join('-')
    .replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))
    .replace(/^./, (c) => c.toLowerCase());
}

function operation(method: string, pattern: string, spec: RouteSpec, isPublic: boolean, optionalAuth = false): Json {
  const op: Json = { operationId: operationId(method, pattern), summary: spec.summary, tags: [spec.tag] };
  if (spec.description) op['description'] = spec.description;
  const params = parameters(spec, pattern);
  if (params.length > 0) op['parameters'] = params;
  if (spec.body) {
    op['requestBody'] = { required: !('emptyBody' in spec), content: { 'application/json': { schema: jsonSchema(spec.body) } } };
    // JSON-RPC (/mcp) refuses a bad body in its own error shape, not with invalid_input.
    if (spec.bodyCheckedByHandler) op['x-body-checked-by'] = 'handler';
  }
  const responses: Json = {};
  for (const [status, answer] of Object.entries(spec.answers)) responses[status] = answerObject(Number(status), answer);
  const errorRef = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  const addError = (status: string, description: string) => {
    if (responses[status] === undefined) responses[status] = { description, ...errorRef };
  };
  if (params.length > 0 || spec.body) for (const [s, d] of Object.entries(ERROR_STATUSES.input)) addError(s, d);
  if (!isPublic) for (const [s, d] of Object.entries(ERROR_STATUSES.auth)) addError(s, d);
  if (spec.body) for (const [s, d] of Object.entries(ERROR_STATUSES.body)) addError(s, d);
  for (const [s, d] of Object.entries(ERROR_STATUSES.always)) addError(s, d);
  op['responses'] = responses;
  // Optional credentials: OpenAPI's empty requirement says "none", beside the schemes that also count.
  if (isPublic) op['security'] = optionalAuth ? [{}, { basicAuth: [] }, { sessionCookie: [] }, { sessionToken: [] }] : [];
  if (spec.kind === 'sse') op['x-stream'] = 'sse';
  if (spec.kind === 'ws') op['x-stream'] = 'websocket';
  return op;
}

export function buildOpenApiDocument(opts: OpenApiOptions): Json {
  const paths: Record<string, Json> = {};
  const add = (method: string, pattern: string, op: Json) => {
    const path = openApiPath(pattern);
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = op;
  };
  for (const route of opts.routes) {
    if (!route.spec) continue;
    add(route.method, route.pattern, operation(route.method, route.pattern, route.spec, route.public === true, route.optionalAuth === true));
  }
  for (const ws of opts.wsRoutes) {
    if (!ws.spec) continue;
    add('GET', ws.pattern, operation('GET', ws.pattern, { ...ws.spec, kind: 'ws' }, false));
  }
  const sortedPaths: Record<string, Json> = {};
  for (const key of Object.keys(paths).sort()) sortedPaths[key] = paths[key]!;
  const tags = [...new Set([...opts.routes, ...opts.wsRoutes].flatMap((r) => (r.spec ? [r.spec.tag] : [])))].sort().map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'tuicd HTTP API',
      version: opts.version,
      description:
        'Served on the unix socket (no auth) and, when remote access is on, on the TCP port (every route but /health needs credentials). ' +
        'Every error answer is `{error, code}` (components.schemas.Error); match on `code`. ' +
        'Routes marked `x-stream: sse` answer `text/event-stream`; `x-stream: websocket` routes upgrade to a WebSocket.',
    },
    tags,
    security: [{ basicAuth: [] }, { sessionCookie: [] }, { sessionToken: [] }],
    paths: sortedPaths,
    components: {
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: '`services.auth.username` and the password whose hash is `services.auth.password_hash`.' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'tui-session', description: 'Set by POST /auth/login, or by a request that carried the token.' },
        sessionToken: { type: 'apiKey', in: 'query', name: 'token', description: 'The session token (`services.auth.session_token`), e.g. from a QR code.' },
      },
      schemas: { Error: jsonSchema(ErrorBodySchema) },
    },
  };
}
