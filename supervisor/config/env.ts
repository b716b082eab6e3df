// Environment inputs that shape the effective configuration without ever being saved:
// TUIC_PORT (one process's TCP port) and the config directory lookup (ARCHITECTURE "Persistence").

import { homedir } from 'node:os';
import { join } from 'node:path';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import type { DeepReadonly } from './schema.js';

export const CONFIG_FILE_NAME = 'config.json';
/** Directory name under the XDG config home. */
const CONFIG_DIR_NAME = 'tuicommander';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The TCP port to bind: `TUIC_PORT` when set (an integer 0..65535, 0 = any free port), otherwise
 * `services.server.port`. The override is never written back to config.json.
 */
export function effectiveTcpPort(
  config: DeepReadonly<{ services: { server: { port: number } } }>,
  env: Env = process.env,
): number {
  const raw = env['TUIC_PORT'];
  if (raw === undefined || raw.trim() === '') return config.services.server.port;
  const text = raw.trim();
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port > 65535) {
    throw new SupervisorError(
      ErrorCode.CONFIG_INVALID,
      `Invalid TUIC_PORT ${JSON.stringify(raw)}: expected an integer from 0 to 65535 (0 = any free port)`,
      { field: 'TUIC_PORT', reason: 'expected an integer from 0 to 65535' },
    );
  }
  return port;
}

export interface ConfigDirInputs {
  /** `--config-dir` from the command line; wins over everything. */
  flag?: string | undefined;
  env?: Env;
  platform?: NodeJS.Platform;
  home?: string;
}

/** `--config-dir`, else `$TUIC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/tuicommander` (`~/.config/…`; `%APPDATA%` on Windows). */
export function resolveConfigDir(inputs: ConfigDirInputs = {}): string {
  const env = inputs.env ?? process.env;
  if (inputs.flag !== undefined && inputs.flag !== '') return inputs.flag;
  const fromEnv = env['TUIC_CONFIG_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const home = inputs.home ?? homedir();
  if ((inputs.platform ?? process.platform) === 'win32') {
    return join(env['APPDATA'] || join(home, 'AppData', 'Roaming'), CONFIG_DIR_NAME);
  }
  return join(env['XDG_CONFIG_HOME'] || join(home, '.config'), CONFIG_DIR_NAME);
}

/** Path of config.json inside a config directory. */
export function configFilePath(configDir: string): string {
  return join(configDir, CONFIG_FILE_NAME);
}
