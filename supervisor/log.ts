/**
 * Structured logs (pino) to a size-rotated JSON file in the config dir and to stderr; secrets are censored.
 * On stderr a person at a terminal reads lines, a pipe or a service manager's journal gets JSON.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

export const LogConstants = {
  /** Rotate at this size so a chatty day cannot fill the disk. */
  ROTATE_SIZE: '10m',
  /** Rotated files kept besides the live one. */
  KEEP_FILES: 5,
} as const;

/** Anything that could hold a credential is censored wherever it appears in a log object. */
const REDACT_PATHS = [
  'password',
  '*.password',
  'password_hash',
  '*.password_hash',
  '*.*.password_hash',
  '*.*.*.password_hash',
  'session_token',
  '*.session_token',
  '*.*.session_token',
  '*.*.*.session_token',
  'token',
  '*.token',
  '*.*.token',
  '*.*.*.token',
  'vapid_private_key',
  '*.vapid_private_key',
  '*.*.*.vapid_private_key',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
];

/** Overrides the stderr choice: `json` or `pretty`. */
export const LOG_FORMAT_ENV = 'TUIC_LOG_FORMAT';

/** Human-readable stderr only for a terminal: a pipe, a file or journald (not a TTY) get one JSON object a line. */
export function stderrLogFormat(env: NodeJS.ProcessEnv, stderrIsTty: boolean): 'json' | 'pretty' {
  const forced = env[LOG_FORMAT_ENV];
  if (forced === 'json' || forced === 'pretty') return forced;
  return stderrIsTty ? 'pretty' : 'json';
}

export interface LogOptions {
  logDir: string;
  level?: string;
  /** Tests keep stderr quiet but still want the file. */
  stderr?: boolean;
  /** Also receives every warn, error and fatal record as its serialized (already censored) JSON line. */
  warnings?: (jsonLine: string) => void;
}

export function createLogger(opts: LogOptions): Logger {
  mkdirSync(opts.logDir, { recursive: true, mode: 0o700 });
  const targets: pino.TransportTargetOptions[] = [
    {
      target: 'pino-roll',
      level: opts.level ?? 'info',
      options: { file: join(opts.logDir, 'tuicd'), extension: '.log', size: LogConstants.ROTATE_SIZE, limit: { count: LogConstants.KEEP_FILES }, mkdir: true },
    },
  ];
  if (opts.stderr !== false) {
    const level = opts.level ?? 'info';
    if (stderrLogFormat(process.env, process.stderr.isTTY === true) === 'pretty') {
      targets.push({ target: 'pino-pretty', level, options: { destination: 2, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } });
    } else targets.push({ target: 'pino/file', level, options: { destination: 2 } });
  }
  const options = { level: opts.level ?? 'info', base: { pid: process.pid }, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } };
  const files = pino.transport({ targets });
  if (opts.warnings === undefined) return pino(options, files);
  const warnings = opts.warnings;
  // In this thread, after serialization: the tee sees the censored line, and only warn and above.
  const streams = pino.multistream([
    { level: options.level as pino.Level, stream: files },
    { level: 'warn', stream: { write: (line: string) => warnings(line) } },
  ]);
  // logger.flush(cb) needs the stream's flush, which a multistream lacks: the files are what need it.
  return pino(options, Object.assign(streams, { flush: (cb: (err?: Error) => void) => files.flush(cb) }));
}
