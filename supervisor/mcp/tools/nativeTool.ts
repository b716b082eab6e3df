/**
 * The contract every native MCP tool implements. A tool is declared once: its actions (name →
 * one-line doc), its typebox input schema and its handler. The action constant, the schema's
 * `action` enum and the description's action lines are all generated from that one declaration by
 * `defineTool`, so they cannot drift; and the schema it advertises is the check its arguments pass
 * before the handler runs (compiled once), so the two cannot disagree either.
 */
import { Type } from 'typebox';
import type { TProperties, TSchema } from 'typebox';

import { ApiError, asApiError, type ApiErrorCode } from '../../../shared/apiError.js';
import type { Cancellation } from '../../../shared/cancellation.js';
import { checker, validatorOf } from '../../../shared/schemaCheck.js';
import type { RawToolResult } from '../../../shared/mcpEnvelope.js';
import type { ClientRoute } from '../upstreamPrimitives.js';
import { clipClientInput } from '../../../shared/quoteClientInput.js';

/** Who is calling: copied from the HTTP request and the MCP protocol session before dispatch. */
export interface CallerContext {
  /** True on the unix socket, and on TCP only for a loopback peer. */
  readonly isLoopback: boolean;
  readonly listener: 'socket' | 'tcp';
  /** The protocol session (`Mcp-Session-Id`) when the caller presented or holds one. */
  readonly mcpSessionId: string | null;
  /** The caller's TUIC identity (`x-tuic-session` bound at initialize), when known. */
  readonly tuicSession: string | null;
  /** The PTY session that identity runs in, when it runs in one of ours. */
  readonly boundSessionId: string | null;
  /** `clientInfo.name` from initialize, when known. */
  readonly clientName: string | null;
  /** Aborted when the HTTP request goes away or times out; long waits must honour it. Built on first use. */
  readonly signal: AbortSignal;
  /** The same as `signal`, for work that can take a Cancellation (a proxied call): no AbortSignal is built. */
  readonly cancellation?: Cancellation;
  /** The upstreams the caller's project may use (its repository's allowlist); absent or null = every upstream. */
  readonly upstreamAllowlist?: ReadonlySet<string> | null;
  /** The client request a proxied call serves: where the upstream's progress and requests to the client go. */
  readonly clientRoute?: ClientRoute;
}

/**
 * A failure the caller should read: becomes the tool error `{"error": message, "code": code, ...extra}`
 * with isError true. Any other ApiError a handler lets through (domain code's) becomes the same
 * with its own code; anything else is a bug, reported as `internal` naming the tool.
 */
export class ToolError extends ApiError {
  constructor(code: ApiErrorCode, message: string, extra?: Readonly<Record<string, unknown>>);
  /** @deprecated Name the code: this form (the agent tool's, until it moves) answers `invalid_input`. */
  constructor(message: string, extra?: Readonly<Record<string, unknown>>);
  constructor(a: string, b?: string | Readonly<Record<string, unknown>>, c?: Readonly<Record<string, unknown>>) {
    const coded = typeof b === 'string';
    super(coded ? (a as ApiErrorCode) : 'invalid_input', coded ? b : a, { extra: (coded ? c : b) ?? {} });
    this.name = 'ToolError';
  }
}

/**
 * The tool error body a thrown value becomes: `{error, code, ...extra}` (and `retry_after_s` when
 * the error knows one), or null for a bug. `error` and `code` are never overridden by extra fields.
 */
export function toolErrorBody(err: unknown): Record<string, unknown> | null {
  const api = asApiError(err);
  if (api === null) return null;
  const body: Record<string, unknown> = { error: api.message, code: api.code, ...api.extra };
  body['error'] = api.message;
  body['code'] = api.code;
  if (api.retryAfterS !== undefined && !Object.hasOwn(body, 'retry_after_s')) body['retry_after_s'] = api.retryAfterS;
  return body;
}

/** What a handler returns: any JSON object; an `error` key marks it as a tool error. */
export type ToolValue = Record<string, unknown> | unknown[] | RawToolResult;

export type ToolHandler = (args: Record<string, unknown>, caller: CallerContext) => ToolValue | Promise<ToolValue>;

/** The wire definition sent in tools/list. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface NativeTool {
  readonly definition: ToolDefinition;
  /** Action names in declaration order; empty for tools without actions. */
  readonly actions: readonly string[];
  /** The declared handler behind the action and argument checks (defineTool): what every caller reaches. */
  readonly handler: ToolHandler;
}

export interface ToolDeclaration<P extends TProperties> {
  name: string;
  /** Prose before the action list: what the tool is for. */
  summary: string;
  /** Action name → one line saying what it does. Omit for tools without actions. */
  actions?: Readonly<Record<string, string>>;
  /** Prose after the action list (argument notes, rules the tool owns). */
  notes?: string;
  /** Properties other than `action`. An `errorMessage` pins a property's wording when its check fails (never advertised). */
  properties: P;
  /** Required properties other than `action` (which is always required when actions exist). */
  required?: readonly (keyof P & string)[];
  /**
   * Looser schemas the argument check uses instead of the advertised ones, for properties whose
   * handler finishes the check itself; the site says why. Rare: the advertised schema is the check.
   */
  checkedAs?: { readonly [K in keyof P]?: TSchema };
  /**
   * Refusals that outrank the argument check, run after the action check: the feature is off, a
   * value that exists but is not the caller's to send. Throws a ToolError.
   */
  refuse?: (args: Record<string, unknown>, caller: CallerContext) => void;
  _meta?: Record<string, unknown>;
  /** Runs only on arguments the schema accepts (null-valued optional properties already dropped). */
  handler: ToolHandler;
}

