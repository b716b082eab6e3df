// Environment inputs that shape the effective configuration without ever being saved: TUIC_PORT
// (one process's TCP port). The config directory lookup lives in shared/paths.ts.

import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import type { DeepReadonly } from './schema.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The TCP port to bind: `TUIC_PORT` when set (an integer 0..65535, 0 = any free port), otherwise
 * `services.server.port`. The override is never written back to config.json.
 */
export function effectiveTcpPort(config: DeepReadonly<{ services: { server: { port: number } } }>, env: Env = process.env): number {
  const raw = env['TUIC_PORT'];
  if (raw === undefined || raw.trim() === '') return config.services.server.port;
  const text = raw.trim();
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port > 65535) {
    throw new SupervisorError(ErrorCode.CONFIG_INVALID, `Invalid TUIC_PORT ${JSON.stringify(raw)}: expected an integer from 0 to 65535 (0 = any free port)`, {
      field: 'TUIC_PORT',
      reason: 'expected an integer from 0 to 65535',
    });
  }
  return port;
}
