/**
 * The environment and paths a stdio upstream is started with. The parent environment is cleared
 * to StdioLimits.ENV_ALLOWLIST (an upstream is possibly untrusted code: ANTHROPIC_API_KEY, AWS_*
 * and friends must not reach it), PATH gains the usual per-user tool directories so `npx`, `uvx`
 * or `cargo`-installed servers resolve, and the upstream's own `env` goes on top.
 */

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

import { StdioLimits } from '../../shared/protocol/proxyStdio.js';

/** Appended to PATH, in this order, when present and not already on it. */
const EXTRA_PATH_DIRS = ['/usr/local/bin', '~/.cargo/bin', '~/.local/bin', '~/.bun/bin', '~/bin'];

export interface ChildEnvOptions {
  /** The environment to pick the allowlist from (default process.env). */
  parentEnv?: NodeJS.ProcessEnv;
  /** Home directory for `~` (default: HOME from parentEnv, else os.homedir()). */
  home?: string;
  /** Whether a directory exists (tests inject one). */
  exists?: (path: string) => boolean;
}

/** `~` and `~/…` become the home directory; `~user` and anything else is left alone. */
export function expandHome(value: string, home: string): string {
  if (value === '~') return home;
  if (value.startsWith('~/')) return join(home, value.slice(2));
  return value;
}

export function resolveHome(options: ChildEnvOptions = {}): string {
  return options.home ?? options.parentEnv?.HOME ?? process.env.HOME ?? homedir();
}

/** The child's complete environment: allowlisted parent variables, augmented PATH, then `upstreamEnv`. */
export function buildChildEnv(upstreamEnv: Readonly<Record<string, string>>, options: ChildEnvOptions = {}): Record<string, string> {
  const parentEnv = options.parentEnv ?? process.env;
  const home = resolveHome(options);
  const exists = options.exists ?? existsSync;
  const env: Record<string, string> = {};
  for (const key of StdioLimits.ENV_ALLOWLIST) {
    const value = parentEnv[key];
    if (value !== undefined) env[key] = value;
  }
  const path = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const dir of EXTRA_PATH_DIRS.map((d) => expandHome(d, home))) {
    if (!path.includes(dir) && exists(dir)) path.push(dir);
  }
  if (path.length > 0) env.PATH = path.join(delimiter);
  return Object.assign(env, upstreamEnv);
}
