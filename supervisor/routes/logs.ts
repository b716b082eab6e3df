/**
 * GET /logs?limit=0&level&source, POST /logs {level, source, message, data_json}, DELETE /logs
 * (REFERENCE §1.3): the monitoring log ring. Not public: TCP callers authenticate like every other route.
 */
import type { LogRing } from '../logs/logRing.js';
import { parseLogInput, parseLogQuery } from '../logs/logInput.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';

export function logRoutes(ring: LogRing): Route[] {
  const list = (ctx: RequestContext) => {
    const query = parseLogQuery(ctx.query);
    if (!query.ok) throw new HttpError(400, query.error);
    // A bare array, oldest first, as TUICommander answers.
    return json(ring.list(query.value));
  };
  const push = (ctx: RequestContext) => {
    const input = parseLogInput(parseJsonBody(ctx));
    if (!input.ok) throw new HttpError(400, input.error);
    return json({ ok: true, entry: ring.push(input.value) });
  };
  const clear = () => json({ ok: true, cleared: ring.clear() });
  return [
    { method: 'GET', pattern: '/logs', handler: list },
    { method: 'POST', pattern: '/logs', handler: push },
    { method: 'DELETE', pattern: '/logs', handler: clear },
  ];
}
