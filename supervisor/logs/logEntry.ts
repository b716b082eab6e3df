/**
 * The monitoring log ring's vocabulary (`/logs`): levels, sources, bounds and the
 * entry a client reads back. The entry mirrors TUICommander's serialization: `data_json` appears only
 * when given, `repeat_count` only once a duplicate was folded in.
 */

/** How many entries the ring holds; the oldest goes when a new one arrives on a full ring. */
export const LOG_RING_CAPACITY = 1000;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_SOURCES = ['app', 'plugin', 'git', 'network', 'terminal', 'github', 'dictation', 'store', 'config', 'eval_js'] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

/**
 * Per-entry bounds: the HTTP body limit (2 MiB by default) times 1000 entries would let clients park
 * gigabytes in memory; these keep a full ring in the tens of megabytes.
 */
export const LOG_MESSAGE_MAX_CHARS = 16 * 1024;
export const LOG_DATA_JSON_MAX_CHARS = 64 * 1024;

/** What a client posts: validated before it reaches the ring. */
export interface LogInput {
  level: LogLevel;
  source: LogSource;
  message: string;
  /** A JSON text, stored as given (not re-serialized). */
  data_json?: string;
}

export interface LogEntry extends LogInput {
  /** Monotonic from 1 for the life of the process; clearing the ring does not reset it. */
  id: number;
  /** When the entry was stored, or when its latest duplicate arrived. */
  timestamp_ms: number;
  /** How many identical entries were folded into this one (absent for none). */
  repeat_count?: number;
}

/** GET /logs filters. `limit` 0 means every matching entry. */
export interface LogQuery {
  limit: number;
  level?: LogLevel;
  source?: LogSource;
}

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

export function isLogSource(value: unknown): value is LogSource {
  return typeof value === 'string' && (LOG_SOURCES as readonly string[]).includes(value);
}
