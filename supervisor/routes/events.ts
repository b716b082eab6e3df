/** GET /events (the SSE bus) and POST /events/types (replace a live stream's filter). */
import type { EventBus } from '../events/eventBus.js';
import { corsHeaders } from '../http/cors.js';
import { applyEventTypesRequest, openSse } from '../http/sse.js';
import type { RequestContext, Route } from '../http/types.js';

export function eventRoutes(bus: EventBus): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/events',
      handler: {
        stream(res, ctx) {
          const streamId = ctx.query.get('stream_id');
          const headers = corsHeaders(ctx.listener, ctx.headers['origin']);
          openSse(res, { types: ctx.query.has('types') ? ctx.query.get('types') : null, ...(streamId ? { streamId } : {}), headers }, bus);
        },
      },
    },
    {
      method: 'POST',
      pattern: '/events/types',
      handler: (ctx: RequestContext) => {
        const result = applyEventTypesRequest(bus, ctx.body);
        return result.body === undefined
          ? { status: result.status }
          : { status: result.status, headers: { 'Content-Type': 'application/json' }, body: result.body };
      },
    },
  ];
}
