/** Where tuicd keeps its files: config dir by flag, env or default, and the socket path per instance. */
import { createHash } from 'node:crypto';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The directory TUICommander uses, so existing bridges and agent configs find the socket. */
export const DEFAULT_CONFIG_DIR_NAME = 'com.tuic.commander';
const SOCKET_FILE = 'mcp.sock';
/** Bytes of the digest kept in a named instance's socket name: short, still collision-free in practice. */
const INSTANCE_DIGEST_CHARS = 12;

export interface Paths {
  configDir: string;
  socketPath: string;
  configFile: string;
  schemaFile: string;
  logDir: string;
  instance: string | null;
}

function xdgConfigHome(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CONFIG_HOME'];
  return xdg?.startsWith('/') ? xdg : join(homedir(), '.config');
}

/** Instance names become file names: keep them tame. */
export function validateInstanceName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new Error(`instance name "${name}" must be 1-64 characters of letters, digits, '.', '_' or '-'`);
  }
  return name;
}

/** The deterministic short socket path of a named instance, in the temp dir (104-byte sun_path limit). */
export function instanceSocketPath(instance: string, configDir: string, uid: number): string {
  const digest = createHash('sha256').update(`${uid}\0${instance}\0${configDir}`).digest('hex').slice(0, INSTANCE_DIGEST_CHARS);
  return join(tmpdir(), `tuicd-${digest}.sock`);
}

export function resolvePaths(opts: { configDir?: string | undefined; instance?: string | undefined }, env: NodeJS.ProcessEnv = process.env): Paths {
  // An empty variable (`TUIC_CONFIG_DIR= tuicd`) means unset: never the cwd, never a startup error.
  const instance = opts.instance ?? (env['TUIC_APP_INSTANCE'] || null);
  if (instance !== null) validateInstanceName(instance);
  const explicitDir = opts.configDir || env['TUIC_CONFIG_DIR'] || null;
  const rootDir = resolve(explicitDir ?? join(xdgConfigHome(env), DEFAULT_CONFIG_DIR_NAME));
  // A named instance without an explicit dir gets its own subdirectory of the default one.
  const configDir = instance !== null && explicitDir === null ? join(rootDir, 'instances', instance) : rootDir;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const socketPath = instance !== null ? instanceSocketPath(instance, configDir, uid) : join(configDir, SOCKET_FILE);
  return {
    configDir,
    socketPath,
    configFile: join(configDir, 'config.json'),
    schemaFile: join(configDir, 'config.schema.json'),
    logDir: join(configDir, 'logs'),
    instance,
  };
}
