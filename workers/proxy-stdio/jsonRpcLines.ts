/**
 * Newline-delimited JSON-RPC as the pump speaks it: request lines built around the caller's params
 * bytes (never parsed here), the byte tests for "may this line be an answer, a request to us, or a
 * notification", and our answers to the server's own requests.
 */

/** A JSON-RPC error object as the upstream answered it (normalised to the protocol's schema). */
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A response to one of our requests. */
export interface JsonRpcReply {
  id: number;
  error: JsonRpcError | undefined;
  result: unknown;
}

const ID_KEY = Buffer.from('"id"');
const METHOD_KEY = Buffer.from('"method"');
const UNICODE_ESCAPE = Buffer.from('\\u');
const CLOSE_LINE = Buffer.from('}\n');

/** A request the server sent us (its id is its own, and may equal one of ours). */
export interface ServerRequest {
  id: number | string;
  method: string;
  /** `params` as the server sent it (undefined when absent). */
  params?: unknown;
}

/** A notification the server sent us. */
export interface ServerNotification {
  method: string;
  params?: unknown;
}

/**
 * Cheap pre-check, on the raw bytes, so a flood of notifications and log messages is never
 * JSON.parsed: a response (or a server request, which we must answer) carries an `id` member, and
 * in JSON text that key is the four bytes `"id"` unless one of its letters is written as a `\u`
 * escape (letters have no short escape). A line with neither has no id. UTF-8 keeps ASCII bytes
 * out of multi-byte sequences, so the byte search cannot be fooled by other characters.
 */
export function mayCarryId(line: Buffer): boolean {
  return line.includes(ID_KEY) || line.includes(UNICODE_ESCAPE);
}

/** The same reasoning for `"method"`: a line with neither key (nor an escape) is no JSON-RPC message at all. */
export function mayBeMessage(line: Buffer): boolean {
  return mayCarryId(line) || line.includes(METHOD_KEY);
}

/**
 * A line that is at most a notification (it has `"method"` but cannot carry an id): it goes to the
 * pump's small notification queue, never taking space an answer needs.
 */
export function isNotificationOnly(line: Buffer): boolean {
  return !mayCarryId(line);
}

/**
 * The line as a response to a request of ours (`reply`), a request from the server (`request`), a
 * notification (`notification`), or undefined: not JSON, not an object, or a response whose id is
 * not a number (ours always are).
 */
export function parseIncoming(line: Buffer): { reply: JsonRpcReply } | { request: ServerRequest } | { notification: ServerNotification } | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  if (m.method !== undefined) {
    if (typeof m.method !== 'string') return undefined;
    if (m.id === undefined) return { notification: m.params === undefined ? { method: m.method } : { method: m.method, params: m.params } };
    if (typeof m.id !== 'number' && typeof m.id !== 'string') return undefined;
    return { request: m.params === undefined ? { id: m.id, method: m.method } : { id: m.id, method: m.method, params: m.params } };
  }
  if (typeof m.id !== 'number') return undefined;
  if (m.error !== undefined && m.error !== null) return { reply: { id: m.id, error: normaliseError(m.error), result: undefined } };
  return { reply: { id: m.id, error: undefined, result: m.result === undefined ? null : m.result } };
}

/** Our answer to a server request: `result` (compact JSON bytes; absent = `{}`) or an error. */
export function answerLine(id: number | string, result: Uint8Array | undefined, error?: JsonRpcError): Buffer {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)}`;
  if (error !== undefined) return Buffer.from(`${head},"error":${JSON.stringify(error)}}\n`);
  if (result === undefined) return Buffer.from(`${head},"result":{}}\n`);
  const open = Buffer.from(`${head},"result":`);
  return Buffer.concat([open, result, CLOSE_LINE], open.length + result.length + CLOSE_LINE.length);
}

function normaliseError(raw: unknown): JsonRpcError {
  if (typeof raw !== 'object' || raw === null) return { code: -32603, message: String(raw) };
  const e = raw as Record<string, unknown>;
  const code = typeof e.code === 'number' && Number.isInteger(e.code) ? e.code : -32603;
  const message = typeof e.message === 'string' ? e.message : JSON.stringify(e.message ?? 'upstream error without a message');
  return e.data === undefined ? { code, message } : { code, message, data: e.data };
}

/**
 * `{"jsonrpc":"2.0","id":<id>,"method":<method>[,"params":<params>]}\n`. `params` must be one
 * compact JSON value (JSON.stringify output has no raw newline; a newline would split the frame).
 */
export function requestLine(id: number, method: string, params: Uint8Array | undefined): Buffer {
  return frame(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}`, params);
}

export function notificationLine(method: string, params?: Uint8Array): Buffer {
  return frame(`{"jsonrpc":"2.0","method":${JSON.stringify(method)}`, params);
}

function frame(head: string, params: Uint8Array | undefined): Buffer {
  if (params === undefined) return Buffer.from(`${head}}\n`);
  const open = Buffer.from(`${head},"params":`);
  return Buffer.concat([open, params, CLOSE_LINE], open.length + params.length + CLOSE_LINE.length);
}

/** True when `bytes` holds a raw newline (which would cut a JSON-RPC frame in two). */
export function hasNewline(bytes: Uint8Array): boolean {
  return bytes.indexOf(0x0a) !== -1;
}