/** The line format of an action in a description; the drift test parses it back. */
export const ACTION_LINE = (name: string, doc: string): string => `- ${name}: ${doc}`;

/** JSON.stringify replacer for the advertised schema: wording pins are for the server's errors, not a client's context. */
const advertised = (key: string, value: unknown): unknown => (key === 'errorMessage' ? undefined : value);

/**
 * Builds a NativeTool from one declaration: constant, schema enum and description lines agree by
 * construction, and `handler` checks before it runs the declared one: the action (its own wording),
 * then `refuse`, then the whole input schema, a failure being `{error: "<field> <what>", code:
 * "invalid_input", field}`. An optional property sent as null counts as absent (clients that make
 * every property nullable send null for "not given"), unless its schema takes null itself.
 */
export function defineTool<P extends TProperties>(decl: ToolDeclaration<P>): NativeTool {
  const actions = Object.keys(decl.actions ?? {});
  const properties: Record<string, TSchema> = {};
  const required: string[] = [];
  if (actions.length > 0) {
    properties['action'] = Type.String({ enum: actions, description: 'One of the actions listed in the tool description' } as never);
    required.push('action');
  }
  Object.assign(properties, decl.properties);
  required.push(...(decl.required ?? []));
  const inputSchema: Record<string, unknown> = { type: 'object', properties: JSON.parse(JSON.stringify(properties, advertised)) };
  if (required.length > 0) inputSchema['required'] = required;

  const parts = [decl.summary.trim()];
  if (actions.length > 0) parts.push(`Actions:\n${actions.map((a) => ACTION_LINE(a, decl.actions![a]!)).join('\n')}`);
  if (decl.notes) parts.push(decl.notes.trim());
  const definition: ToolDefinition = { name: decl.name, description: parts.join('\n\n'), inputSchema };
  if (decl._meta) definition._meta = decl._meta;

  const checked: Record<string, TSchema> = { ...properties, ...(decl.checkedAs as Record<string, TSchema> | undefined) };
  const check = checker({ type: 'object', properties: checked, required } as unknown as TSchema, 'arguments');
  const nullMeansAbsent = new Set(Object.keys(checked).filter((k) => !required.includes(k) && !validatorOf(checked[k]!).Check(null)));
  const run = decl.handler;
  const refuse = decl.refuse;

  const tool: NativeTool = {
    definition,
    actions,
    handler: (args, caller) => {
      if (actions.length > 0) requireAction(tool, args);
      refuse?.(args, caller);
      const input = dropNulls(args, nullMeansAbsent);
      try {
        check(input);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        throw new ToolError('invalid_input', err.message, { field: err.extra['field'] });
      }
      return run(input, caller);
    },
  };
  return tool;
}

/** `args` without the null-valued properties named in `keys`: a copy when there are any (rare), else `args` itself. */
function dropNulls(args: Record<string, unknown>, keys: ReadonlySet<string>): Record<string, unknown> {
  for (const key in args) {
    if (args[key] === null && keys.has(key)) {
      const out: Record<string, unknown> = {};
      for (const k in args) if (args[k] !== null || !keys.has(k)) out[k] = args[k];
      return out;
    }
  }
  return args;
}

/**
 * An argument as an error message shows it: strings as they are, anything else as JSON. String()
 * would throw on a JSON object whose `toString` is not a function (`{"toString": 1}`), turning a
 * validation error into a handler failure.
 */
export function describeArgument(value: unknown): string {
  // At most 200 characters of what the client sent come back in an error.
  if (typeof value === 'string') return clipClientInput(value);
  if (typeof value === 'object' && value !== null) return clipClientInput(JSON.stringify(value) ?? String(value));
  return clipClientInput(String(value));
}

/**
 * The action of a call: `Missing required 'action' for tool '<t>'. Available: <list>` or `Unknown
 * action '<a>' for tool '<t>'. Available: <list>` otherwise, in the wording clients already match on.
 */
export function requireAction(tool: NativeTool, args: Record<string, unknown>): string {
  const action = args['action'];
  if (typeof action === 'string' && tool.actions.includes(action)) return action;
  // Joined only here: every tools/call passes through this check.
  const list = tool.actions.join(', ');
  if (action === undefined || action === null || action === '') {
    throw new ToolError('invalid_input', `Missing required 'action' for tool '${tool.definition.name}'. Available: ${list}`, { field: 'action' });
  }
  throw new ToolError('invalid_input', `Unknown action '${describeArgument(action)}' for tool '${tool.definition.name}'. Available: ${list}`, {
    field: 'action',
  });
}
