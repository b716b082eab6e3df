/** The session REST surface: list, create, write, resize, pause/resume, output, shell family/state, close. */
import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { sessionInfo } from '../sessions/sessionRecord.js';
import {
  CreateSessionBody,
  CreatedSessionSchema,
  OkAnswer,
  OutputAnswer,
  OutputQuery,
  ResizeBody,
  SessionInfoSchema,
  SessionRefParams,
  WriteBody,
} from '../sessions/sessionSchemas.js';
import type { SessionService } from '../sessions/sessionService.js';
import { shellFamily } from '../sessions/shellFamily.js';
import { trimTrailingEmpty } from '../sessions/screenRows.js';

const TAG = 'sessions';

/** Default bytes for a raw output read. */
const RAW_DEFAULT_LIMIT_BYTES = 8192;
/** Default lines for text/log reads. */
const LOG_DEFAULT_LIMIT_LINES = 200;
const LOG_MAX_LIMIT_LINES = 10_000;

const atMost = (n: number | undefined, max: number): number | undefined => (n === undefined ? undefined : Math.min(n, max));

export function sessionRoutes(sessions: SessionService): Route[] {
  const output = defineRoute({
    method: 'GET',
    pattern: '/sessions/:id/output',
    tag: TAG,
    summary: "A session's output: raw ring bytes, the screen as text, or stripped scrollback lines",
    description:
      '`raw`: `limit` bytes (default 8192) from `offset`, or the last `limit` without one. `text`: one screen snapshot, rows as the unit of ' +
      '`limit`/`offset` (default: the last 200). `log`: scrollback lines from `offset` (or `since_cursor` for a delta read without the screen), at most 10,000.',
    params: SessionRefParams,
    query: OutputQuery,
    answers: { 200: OutputAnswer },
    handler: async ({ params, query }) => {
      const record = sessions.get(params.id);
      const exitFields = record.exit && record.exit.exit_code !== null ? { exit_code: record.exit.exit_code } : {};
      const format = query.format ?? 'raw';
      if (format === 'raw') {
        const limit = query.limit ?? RAW_DEFAULT_LIMIT_BYTES;
        const offset = query.offset;
        const r = await sessions.readRaw(record.session_id, offset, offset === undefined ? limit : undefined);
        const bytes = offset === undefined ? r.bytes : r.bytes.subarray(0, limit);
        const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
        return json({ data, data_length: bytes.byteLength, offset: r.start, total_written: r.total_written, ...exitFields });
      }
      if (format === 'text') {
        // One grid snapshot: rows are the unit of limit/offset and total_written; the tail without an offset.
        const screen = await sessions.readScreen(record.session_id);
        const total = screen.rows.length;
        const limit = atMost(query.limit, LOG_MAX_LIMIT_LINES) ?? LOG_DEFAULT_LIMIT_LINES;
        const offset = query.offset === undefined ? Math.max(0, total - limit) : Math.min(query.offset, total);
        const data = screen.rows.slice(offset, offset + limit).join('\n');
        const { cursor_row, cursor_col, alt_screen } = screen;
        return json({ data, data_length: data.length, total_written: total, offset, cursor_row, cursor_col, alt_screen, ...exitFields });
      }
      const sinceCursor = query.since_cursor;
      const offset = sinceCursor ?? query.offset;
      const limit = atMost(query.limit, LOG_MAX_LIMIT_LINES) ?? LOG_DEFAULT_LIMIT_LINES;
      // Both requests go out together; the host answers in order, so the screen is never older than the log.
      const [log, screen] = await Promise.all([
        sessions.readLog(record.session_id, offset, limit),
        sinceCursor === undefined ? sessions.readScreen(record.session_id) : undefined,
      ]);
      const answer: Record<string, unknown> = {
        lines: log.lines.map((text) => ({ text })),
        offset: log.offset,
        total_lines: log.total_lines,
        oldest_offset: log.oldest_offset,
        // Where the next delta read starts: right after the last line returned. A read capped by
        // `limit` must not jump to total_lines, or the lines between would never be read.
        cursor: log.offset + log.lines.length,
        ...exitFields,
      };
      // Delta reads (since_cursor) return only new scrollback, no screen rows. The screen is not trimmed
      // above an agent's input chrome: that needs agent detection of the chrome, which tuicd lacks.
      if (screen !== undefined) answer['screen'] = trimTrailingEmpty(screen.rows).map((text) => ({ text }));
      return json(answer);
    },
  });

  return [
    defineRoute({
      method: 'GET',
      pattern: '/sessions',
      tag: TAG,
      summary: 'Live sessions, and exited ones kept open',
      answers: { 200: Type.Array(SessionInfoSchema) },
      handler: () => json(sessions.list().map((r) => sessionInfo(r, sessions.isStandby(r)))),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/sessions',
      tag: TAG,
      summary: 'Start a session (a shell, or `shell` with `args`) in `cwd`',
      description: 'Every field is optional: `{}` (or no body) starts the default shell in the home directory, 24×80.',
      body: CreateSessionBody,
      emptyBody: {},
      answers: { 201: CreatedSessionSchema },
      handler: async ({ body }) => {
        const record = await sessions.create(body);
        return json({ session_id: record.session_id, alias: record.alias, tuic_session: record.tuic_session, pid: record.pid }, 201);
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/write',
      tag: TAG,
      summary: 'Type text into a session',
      params: SessionRefParams,
      body: WriteBody,
      answers: { 200: OkAnswer },
      handler: async ({ params, body }) => {
        await sessions.write(params.id, Buffer.from(body.data, 'utf8'));
        return json({ ok: true });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/resize',
      tag: TAG,
      summary: "Resize a session's terminal",
      params: SessionRefParams,
      body: ResizeBody,
      answers: { 200: OkAnswer },
      handler: async ({ params, body }) => {
        await sessions.resize(params.id, body.rows, body.cols);
        return json({ ok: true });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/pause',
      tag: TAG,
      summary: "Stop reading a session's output (flow control)",
      params: SessionRefParams,
      answers: { 200: OkAnswer },
      handler: async ({ params }) => (await sessions.setPaused(params.id, true), json({ ok: true })),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/resume',
      tag: TAG,
      summary: "Read a paused session's output again",
      params: SessionRefParams,
      answers: { 200: OkAnswer },
      handler: async ({ params }) => (await sessions.setPaused(params.id, false), json({ ok: true })),
    }),
    output,
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/shell-family',
      tag: TAG,
      summary: 'The session shell\'s family: a bare JSON string (`"posix"`, `"fish"`…), or null for an unknown session',
      params: SessionRefParams,
      answers: { 200: Type.Union([Type.String(), Type.Null()]) },
      // A bare JSON value, not wrapped; an unknown session is null rather than 404.
      handler: ({ params }) => {
        const r = sessions.resolve(params.id);
        return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(r ? shellFamily(r.shell) : null) };
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/shell-state',
      tag: TAG,
      summary: 'Whether the shell is running a command (busy) or at its prompt (idle); null before the first prompt',
      params: SessionRefParams,
      answers: { 200: Type.Object({ state: Type.Union([Type.Literal('busy'), Type.Literal('idle'), Type.Null()]) }) },
      handler: ({ params }) => json({ state: sessions.get(params.id).shell_state }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/last-prompt',
      tag: TAG,
      summary: 'The last line of ten or more words typed into the session',
      params: SessionRefParams,
      answers: { 200: Type.Object({ prompt: Type.Union([Type.String(), Type.Null()]) }) },
      handler: ({ params }) => json({ prompt: sessions.get(params.id).last_prompt }),
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/sessions/:id',
      tag: TAG,
      summary: 'Close a session: Ctrl-C, then a hang-up to its process group',
      params: SessionRefParams,
      answers: { 200: OkAnswer },
      handler: async ({ params }) => (await sessions.close(params.id), json({ ok: true })),
    }),
  ];
}
