/**
 * Questions about what a session's terminal shows now, answered by the pty host's screen model:
 * the logical line under a row (its auto-wrapped rows joined), a selection's text, the OSC 8
 * hyperlink under a cell. Rows count from the top of the screen (0) unless `historyBase` says where
 * the caller's numbering puts that row; rows no longer on the screen are refused (409).
 */
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { defineRoute } from '../http/routeSpec.js';
import { bareJson } from '../http/types.js';
import type { Route } from '../http/types.js';
import { nonNegative, SessionRefParams } from '../sessions/sessionSchemas.js';
import type { SessionService } from '../sessions/sessionService.js';

const TAG = 'sessions';
const NOT_RETAINED = 'selection rows are no longer retained';

const historyBase = nonNegative(
  'historyBase',
  '',
  "The caller's number for the screen's top row (rows above it have scrolled away); default 0: rows are screen rows.",
);

/** A row in the caller's numbering, as a screen row; refused when it lies above the screen. */
function screenRow(row: number, base: number): number {
  if (row < base) throw new ApiError('conflict', NOT_RETAINED);
  return row - base;
}

export function sessionTerminalRoutes(sessions: SessionService): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/terminal/logical-line',
      tag: TAG,
      summary: 'The logical line a screen row belongs to: `[logicalStartRow, text]`, its auto-wrapped rows joined (redacted)',
      params: SessionRefParams,
      query: Type.Object({ row: nonNegative('row'), historyBase: Type.Optional(historyBase) }),
      answers: { 200: Type.Tuple([Type.Integer({ minimum: 0 }), Type.String()]) },
      handler: async ({ params, query }) => {
        const base = query.historyBase ?? 0;
        const a = await sessions.screenQuery(params.id, { kind: 'logical_line', row: screenRow(query.row, base) });
        if (a.retained === false) throw new ApiError('conflict', NOT_RETAINED);
        return bareJson([a.start_row! + base, a.text!]);
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/terminal/selection-text',
      tag: TAG,
      summary: 'The text from (startRow, startCol) up to, not including, (endRow, endCol) (redacted)',
      description: 'Rows joined by newlines except where the terminal wrapped a line; trailing blanks dropped. 409 when a row is no longer on the screen.',
      params: SessionRefParams,
      query: Type.Object({
        startRow: nonNegative('startRow'),
        startCol: nonNegative('startCol'),
        endRow: nonNegative('endRow'),
        endCol: nonNegative('endCol'),
        historyBase: Type.Optional(historyBase),
      }),
      answers: { 200: Type.Object({ text: Type.String() }) },
      handler: async ({ params, query }) => {
        const base = query.historyBase ?? 0;
        const a = await sessions.screenQuery(params.id, {
          kind: 'selection',
          start_row: screenRow(query.startRow, base),
          start_col: query.startCol,
          end_row: screenRow(query.endRow, base),
          end_col: query.endCol,
        });
        if (a.retained === false) throw new ApiError('conflict', NOT_RETAINED);
        return bareJson({ text: a.text! });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/terminal/hyperlink-span',
      tag: TAG,
      summary: 'The OSC 8 hyperlink under a cell: `[startCol, endCol, url]` (endCol inclusive), or null',
      params: SessionRefParams,
      query: Type.Object({ row: nonNegative('row'), col: nonNegative('col'), historyBase: Type.Optional(historyBase) }),
      answers: { 200: Type.Union([Type.Tuple([Type.Integer({ minimum: 0 }), Type.Integer({ minimum: 0 }), Type.String()]), Type.Null()]) },
      handler: async ({ params, query }) => {
        const base = query.historyBase ?? 0;
        if (query.row < base) return bareJson(null);
        const { link } = await sessions.screenQuery(params.id, { kind: 'hyperlink', row: query.row - base, col: query.col });
        return bareJson(link ? [link.start_col, link.end_col, link.url] : null);
      },
    }),
  ];
}
