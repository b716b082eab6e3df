/**
 * One declaration per route: its params, query and JSON body as typebox schemas, its answers, and a
 * handler that receives the checked, typed input. The schemas are compiled once (typebox's
 * compiler) and checked before the handler runs; the same declaration is what GET /openapi.json
 * publishes (openapi.ts), so the document and the checks cannot disagree.
 */
import type { Static, TObject, TSchema } from 'typebox';

import { checker } from '../../shared/schemaCheck.js';
import type { Handler, HttpMethod, Reply, RequestContext, Route, StreamHandler } from './types.js';
import { parseJsonBody } from './types.js';

/** An answer that is not JSON (text, HTML, an event stream), or JSON described in prose. */
export interface OtherAnswer {
  description: string;
  /** Defaults to application/json. */
  contentType?: string;
  schema?: TSchema;
}

/** What a route answers with, by status. A bare schema is a JSON body. */
export type AnswerSpec = TSchema | OtherAnswer;

export interface RouteSpec {
  /** One line: what the route does. */
  summary: string;
  /** More prose, Markdown. */
  description?: string;
  /** The feature module the route belongs to (the document's tag). */
  tag: string;
  params?: TObject;
  query?: TObject;
  body?: TSchema;
  /** An empty body is taken as this value instead of refused (e.g. `{}` for "all defaults"). */
  emptyBody?: unknown;
  /** Answers by status: 200/201/204 and any the route itself makes; the common errors are added by the document. */
  answers: Readonly<Record<number, AnswerSpec | null>>;
  /** How the route answers: JSON (default), an SSE stream, or a WebSocket upgrade. */
  kind?: 'json' | 'sse' | 'ws';
  /** The body is read and checked by the handler itself (JSON-RPC on /mcp): the schema documents it. */
  bodyCheckedByHandler?: boolean;
}

/** The checked input a handler receives. */
export interface RouteInput<P extends TObject | undefined, Q extends TObject | undefined, B extends TSchema | undefined> {
  params: P extends TObject ? Static<P> : Record<string, string>;
  query: Q extends TObject ? Static<Q> : Record<string, never>;
  body: B extends TSchema ? Static<B> : undefined;
}

export interface RouteDeclaration<P extends TObject | undefined, Q extends TObject | undefined, B extends TSchema | undefined>
  extends Omit<RouteSpec, 'params' | 'query' | 'body'> {
  method: HttpMethod;
  pattern: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Served without auth on TCP (/health, the /mobile login and assets). */
  public?: boolean;
  /** Public, but credentials sent on TCP are checked (never refused) and the handler sees `ctx.authenticated`. */
  optionalAuth?: boolean;
  /** Skip reading a body even for a method that has one. */
  noBody?: boolean;
  /** Refusals the server makes before the handler come as JSON-RPC errors (/mcp). */
  errorShape?: 'jsonrpc';
  handler: (input: RouteInput<P, Q, B>, ctx: RequestContext) => Reply | Promise<Reply>;
}

/** A route whose answer is a stream (SSE) the handler writes itself; params and query are still checked. */
export interface StreamRouteDeclaration<Q extends TObject | undefined> extends Omit<RouteSpec, 'query' | 'body'> {
  method: HttpMethod;
  pattern: string;
  query?: Q;
  handler: StreamHandler;
  noBody?: boolean;
  /** Refusals the server makes before the handler come as JSON-RPC errors (/mcp). */
  errorShape?: 'jsonrpc';
}

/** Declares a JSON route: the handler runs only on input its schemas accept. */
export function defineRoute<P extends TObject | undefined = undefined, Q extends TObject | undefined = undefined, B extends TSchema | undefined = undefined>(
  decl: RouteDeclaration<P, Q, B>,
): Route {
  const { method, pattern, handler, public: isPublic, optionalAuth, noBody, errorShape, params, query, body, ...doc } = decl;
  const spec: RouteSpec = { ...doc, ...(params ? { params } : {}), ...(query ? { query } : {}), ...(body ? { body } : {}) };
  const checkParams = params ? checker(params, 'path') : null;
  const checkQuery = query ? queryChecker(query) : null;
  // A body the handler reads itself (JSON-RPC) is only documented here.
  const checkBody = body && !decl.bodyCheckedByHandler ? checker(body, 'body') : null;
  const emptyBody = decl.emptyBody;
  const hasEmptyDefault = 'emptyBody' in decl;
  const run: Handler = (ctx) => {
    const input = {
      params: checkParams ? checkParams(ctx.params) : ctx.params,
      query: checkQuery ? checkQuery(ctx.query) : {},
      body: checkBody ? checkBody(ctx.body.length === 0 && hasEmptyDefault ? structuredClone(emptyBody) : parseJsonBody(ctx)) : undefined,
    } as RouteInput<P, Q, B>;
    return handler(input, ctx);
  };
  return {
    method,
    pattern,
    handler: run,
    spec,
    ...(isPublic ? { public: true } : {}),
    ...(isPublic && optionalAuth ? { optionalAuth: true } : {}),
    ...(noBody ? { noBody: true } : {}),
    ...(errorShape ? { errorShape } : {}),
  };
}

/** Declares a streaming route (SSE): the query is checked before the stream starts. */
export function defineStreamRoute<Q extends TObject | undefined = undefined>(decl: StreamRouteDeclaration<Q>): Route {
  const { method, pattern, handler, noBody, errorShape, query, ...doc } = decl;
  const spec: RouteSpec = { ...doc, kind: doc.kind ?? 'sse', ...(query ? { query } : {}) };
  return { method, pattern, handler, spec, ...(noBody ? { noBody: true } : {}), ...(errorShape ? { errorShape } : {}) };
}

/**
 * Query strings carry text: each declared parameter is converted by its schema's type (integers,
 * numbers, booleans) before the check, so `?limit=abc` fails as "limit must be an integer".
 */
function queryChecker(schema: TObject): (query: URLSearchParams) => unknown {
  const check = checker(schema, 'query');
  const kinds = Object.entries(schema.properties).map(([name, prop]) => [name, scalarKind(prop)] as const);
  return (query) => {
    const out: Record<string, unknown> = {};
    for (const [name, kind] of kinds) {
      const raw = query.get(name);
      if (raw === null) continue;
      out[name] = convertQueryValue(raw, kind);
    }
    return check(out);
  };
}

type ScalarKind = 'string' | 'number' | 'boolean';

function scalarKind(schema: TSchema): ScalarKind {
  const s = schema as { type?: unknown; anyOf?: TSchema[] };
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('integer') || types.includes('number')) return 'number';
  if (types.includes('boolean')) return 'boolean';
  if (s.anyOf) {
    const kinds = new Set(s.anyOf.map(scalarKind));
    if (kinds.size === 1) return [...kinds][0]!;
  }
  return 'string';
}

const NUMERIC = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

function convertQueryValue(raw: string, kind: ScalarKind): unknown {
  if (kind === 'number') return NUMERIC.test(raw) ? Number(raw) : raw;
  if (kind === 'boolean') {
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
  }
  return raw;
}
