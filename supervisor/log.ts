/** Structured JSON logs (pino) to stderr and to a size-rotated file in the config dir; secrets are censored. */
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

export interface LogOptions {
  logDir: string;
  level?: string;
  /** Tests keep stderr quiet but still want the file. */
  stderr?: boolean;
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
  if (opts.stderr !== false) targets.push({ target: 'pino/file', level: opts.level ?? 'info', options: { destination: 2 } });
  return pino(
    { level: opts.level ?? 'info', base: { pid: process.pid }, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } },
    pino.transport({ targets }),
  );
}
