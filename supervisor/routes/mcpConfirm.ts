/**
 * POST /mcp/confirm-response {request_id, confirmed}: a client answers a pending `ui action=confirm`.
 * Open to the socket and to authenticated TCP (the HTTP layer authenticates); the first answer wins.
 * REFERENCE §5: `{ok:true}`, and answers to unknown or already answered ids are ignored, not refused:
 * two viewers answering the same prompt is a normal race. `ignored` says why an answer changed nothing.
 */
import type { ConfirmBroker } from '../mcp/confirmBroker.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';

export function mcpConfirmRoutes(broker: ConfirmBroker): Route[] {
  const answer = (ctx: RequestContext) => {
    const body = parseJsonBody<Record<string, unknown>>(ctx);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'body must be a JSON object {request_id, confirmed}');
    const requestId = body['request_id'];
    const confirmed = body['confirmed'];
    if (typeof requestId !== 'string' || requestId === '') throw new HttpError(400, 'request_id is required (the id from the mcp-confirm event)');
    if (typeof confirmed !== 'boolean') throw new HttpError(400, `confirmed must be a boolean, got ${JSON.stringify(confirmed ?? null)}`);
    switch (broker.answer(requestId, confirmed)) {
      case 'accepted':
        return json({ ok: true });
      case 'already_answered':
        return json({ ok: true, ignored: 'already_answered', message: `confirm request ${requestId} was already resolved; only the first answer counts` });
      case 'unknown':
        return json({ ok: true, ignored: 'unknown', message: `no pending confirm request ${requestId}` });
    }
  };
  return [{ method: 'POST', pattern: '/mcp/confirm-response', handler: answer }];
}
