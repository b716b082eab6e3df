/** GET /progress/list?project=&limit= — the progress journal, newest first, for a human or a client to read. */
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { ProgressJournal } from '../progress/progressJournal.js';
import { ProgressListQuery, ProgressPageSchema } from '../progress/progressSchemas.js';

export function progressRoutes(journal: ProgressJournal): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/progress/list',
      tag: 'progress',
      summary: 'What agents reported (done, blocked) and what tuicd observed, newest first',
      query: ProgressListQuery,
      answers: { 200: ProgressPageSchema },
      handler: async ({ query }) => {
        const page = await journal.list({ ...(query.limit ? { limit: Number(query.limit) } : {}), ...(query.project ? { project: query.project } : {}) });
        return json(page);
      },
    }),
  ];
}
