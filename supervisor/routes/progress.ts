/** GET /progress/list?project=&limit= — the progress journal, newest first, for a human or a client to read. */
import { ProgressConstants } from '../progress/progressJournal.js';
import type { ProgressJournal } from '../progress/progressJournal.js';
import { HttpError, json } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';

function parseLimit(raw: string | null): number {
  if (raw === null || raw === '') return ProgressConstants.LIST_DEFAULT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > ProgressConstants.LIST_MAX) {
    throw new HttpError(400, `limit must be an integer between 1 and ${ProgressConstants.LIST_MAX}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

export function progressRoutes(journal: ProgressJournal): Route[] {
  const list = async (ctx: RequestContext) => {
    const limit = parseLimit(ctx.query.get('limit'));
    const project = ctx.query.get('project');
    const page = await journal.list({ limit, ...(project ? { project } : {}) });
    return json(page);
  };
  return [{ method: 'GET', pattern: '/progress/list', handler: list }];
}
