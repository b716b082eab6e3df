/** The HTTP edge of the error model: an ApiError's code decides the status, once, here. */
import { ApiError, type ApiErrorCode } from '../../shared/apiError.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';
import type { Reply } from './types.js';

/** An error message longer than this is cut (with the count of what was left out). */
const MAX_ERROR_MESSAGE_CHARS = 2000;

export const STATUS_OF_CODE: Readonly<Record<ApiErrorCode, number>> = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  timeout: 408,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  busy: 429,
  internal: 500,
  not_implemented: 501,
  bad_gateway: 502,
  unavailable: 503,
  upstream_timeout: 504,
  capability_unavailable: 501,
  transport_closed: 410,
  unsupported_protocol: 502,
  initialization_failed: 502,
  agent_error: 502,
  protocol_violation: 502,
};

/** Several codes share a status (the ACP ones): the general code listed first stands for it. */
const CODE_OF_STATUS = new Map<number, ApiErrorCode>();
for (const [code, status] of Object.entries(STATUS_OF_CODE)) if (!CODE_OF_STATUS.has(status)) CODE_OF_STATUS.set(status, code as ApiErrorCode);

/** The code an HTTP status stands for (statuses outside the table: `internal` for 5xx, else `invalid_input`). */
export function codeOfStatus(status: number): ApiErrorCode {
  return CODE_OF_STATUS.get(status) ?? (status >= 500 ? 'internal' : 'invalid_input');
}

/** `{error, code, ...extra}` with the code's status; Retry-After when the error knows one. */
export function apiErrorReply(err: ApiError): Reply {
  let headers: Record<string, string> | undefined = err.headers ? { ...err.headers } : undefined;
  if (err.retryAfterS !== undefined) headers = { ...headers, 'Retry-After': String(err.retryAfterS) };
  // Messages quote client input clipped at the source; this bounds any that a new one forgets.
  // `error` and `code` first for a reader, and never overridden by extra fields.
  const body = { error: '', code: err.code, ...err.extra };
  body.error = clipClientInput(err.message, MAX_ERROR_MESSAGE_CHARS);
  body.code = err.code;
  return headers ? { status: STATUS_OF_CODE[err.code], headers, body } : { status: STATUS_OF_CODE[err.code], body };
}

/** An error answer the server itself makes (404, 405, 413…): the same shape as a thrown one. */
export function errorReply(code: ApiErrorCode, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>): Reply {
  return apiErrorReply(new ApiError(code, message, { ...(extra ? { extra } : {}), ...(headers ? { headers } : {}) }));
}
