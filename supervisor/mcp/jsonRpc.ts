/**
 * JSON-RPC 2.0 for POST /mcp: one message per request, or a batch (an array, which only MCP
 * 2025-03-26 allows; the transport decides), parsed and validated once, and response builders
 * that splice pre-serialized results. Every error carries `data.code`, the code of tuicd's error
 * model, beside its JSON-RPC number.
 */
import type { ApiErrorCode } from '../../shared/apiError.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../../shared/jsonDepth.js';
import { JsonRpcCode } from '../../shared/jsonRpcCodes.js';

/** Re-exported: the transport and the /mcp routes read the codes from here. */
export { JsonRpcCode };

/**
 * The error-model code each JSON-RPC error stands for (`error.data.code`). SERVER_ERROR is the
 * transport refusing a malformed request (a bad session or version header, a missing session id);
 * a refusal of another kind names its own.
 */
const API_CODE_OF: Readonly<Record<number, ApiErrorCode>> = {
  [JsonRpcCode.PARSE_ERROR]: 'invalid_input',
  [JsonRpcCode.INVALID_REQUEST]: 'invalid_input',
  [JsonRpcCode.METHOD_NOT_FOUND]: 'not_found',
  [JsonRpcCode.INVALID_PARAMS]: 'invalid_input',
  [JsonRpcCode.INTERNAL_ERROR]: 'internal',
  [JsonRpcCode.SERVER_ERROR]: 'invalid_input',
  [JsonRpcCode.URL_ELICITATION_REQUIRED]: 'unauthorized',
};

export type JsonRpcId = string | number;

/** A request (has an id) or a notification (no id). */
export interface JsonRpcCall {
  kind: 'request' | 'notification';
  /** Absent for notifications. */
  id?: JsonRpcId;
  method: string;
  params: Record<string, unknown> | undefined;
}

/** A client's answer to a request we sent it (an upstream's sampling, elicitation or roots request). */
export interface JsonRpcClientResponse {
  kind: 'response';
  id: JsonRpcId | null;
  /** `result` as sent (present when the answer is a success). */
  result?: unknown;
  /** `error` as sent (present when the answer is an error). */
  error?: unknown;
}

/** A message that cannot be served: the error to send and the HTTP status the SDK would use. */
export interface JsonRpcRejection {
  kind: 'invalid';
  status: number;
  /** Echoed when the message had a usable id. */
  id: JsonRpcId | null;
  code: number;
  message: string;
}

export type ParsedMessage = JsonRpcCall | JsonRpcClientResponse | JsonRpcRejection;

/** A JSON array body: each entry validated on its own (an invalid entry is answered in the batch). */
export interface JsonRpcBatch {
  kind: 'batch';
  messages: ParsedMessage[];
}

export type ParsedBody = ParsedMessage | JsonRpcBatch;

/** Messages one batch may carry; a longer one is refused whole with 400. */
export const MAX_BATCH_MESSAGES = 100;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function invalid(id: JsonRpcId | null, code: number, message: string, status = 400): JsonRpcRejection {
  return { kind: 'invalid', status, id, code, message };
}

/**
 * Parses one POST body. Transport-level failures (bad JSON, not a JSON-RPC object, an empty or
 * oversized batch) answer 400 as the SDK's server does; method-level failures (unknown method, bad
 * params) are the dispatcher's and answer 200. An array comes back as a batch of messages, each
 * validated as a single body would be; whether the request may batch is the transport's call.
 */
