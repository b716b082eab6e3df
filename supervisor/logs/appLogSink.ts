/**
 * tuicd's own warnings and errors in the /logs ring (source `app`), so a client reading /logs sees
 * why the server is unhappy without the log file: fed the serialized, censored pino line.
 */
import type { LogRing } from './logRing.js';
import { LOG_DATA_JSON_MAX_CHARS, LOG_MESSAGE_MAX_CHARS } from './logEntry.js';

/** pino's numeric levels at and above warn. */
const WARN = 40;
const ERROR = 50;
/** Fields every record carries that say nothing about the event itself. */
const ENVELOPE = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

export function appLogSink(ring: LogRing): (jsonLine: string) => void {
  return (jsonLine) => {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(jsonLine) as Record<string, unknown>;
    } catch {
      return; // pino writes JSON lines; anything else is not ours to guess at
    }
    const level = typeof record['level'] === 'number' ? record['level'] : WARN;
    const data: Record<string, unknown> = {};
    for (const key of Object.keys(record)) if (!ENVELOPE.has(key)) data[key] = record[key];
    const message = typeof record['msg'] === 'string' && record['msg'] !== '' ? record['msg'] : '(no message)';
    const dataJson = Object.keys(data).length > 0 ? JSON.stringify(data) : undefined;
    ring.push({
      level: level >= ERROR ? 'error' : 'warn',
      source: 'app',
      message: message.length > LOG_MESSAGE_MAX_CHARS ? `${message.slice(0, LOG_MESSAGE_MAX_CHARS - 1)}…` : message,
      // Too big to keep whole (a long stack): dropped rather than cut into invalid JSON.
      ...(dataJson !== undefined && dataJson.length <= LOG_DATA_JSON_MAX_CHARS ? { data_json: dataJson } : {}),
    });
  };
}
