/**
 * The contract every native MCP tool implements (issue #4). A tool is declared once: its actions
 * (name → one-line doc), its typebox input schema and its handler. The action constant, the
 * schema's `action` enum and the description's action lines are all generated from that one
 * declaration by `defineTool`, so they cannot drift.
 */
import { Type } from 'typebox';
import type { TObject, TProperties, TSchema } from 'typebox';

import type { Cancellation } from '../../../shared/cancellation.js';
import type { ListenerKind } from '../../http/types.js';
import type { RawToolResult } from '../../../shared/mcpEnvelope.js';
import { clipClientInput } from '../../../shared/quoteClientInput.js';

/** Who is calling: copied from the HTTP request and the MCP protocol session before dispatch. */
export interface CallerContext {
  /** True on the unix socket, and on TCP only for a loopback peer. */
  readonly isLoopback: boolean;
  readonly listener: ListenerKind;
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
}

/**
 * A failure the caller should read: becomes `{"error": message, ...extra}` with isError true.
 * Anything else a handler throws is a bug, reported as a tool error naming the tool.
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ToolError';
  }
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
  /** Properties other than `action`. */
  properties: P;
  /** Required properties other than `action` (which is always required when actions exist). */
  required?: readonly (keyof P & string)[];
  _meta?: Record<string, unknown>;
  handler: ToolHandler;
}

/** The line format of an action in a description; the drift test parses it back. */
export const ACTION_LINE = (name: string, doc: string): string => `- ${name}: ${doc}`;

/** Builds a NativeTool from one declaration: constant, schema enum and description lines agree by construction. */
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
  const schema: TObject = Type.Object(properties as TProperties);
  const inputSchema: Record<string, unknown> = { type: 'object', properties: JSON.parse(JSON.stringify(schema.properties)) };
  if (required.length > 0) inputSchema['required'] = required;

  const parts = [decl.summary.trim()];
  if (actions.length > 0) parts.push(`Actions:\n${actions.map((a) => ACTION_LINE(a, decl.actions![a]!)).join('\n')}`);
  if (decl.notes) parts.push(decl.notes.trim());
  const definition: ToolDefinition = { name: decl.name, description: parts.join('\n\n'), inputSchema };
  if (decl._meta) definition._meta = decl._meta;
  return { definition, actions, handler: decl.handler };
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

/** `Unknown action '<a>' for tool '<t>'. Available: <list>` / missing action, as the spec words them. */
export function requireAction(tool: NativeTool, args: Record<string, unknown>): string {
  const action = args['action'];
  const list = tool.actions.join(', ');
  if (action === undefined || action === null || action === '') {
    throw new ToolError(`Missing required 'action' for tool '${tool.definition.name}'. Available: ${list}`);
  }
  if (typeof action !== 'string' || !tool.actions.includes(action)) {
    throw new ToolError(`Unknown action '${describeArgument(action)}' for tool '${tool.definition.name}'. Available: ${list}`);
  }
  return action;
}
