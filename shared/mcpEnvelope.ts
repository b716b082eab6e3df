/** MCP tool results (both sides of the hub boundary): the native envelope: compact JSON text in one content item; `isError` when the value has an `error` key. */

export interface CallToolResult {
  content: Array<{ type: 'text'; text: string } | Record<string, unknown>>;
  isError?: boolean;
  structuredContent?: unknown;
  [extension: string]: unknown;
}

/** Wraps a native value; handlers omit absent optional fields themselves (JSON drops only `undefined`). */
export function textEnvelope(value: unknown): CallToolResult {
  const isError = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'error');
  return { content: [{ type: 'text', text: JSON.stringify(value) }], isError };
}

/** True for a value an upstream may return as the JSON-RPC result unchanged: an object with a `content` array. */
export function isCallToolResult(value: unknown): value is CallToolResult {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as { content?: unknown }).content);
}

/**
 * A CallToolResult already serialized (a proxied upstream's own result, passed through): the
 * /mcp transport splices these bytes as the JSON-RPC result instead of parsing and re-encoding.
 */
export class RawToolResult {
  constructor(readonly json: string) {}
}

/** What a tools/call dispatch produces. */
export type ToolCallOutcome = CallToolResult | RawToolResult;

export function serializeToolOutcome(outcome: ToolCallOutcome): string {
  return outcome instanceof RawToolResult ? outcome.json : JSON.stringify(outcome);
}

/** The outcome as an object (tests and rare slow paths; the hot path splices RawToolResult bytes). */
export function toCallToolResult(outcome: ToolCallOutcome): CallToolResult {
  return outcome instanceof RawToolResult ? (JSON.parse(outcome.json) as CallToolResult) : outcome;
}
