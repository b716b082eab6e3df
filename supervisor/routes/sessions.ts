/** The session REST surface (REFERENCE §1.1): list, create, write, resize, pause/resume, output, shell family/state, close. */
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';
import { sessionInfo } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';
import { shellFamily } from '../sessions/shellFamily.js';

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
    if (format === 'text' || format === 'log') {
      const sinceCursor = intParam(ctx, 'since_cursor');
      const offset = sinceCursor ?? intParam(ctx, 'offset');
      const limit = intParam(ctx, 'limit', LOG_MAX_LIMIT_LINES) ?? LOG_DEFAULT_LIMIT_LINES;
      const log = await sessions.readLog(record.session_id, offset, limit);
      if (format === 'text') {
        const rows = sinceCursor !== undefined || log.partial === '' ? log.lines : [...log.lines, log.partial];
        const data = rows.join('\n');
        return json({ data, data_length: data.length, total_written: log.total_lines, cursor: log.total_lines, ...exitFields });
      }
      const body: Record<string, unknown> = {
        lines: log.lines.map((text) => ({ text })),
        offset: log.offset,
        total_lines: log.total_lines,
        oldest_offset: log.oldest_offset,
        cursor: log.total_lines,
        ...exitFields,
      };
      // Delta reads (since_cursor) return only new scrollback, no screen rows.
      if (sinceCursor === undefined) body['screen'] = log.partial === '' ? [] : [{ text: log.partial }];
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
        const body = ctx.body.length === 0 ? {} : parseJsonBody<Record<string, unknown>>(ctx);
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'body must be a JSON object');
        const record = await sessions.create(body);
        return json({ session_id: record.session_id, alias: record.alias, tuic_session: record.tuic_session, pid: record.pid }, 201);
      },
    },
    {
      method: 'POST',
      pattern: '/sessions/:id/write',
      handler: async (ctx) => {
        const body = parseJsonBody<{ data?: unknown }>(ctx);
        if (typeof body.data !== 'string') throw new HttpError(400, 'data must be a string');
        await sessions.write(id(ctx), Buffer.from(body.data, 'utf8'));
        return json({ ok: true });
      },
    },
    {
      method: 'POST',
      pattern: '/sessions/:id/resize',
      handler: async (ctx) => {
        const body = parseJsonBody<{ rows?: unknown; cols?: unknown }>(ctx);
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
    { method: 'DELETE', pattern: '/sessions/:id', handler: async (ctx) => (await sessions.close(id(ctx)), json({ ok: true })) },
  ];
}
