/**
 * The wire shapes of /logs: what a client posts and filters by, and the entry it reads back. The
 * schemas check the shape; the one thing they cannot say (data_json holds JSON text) is checked here.
 */
import { Type, type Static } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { LOG_DATA_JSON_MAX_CHARS, LOG_LEVELS, LOG_MESSAGE_MAX_CHARS, LOG_SOURCES } from './logEntry.js';
import type { LogInput, LogQuery } from './logEntry.js';

const LEVEL_LIST = LOG_LEVELS.join(', ');
const SOURCE_LIST = LOG_SOURCES.join(', ');

// Enums, not unions of literals: one `enum` failure names the field, where a union fails once per branch.
export const LogLevelSchema = Type.Enum(LOG_LEVELS, { errorMessage: `level must be one of ${LEVEL_LIST}, got {quoted}` });
export const LogSourceSchema = Type.Enum(LOG_SOURCES, { errorMessage: `source must be one of ${SOURCE_LIST}, got {quoted}` });

/** POST /logs: unknown fields are refused (a misspelt `dataJson` would otherwise drop its value without a word). */
export const LogBody = Type.Object(
  {
    level: LogLevelSchema,
    source: LogSourceSchema,
    message: Type.String({ minLength: 1, maxLength: LOG_MESSAGE_MAX_CHARS }),
    data_json: Type.Optional(
      Type.Union([Type.String({ maxLength: LOG_DATA_JSON_MAX_CHARS }), Type.Null()], {
        description: 'Structured detail as JSON text (JSON.stringify(data)), stored as given; null or absent for none.',
        errorMessage: `data_json must be a string holding JSON text (e.g. JSON.stringify(data)) of at most ${LOG_DATA_JSON_MAX_CHARS} characters, or null`,
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * GET /logs filters. Query text, an empty value meaning no filter: `limit` is therefore digits (or
 * nothing) rather than an integer, and the filters allow "".
 */
export const LogQuerySchema = Type.Object({
  limit: Type.Optional(
    Type.String({
      pattern: '^[0-9]{0,15}$',
      description: 'Keep the newest `limit` matching entries; 0 or empty: all of them.',
      errorMessage: 'limit must be a non-negative integer (0 means all), got {quoted}',
    }),
  ),
  level: Type.Optional(
    Type.Enum([...LOG_LEVELS, ''], {
      description: 'Only entries of this level; empty: all.',
      errorMessage: `level must be one of ${LEVEL_LIST}, got {quoted}`,
    }),
  ),
  source: Type.Optional(
    Type.Enum([...LOG_SOURCES, ''], {
      description: 'Only entries from this source; empty: all.',
      errorMessage: `source must be one of ${SOURCE_LIST}, got {quoted}`,
    }),
  ),
});

export const LogEntrySchema = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Monotonic from 1 for the life of the process; clearing does not reset it.' }),
  timestamp_ms: Type.Integer({ description: 'When it was stored, or when its latest duplicate arrived.' }),
  level: LogLevelSchema,
  source: LogSourceSchema,
  message: Type.String(),
  data_json: Type.Optional(Type.String()),
  repeat_count: Type.Optional(Type.Integer({ minimum: 1, description: 'Identical entries folded into this one; absent for none.' })),
});

/** The checked body as the ring's input: data_json must parse as JSON. */
export function logInputOf(body: Static<typeof LogBody>): LogInput {
  const { level, source, message, data_json: dataJson } = body;
  if (dataJson === undefined || dataJson === null) return { level, source, message };
  try {
    JSON.parse(dataJson);
  } catch (err) {
    throw new ApiError('invalid_input', `data_json is not valid JSON text: ${(err as Error).message}`, { extra: { field: 'data_json' } });
  }
  return { level, source, message, data_json: dataJson };
}

/** The checked query as the ring's filter: empty values are no filter. */
export function logQueryOf(query: Static<typeof LogQuerySchema>): LogQuery {
  const out: LogQuery = { limit: query.limit ? Number(query.limit) : 0 };
  if (query.level) out.level = query.level;
  if (query.source) out.source = query.source;
  return out;
}
