/**
 * Errors of the ACP routes: an ApiError whose body carries what a client of an ACP connection needs
 * to decide what to do next — `{code, message, connectionId, sessionId, operation, retryable}` —
 * and the one place an agent's failure (its JSON-RPC error, a closed pipe, a malformed answer) is
 * sorted into a code.
 */
import { RequestError } from '@agentclientprotocol/sdk';

import { ApiError, type ApiErrorCode } from '../../shared/apiError.js';

export interface AcpErrorContext {
  connectionId?: string | undefined;
  sessionId?: string | undefined;
  /** What was being done: `initialize`, `session/prompt`, `stream`, a route's verb. */
  operation: string;
}

/** Only these are worth the same call again (after a reconnect, for a closed transport). */
const RETRYABLE: ReadonlySet<ApiErrorCode> = new Set(['transport_closed', 'busy', 'unavailable']);

export function acpError(code: ApiErrorCode, message: string, ctx: AcpErrorContext, more: Record<string, unknown> = {}): ApiError {
  return new ApiError(code, message, {
    extra: {
      message,
      connectionId: ctx.connectionId ?? null,
      sessionId: ctx.sessionId ?? null,
      operation: ctx.operation,
      retryable: RETRYABLE.has(code),
      ...more,
    },
  });
}

/** JSON-RPC "method not found": the agent does not serve the method it was asked. */
const METHOD_NOT_FOUND = -32601;

/**
 * What a failed call to the agent means for the caller: an ApiError already made here stays; the
 * agent's own JSON-RPC error is `agent_error` (its code and data kept), a method it does not serve
 * `capability_unavailable`; a call that failed because the connection went away `transport_closed`;
 * anything else the SDK refused (an answer its schema rejects) `protocol_violation`.
 */
export function agentFailure(err: unknown, ctx: AcpErrorContext, transportClosed: boolean): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof RequestError) {
    if (err.code === METHOD_NOT_FOUND)
      return acpError('capability_unavailable', `the agent does not serve ${ctx.operation}: ${err.message}`, ctx, { agentCode: err.code });
    return acpError('agent_error', `the agent refused ${ctx.operation}: ${err.message}`, ctx, {
      agentCode: err.code,
      ...(err.data === undefined ? {} : { agentData: err.data }),
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  if (transportClosed) return acpError('transport_closed', `the agent's connection closed during ${ctx.operation}: ${message}`, ctx);
  return acpError('protocol_violation', `the agent's answer to ${ctx.operation} broke the protocol: ${message}`, ctx);
}
