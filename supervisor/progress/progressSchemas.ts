/** The wire shapes of GET /progress/list: its query and the page it answers. */
import { Type } from 'typebox';

import { PROGRESS_KINDS, ProgressConstants } from './progressJournal.js';

/** 1..LIST_MAX (100) as query text: one or two digits without a leading zero, or 100; empty means the default. */
const LIMIT_PATTERN = `^([1-9][0-9]?|${ProgressConstants.LIST_MAX})?$`;

export const ProgressListQuery = Type.Object({
  project: Type.Optional(Type.String({ description: 'Only this project (a repo path, or "unknown"); absent or empty: every project.' })),
  limit: Type.Optional(
    Type.String({
      pattern: LIMIT_PATTERN,
      description: `Entries per page, 1 to ${ProgressConstants.LIST_MAX} (default ${ProgressConstants.LIST_DEFAULT}; empty: the default).`,
      errorMessage: `limit must be an integer between 1 and ${ProgressConstants.LIST_MAX}, got {quoted}`,
    }),
  ),
});

export const ProgressEntrySchema = Type.Object({
  id: Type.String(),
  at_ms: Type.Number(),
  kind: Type.Enum(PROGRESS_KINDS),
  project: Type.String({ description: 'The repo path the report belongs to, or "unknown".' }),
  agent: Type.String({ description: 'Who reported: a tuic_session or an MCP client name.' }),
  text: Type.String(),
  step: Type.Optional(Type.String()),
  session_id: Type.Optional(Type.String({ description: 'The PTY the reporter runs in, when it is one of ours.' })),
});

export const ProgressPageSchema = Type.Object({
  entries: Type.Array(ProgressEntrySchema, { description: 'Newest first.' }),
  total: Type.Integer({ minimum: 0, description: 'Entries matching the filter, all pages.' }),
});
