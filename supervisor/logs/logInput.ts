/** Checks what clients send to /logs (POST body, GET query) and says exactly what is wrong. */
import { isLogLevel, isLogSource, LOG_DATA_JSON_MAX_CHARS, LOG_LEVELS, LOG_MESSAGE_MAX_CHARS, LOG_SOURCES } from './logEntry.js';
import type { LogInput, LogQuery } from './logEntry.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const BODY_FIELDS = ['level', 'source', 'message', 'data_json'] as const;
const LEVEL_LIST = LOG_LEVELS.join(', ');
const SOURCE_LIST = LOG_SOURCES.join(', ');
/** Quoted values in errors are cut here: an error must not echo a megabyte back. */
const SHOWN_VALUE_CHARS = 80;

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > SHOWN_VALUE_CHARS ? `${text.slice(0, SHOWN_VALUE_CHARS)}…` : text;
}

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

/** POST /logs {level, source, message, data_json?}: every field checked, unknown fields refused. */
export function parseLogInput(body: unknown): Parsed<LogInput> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return fail(`body must be a JSON object {level, source, message, data_json?}, got ${Array.isArray(body) ? 'an array' : shown(body)}`);
  }
  const fields = body as Record<string, unknown>;
  // A misspelt field (dataJson, msg) would otherwise drop its value without a word.
  const unknown = Object.keys(fields).filter((k) => !(BODY_FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) return fail(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; expected ${BODY_FIELDS.join(', ')}`);

  const { level, source, message } = fields;
  if (level === undefined || level === null) return fail(`level is required: one of ${LEVEL_LIST}`);
  if (!isLogLevel(level)) return fail(`level must be one of ${LEVEL_LIST}, got ${shown(level)}`);
  if (source === undefined || source === null) return fail(`source is required: one of ${SOURCE_LIST}`);
  if (!isLogSource(source)) return fail(`source must be one of ${SOURCE_LIST}, got ${shown(source)}`);
  if (message === undefined || message === null) return fail('message is required');
  if (typeof message !== 'string' || message === '') return fail(`message must be a non-empty string, got ${shown(message)}`);
  if (message.length > LOG_MESSAGE_MAX_CHARS) return fail(`message must be at most ${LOG_MESSAGE_MAX_CHARS} characters, got ${message.length}`);

  const dataJson = fields['data_json'];
  if (dataJson === undefined || dataJson === null) return { ok: true, value: { level, source, message } };
  if (typeof dataJson !== 'string') {
    return fail(
      `data_json must be a string holding JSON text (e.g. JSON.stringify(data)) or null, got ${Array.isArray(dataJson) ? 'an array' : typeof dataJson}`,
    );
  }
  if (dataJson.length > LOG_DATA_JSON_MAX_CHARS) return fail(`data_json must be at most ${LOG_DATA_JSON_MAX_CHARS} characters, got ${dataJson.length}`);
  try {
    JSON.parse(dataJson);
  } catch (err) {
    return fail(`data_json is not valid JSON text: ${(err as Error).message}`);
  }
  return { ok: true, value: { level, source, message, data_json: dataJson } };
}

/** GET /logs?limit=0&level&source: limit 0 (or none) is every entry; an empty level/source is no filter. */
export function parseLogQuery(query: URLSearchParams): Parsed<LogQuery> {
  const rawLimit = query.get('limit');
  let limit = 0;
  if (rawLimit !== null && rawLimit !== '') {
    limit = /^\d+$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!Number.isSafeInteger(limit)) return fail(`limit must be a non-negative integer (0 means all), got ${shown(rawLimit)}`);
  }
  const value: LogQuery = { limit };
  const level = query.get('level');
  if (level !== null && level !== '') {
    if (!isLogLevel(level)) return fail(`level must be one of ${LEVEL_LIST}, got ${shown(level)}`);
    value.level = level;
  }
  const source = query.get('source');
  if (source !== null && source !== '') {
    if (!isLogSource(source)) return fail(`source must be one of ${SOURCE_LIST}, got ${shown(source)}`);
    value.source = source;
  }
  return { ok: true, value };
}
