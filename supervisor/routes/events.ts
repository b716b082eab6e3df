/** GET /events (the SSE bus) and POST /events/types (replace a live stream's filter). */
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import type { EventBus } from '../events/eventBus.js';
import { MAX_TRACKED_STREAMS } from '../events/eventBus.js';
import { EVENT_NAMES, sseEventsSchema } from '../events/eventMap.js';
import { corsHeaders } from '../http/cors.js';
import { defineRoute, defineStreamRoute } from '../http/routeSpec.js';
import { openSse, SSE_KEEP_ALIVE_MS, SSE_RETRY_MS } from '../http/sse.js';
import type { Route } from '../http/types.js';

const TAG = 'events';

const EventsQuery = Type.Object({
  types: Type.Optional(
    Type.String({
      description: 'Comma-separated event names to receive. Absent: every event; present but empty: none (until POST /events/types widens it).',
    }),
  ),
  stream_id: Type.Optional(
    Type.String({
      description: `An id of the client's choosing (a UUID; 1 to 128 printable characters) under which POST /events/types can replace this stream's filter. A reconnect with the same id takes it over; at most ${MAX_TRACKED_STREAMS} are tracked, the oldest forgotten first.`,
    }),
  ),
});

const EventTypesBody = Type.Object({
  stream_id: Type.String({ minLength: 1, description: 'The `stream_id` the stream was opened with.', errorMessage: 'stream_id is required' }),
  types: Type.Union([Type.Array(Type.String({ errorMessage: 'types must be an array of strings' })), Type.Null()], {
    description: 'The new filter: the event names to receive; `[]` none, `null` every event.',
    errorMessage: 'types must be an array of strings',
  }),
});

const STREAM_DESCRIPTION =
  `A \`text/event-stream\` that starts with \`retry: ${SSE_RETRY_MS}\`, then one \`event:\`/\`id:\`/\`data:\` block per event ` +
  `(\`data\` is the payload as JSON), and \`: ping\` every ${SSE_KEEP_ALIVE_MS / 1000} s on a quiet stream. ` +
  'Each event is published once, with one id sequence shared by every subscriber. A subscriber that falls behind ' +
  '(256 events or 1 MiB queued) loses what was queued and gets one `lagged {missed}` notice instead. ' +
  `The events: ${EVENT_NAMES.map((n) => `\`${n}\``).join(', ')}.`;

export function eventRoutes(bus: EventBus): Route[] {
  return [
    defineStreamRoute({
      method: 'GET',
      pattern: '/events',
      tag: TAG,
      summary: 'The event stream (SSE): every event tuicd publishes, or those `types` names',
      description: STREAM_DESCRIPTION,
      query: EventsQuery,
      answers: {
        200: {
          description: 'The event stream; each event is one of these `{event, id, data}` frames.',
          contentType: 'text/event-stream',
          schema: sseEventsSchema(),
        },
        503: { description: 'tuicd is shutting down.', schema: Type.Object({ error: Type.String(), code: Type.Literal('unavailable') }) },
      },
      handler: {
        stream(res, ctx) {
          const streamId = ctx.query.get('stream_id');
          const headers = corsHeaders(ctx.listener, ctx.headers['origin']);
          const types = ctx.query.has('types') ? ctx.query.get('types') : null;
          return openSse(res, { types, ...(streamId ? { streamId } : {}), headers }, bus);
        },
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/events/types',
      tag: TAG,
      summary: "Replace a live stream's filter (by the `stream_id` it was opened with)",
      body: EventTypesBody,
      answers: {
        204: null,
        404: {
          description: 'No live stream has that `stream_id`.',
          schema: Type.Object({ error: Type.Literal('Stream not found'), code: Type.Literal('not_found') }),
        },
      },
      handler: ({ body }) => {
        if (!bus.setStreamFilter(body.stream_id, body.types)) throw new ApiError('not_found', 'Stream not found');
        return { status: 204 };
      },
    }),
  ];
}