export function parseBody(body: Buffer | string): ParsedBody {
  let value: unknown;
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH))
    return invalid(null, JsonRpcCode.PARSE_ERROR, `Parse error: the body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    value = JSON.parse(text);
  } catch (err) {
    // V8 quotes a few characters of the input; the bound holds whatever the engine does.
    return invalid(null, JsonRpcCode.PARSE_ERROR, `Parse error: ${clipClientInput((err as Error).message)}`);
  }
  if (!Array.isArray(value)) return validateMessage(value);
  if (value.length === 0) return invalid(null, JsonRpcCode.INVALID_REQUEST, 'Invalid Request: an empty batch (a JSON array needs at least one message)');
  if (value.length > MAX_BATCH_MESSAGES) {
    return invalid(null, JsonRpcCode.INVALID_REQUEST, `Invalid Request: a batch of ${value.length} messages; the limit is ${MAX_BATCH_MESSAGES}`);
  }
  return { kind: 'batch', messages: value.map(validateMessage) };
}

/** One JSON-RPC message, already parsed from JSON. */
export function validateMessage(value: unknown): ParsedMessage {
  if (!isPlainObject(value)) return invalid(null, JsonRpcCode.INVALID_REQUEST, 'Invalid Request: a message must be a JSON-RPC 2.0 object');

  const hasId = Object.hasOwn(value, 'id');
  const rawId = value['id'];
  if (hasId && rawId !== null && !validId(rawId)) {
    return invalid(null, JsonRpcCode.INVALID_REQUEST, "Invalid Request: 'id' must be a string or a number");
  }
  const id = validId(rawId) ? rawId : null;
  if (value['jsonrpc'] !== '2.0') return invalid(id, JsonRpcCode.INVALID_REQUEST, 'Invalid Request: \'jsonrpc\' must be "2.0"');

  const method = value['method'];
  if (method === undefined && hasId && ('result' in value || 'error' in value))
    return 'error' in value ? { kind: 'response', id, error: value['error'] } : { kind: 'response', id, result: value['result'] };
  if (typeof method !== 'string' || method.length === 0) {
    return invalid(id, JsonRpcCode.INVALID_REQUEST, "Invalid Request: 'method' must be a non-empty string");
  }
  // A null id is not a notification and not a usable request id either (MCP forbids it).
  if (hasId && rawId === null) return invalid(null, JsonRpcCode.INVALID_REQUEST, "Invalid Request: 'id' must not be null");

  const params = value['params'];
  if (params !== undefined && !isPlainObject(params)) {
    // By-position params exist in JSON-RPC but no MCP method takes them.
    return hasId
      ? invalid(id, JsonRpcCode.INVALID_PARAMS, "Invalid params: 'params' must be an object", 200)
      : invalid(null, JsonRpcCode.INVALID_REQUEST, "Invalid Request: 'params' must be an object");
  }
  if (!hasId) return { kind: 'notification', method, params };
  return { kind: 'request', id: id!, method, params };
}

const ID_NULL = 'null';

function idJson(id: JsonRpcId | null | undefined): string {
  return id === null || id === undefined ? ID_NULL : JSON.stringify(id);
}

/** `{"jsonrpc":"2.0","id":…,"result":<resultJson>}` without re-serializing a cached result. */
export function resultResponse(id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${idJson(id)},"result":${resultJson}}`;
}

/**
 * A response whose result is already encoded and ends with the envelope's closing `}` (the catalog
 * caches its lists that way): two parts, written in order without joining, so a 150 KB list is
 * neither copied per request nor followed by a one-byte write.
 */
export function resultResponseParts(id: JsonRpcId, resultAndEnd: Buffer): Buffer[] {
  return [Buffer.from(`{"jsonrpc":"2.0","id":${idJson(id)},"result":`), resultAndEnd];
}

/** An error response; `data` holds `code` (the error model's, from the JSON-RPC code unless `data` names one) and any more fields. */
export function errorResponse(id: JsonRpcId | null | undefined, code: number, message: string, data?: Readonly<Record<string, unknown>>): string {
  const error = { code, message, data: { code: API_CODE_OF[code] ?? 'internal', ...data } };
  return `{"jsonrpc":"2.0","id":${idJson(id)},"error":${JSON.stringify(error)}}`;
}

/** A server-to-client notification, as written on a GET /mcp stream. */
export function notificationJson(method: string, params?: Record<string, unknown>): string {
  return params === undefined ? JSON.stringify({ jsonrpc: '2.0', method }) : JSON.stringify({ jsonrpc: '2.0', method, params });
}
