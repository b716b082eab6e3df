/** The session REST surface (REFERENCE §1.1): list, create, write, resize, pause/resume, output, shell family/state, close. */
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';
import { sessionInfo } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';
import { shellFamily } from '../sessions/shellFamily.js';
import { trimTrailingEmpty } from '../sessions/screenRows.js';

/** Default bytes for a raw output read, as the spec's system answers. */
const RAW_DEFAULT_LIMIT_BYTES = 8192;
/** Default lines for text/log reads. */
const LOG_DEFAULT_LIMIT_LINES = 200;
const LOG_MAX_LIMIT_LINES = 10_000;

function intParam(ctx: RequestContext, name: string, max?: number): number | undefined {
  const raw = ctx.query.get(name);
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new HttpError(400, `${name} must be a non-negative integer, got ${raw}`);
  return max !== undefined ? Math.min(n, max) : n;
}

/** A JSON object body; `null`, arrays and scalars are the caller's mistake (400), not a handler crash. */
function objectBody<T extends object>(ctx: RequestContext): Partial<T> {
  const body = parseJsonBody<unknown>(ctx);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'body must be a JSON object');
  return body as Partial<T>;
}

export function sessionRoutes(sessions: SessionService): Route[] {
  const id = (ctx: RequestContext) => ctx.params['id']!;

  const output = async (ctx: RequestContext) => {
    const record = sessions.get(id(ctx));
    const format = ctx.query.get('format') ?? 'raw';
    const exitFields = record.exit && record.exit.exit_code !== null ? { exit_code: record.exit.exit_code } : {};
    if (format === 'raw') {
      const limit = intParam(ctx, 'limit') ?? RAW_DEFAULT_LIMIT_BYTES;
      const offset = intParam(ctx, 'offset');
      const r = await sessions.readRaw(record.session_id, offset, offset === undefined ? limit : undefined);
      const bytes = offset === undefined ? r.bytes : r.bytes.subarray(0, limit);
      const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
      return json({ data, data_length: bytes.byteLength, offset: r.start, total_written: r.total_written, ...exitFields });
    }
    if (format === 'text') {
      // One grid snapshot (REFERENCE §1.1): rows are the unit of limit/offset and total_written; tail without offset.
      const screen = await sessions.readScreen(record.session_id);
      const total = screen.rows.length;
      const limit = intParam(ctx, 'limit', LOG_MAX_LIMIT_LINES) ?? LOG_DEFAULT_LIMIT_LINES;
      const offsetParam = intParam(ctx, 'offset');
      const offset = offsetParam === undefined ? Math.max(0, total - limit) : Math.min(offsetParam, total);
      const data = screen.rows.slice(offset, offset + limit).join('\n');
      const { cursor_row, cursor_col, alt_screen } = screen;
      return json({ data, data_length: data.length, total_written: total, offset, cursor_row, cursor_col, alt_screen, ...exitFields });
    }
    if (format === 'log') {
      const sinceCursor = intParam(ctx, 'since_cursor');
      const offset = sinceCursor ?? intParam(ctx, 'offset');
      const limit = intParam(ctx, 'limit', LOG_MAX_LIMIT_LINES) ?? LOG_DEFAULT_LIMIT_LINES;
      // Both requests go out together; the host answers in order, so the screen is never older than the log.
      const [log, screen] = await Promise.all([
        sessions.readLog(record.session_id, offset, limit),
        sinceCursor === undefined ? sessions.readScreen(record.session_id) : undefined,
      ]);
      const body: Record<string, unknown> = {
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
      // above an agent's input chrome (REFERENCE §1.1): that needs agent detection, which tuicd lacks.
      if (screen !== undefined) body['screen'] = trimTrailingEmpty(screen.rows).map((text) => ({ text }));
      return json(body);
    }
    throw new HttpError(400, `format must be raw, text or log, got ${format}`);
  };

  return [
    { method: 'GET', pattern: '/sessions', handler: () => json(sessions.list().map(sessionInfo) as unknown as object) },
    {
      method: 'POST',
      pattern: '/sessions',
      handler: async (ctx) => {
        const body = ctx.body.length === 0 ? {} : objectBody<Record<string, unknown>>(ctx);
        const record = await sessions.create(body);
        return json({ session_id: record.session_id, alias: record.alias, tuic_session: record.tuic_session, pid: record.pid }, 201);
      },
    },
    {
      method: 'POST',
      pattern: '/sessions/:id/write',
      handler: async (ctx) => {
        const body = objectBody<{ data: unknown }>(ctx);
        if (typeof body.data !== 'string') throw new HttpError(400, 'data must be a string');
        await sessions.write(id(ctx), Buffer.from(body.data, 'utf8'));
        return json({ ok: true });
      },
    },
    {
      method: 'POST',
      pattern: '/sessions/:id/resize',
      handler: async (ctx) => {
        const body = objectBody<{ rows: unknown; cols: unknown }>(ctx);
        await sessions.resize(id(ctx), body.rows, body.cols);
        return json({ ok: true });
      },
    },
    { method: 'POST', pattern: '/sessions/:id/pause', handler: async (ctx) => (await sessions.setPaused(id(ctx), true), json({ ok: true })) },
    { method: 'POST', pattern: '/sessions/:id/resume', handler: async (ctx) => (await sessions.setPaused(id(ctx), false), json({ ok: true })) },
    { method: 'GET', pattern: '/sessions/:id/output', handler: output },
    {
      method: 'GET',
      pattern: '/sessions/:id/shell-family',
      // Bare JSON value, not wrapped; an unknown session is null (REFERENCE §1.1).
      handler: (ctx) => {
        const r = sessions.resolve(id(ctx));
        return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(r ? shellFamily(r.shell) : null) };
      },
    },
    { method: 'GET', pattern: '/sessions/:id/shell-state', handler: (ctx) => json({ state: sessions.get(id(ctx)).shell_state }) },
    { method: 'GET', pattern: '/sessions/:id/last-prompt', handler: (ctx) => json({ prompt: sessions.get(id(ctx)).last_prompt }) },
    { method: 'DELETE', pattern: '/sessions/:id', handler: async (ctx) => (await sessions.close(id(ctx)), json({ ok: true })) },
  ];
}
