/**
 * GET /logs?limit=0&level&source, POST /logs {level, source, message, data_json}, DELETE /logs: the
 * monitoring log ring clients write to and read back. Not public: TCP callers authenticate like
 * every other route.
 */
import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { LogRing } from '../logs/logRing.js';
import { LogBody, LogEntrySchema, LogQuerySchema, logInputOf, logQueryOf } from '../logs/logSchemas.js';

const TAG = 'logs';

export function logRoutes(ring: LogRing): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/logs',
      tag: TAG,
      summary: 'The log ring, oldest first, filtered by level and source',
      query: LogQuerySchema,
      // A bare array, oldest first, as TUICommander answers.
      answers: { 200: Type.Array(LogEntrySchema, { description: 'Oldest first.' }) },
      handler: ({ query }) => json(ring.list(logQueryOf(query))),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/logs',
      tag: TAG,
      summary: 'Add an entry; one identical to the newest is folded into it (repeat_count)',
      body: LogBody,
      answers: { 200: Type.Object({ ok: Type.Literal(true), entry: LogEntrySchema }) },
      handler: ({ body }) => json({ ok: true, entry: ring.push(logInputOf(body)) }),
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/logs',
      tag: TAG,
      summary: 'Empty the ring; ids keep counting',
      answers: { 200: Type.Object({ ok: Type.Literal(true), cleared: Type.Integer({ minimum: 0, description: 'How many entries went.' }) }) },
      handler: () => json({ ok: true, cleared: ring.clear() }),
    }),
  ];
}
