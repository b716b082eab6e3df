/**
 * `tuicd service install | uninstall | status`: writes, removes and reads back the service manager's
 * definition of this install (unitFiles.ts). It changes files only; the commands that load them
 * into the manager are printed for the user to run, so a dry run and a test never touch the real
 * systemd or launchd.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';

import type { Paths } from '../../shared/paths.js';
import { atomicWriteFile } from '../config/atomicWrite.js';
import { launchdLabel, readServiceArguments, renderLaunchdPlist, renderSystemdUnit, serviceName } from './unitFiles.js';
import type { ServicePlatform, ServiceSpec } from './unitFiles.js';

export type ServiceAction = 'install' | 'uninstall' | 'status';

export interface ServiceCommandOptions {
  action: ServiceAction;
  paths: Paths;
  platform: string;
  dryRun: boolean;
  env: NodeJS.ProcessEnv;
  /** The Node binary and entry point the service runs: this install's. */
  node: string;
  mainJs: string;
}

export interface ServiceReport {
  lines: string[];
  exitCode: number;
}

export function servicePlatform(platform: string): ServicePlatform {
  if (platform === 'linux' || platform === 'darwin') return platform;
  throw new Error(`tuicd service supports Linux (systemd) and macOS (launchd), not ${platform}`);
}

function home(env: NodeJS.ProcessEnv): string {
  const dir = env['HOME'];
  if (dir === undefined || !dir.startsWith('/')) throw new Error('HOME is not set to an absolute path: cannot tell where the service file goes');
  return dir;
}

/** Where the definition lives: the user's systemd unit dir, or ~/Library/LaunchAgents. */
export function serviceFilePath(platform: ServicePlatform, instance: string | null, env: NodeJS.ProcessEnv): string {
  if (platform === 'darwin') return join(home(env), 'Library', 'LaunchAgents', `${launchdLabel(instance)}.plist`);
  const xdg = env['XDG_CONFIG_HOME'];
  const configHome = xdg?.startsWith('/') ? xdg : join(home(env), '.config');
  return join(configHome, 'systemd', 'user', `${serviceName(instance)}.service`);
}

/** `systemctl --user enable` links the unit here; its presence is what "enabled" means. */
function systemdWantsLink(unitPath: string, instance: string | null): string {
  return join(dirname(unitPath), 'default.target.wants', `${serviceName(instance)}.service`);
}

function specFor(opts: ServiceCommandOptions): ServiceSpec {
  return {
    node: opts.node,
    mainJs: opts.mainJs,
    configDir: opts.paths.configDir,
    instance: opts.paths.instance,
    path: opts.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    home: home(opts.env),
    logDir: opts.paths.logDir,
  };
}

function linkExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

async function install(opts: ServiceCommandOptions, platform: ServicePlatform, file: string): Promise<ServiceReport> {
  const text = platform === 'darwin' ? renderLaunchdPlist(specFor(opts)) : renderSystemdUnit(specFor(opts));
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : null;
  if (opts.dryRun) return { lines: [`would ${previous === null ? 'write' : 'replace'} ${file}:`, '', ...text.trimEnd().split('\n')], exitCode: 0 };
  if (previous === text) return { lines: [`${file} is already installed and unchanged`, ...nextSteps(platform, file, opts)], exitCode: 0 };
  mkdirSync(dirname(file), { recursive: true });
  await atomicWriteFile(file, text, { mode: 0o644 });
  return { lines: [`${previous === null ? 'wrote' : 'replaced'} ${file}`, ...nextSteps(platform, file, opts)], exitCode: 0 };
}

function nextSteps(platform: ServicePlatform, file: string, opts: ServiceCommandOptions): string[] {
  const name = serviceName(opts.paths.instance);
  if (platform === 'darwin') {
    return ['to start it now and at every login:', `  launchctl bootstrap gui/$(id -u) ${file}`, `logs: ${opts.paths.logDir}/${name}.err.log`];
  }
  return [
    'to start it now and at every login:',
    `  systemctl --user daemon-reload && systemctl --user enable --now ${name}.service`,
    'on a headless server, so that it starts at boot and keeps running after you log out:',
    `  loginctl enable-linger ${userInfo().username}`,
    `logs: journalctl --user -u ${name}.service -f`,
    `sessions survive \`systemctl --user restart ${name}\`; \`tuicd stop\` ends them`,
  ];
}

function uninstall(opts: ServiceCommandOptions, platform: ServicePlatform, file: string): ServiceReport {
  const name = serviceName(opts.paths.instance);
  if (!existsSync(file)) return { lines: [`${file} is not installed: nothing to remove`], exitCode: 0 };
  const wants = platform === 'linux' ? systemdWantsLink(file, opts.paths.instance) : null;
  const removed = [file, ...(wants !== null && linkExists(wants) ? [wants] : [])];
  if (opts.dryRun) return { lines: removed.map((p) => `would remove ${p}`), exitCode: 0 };
  // The running service is the manager's to stop: say how, before its definition is gone.
  const stop =
    platform === 'darwin'
      ? `launchctl bootout gui/$(id -u)/${launchdLabel(opts.paths.instance)}`
      : `systemctl --user stop ${name}.service && systemctl --user daemon-reload`;
  for (const p of removed) rmSync(p, { force: true });
  return { lines: [...removed.map((p) => `removed ${p}`), `if it is running, stop it: ${stop}`], exitCode: 0 };
}

/** What systemd says of the unit, when a user manager answers; null when there is none (containers, CI). */
function systemdState(name: string, env: NodeJS.ProcessEnv): string | null {
  if (env['XDG_RUNTIME_DIR'] === undefined) return null;
  try {
    return execFileSync('systemctl', ['--user', 'is-active', `${name}.service`], {
      encoding: 'utf8',
      timeout: 3000,
      stdio: ['ignore', 'pipe', 'ignore'],
      env,
    }).trim();
  } catch (err) {
    const out = (err as { stdout?: string }).stdout?.trim();
    return out !== undefined && out.length > 0 ? out : null;
  }
}

function status(opts: ServiceCommandOptions, platform: ServicePlatform, file: string): ServiceReport {
  if (!existsSync(file)) return { lines: [`not installed (no ${file}); \`tuicd service install\` writes it`], exitCode: 1 };
  const args = readServiceArguments(platform, readFileSync(file, 'utf8'));
  const lines = [`installed: ${file}`];
  if (args === null) lines.push('runs: (could not read its command line)');
  else {
    lines.push(`runs: ${args.join(' ')}`);
    const mainJs = args[1];
    lines.push(mainJs === opts.mainJs ? 'points at this install' : `points at another install (${mainJs ?? 'nothing'}), not ${opts.mainJs}`);
    lines.push(args.includes('--keep-sessions') ? 'keeps sessions across restarts' : 'ends sessions when it stops');
  }
  if (platform === 'linux') {
    lines.push(linkExists(systemdWantsLink(file, opts.paths.instance)) ? 'enabled (starts at login)' : 'not enabled');
    const state = systemdState(serviceName(opts.paths.instance), opts.env);
    if (state !== null) lines.push(`systemd: ${state}`);
  }
  return { lines, exitCode: 0 };
}

export async function runServiceCommand(opts: ServiceCommandOptions): Promise<ServiceReport> {
  const platform = servicePlatform(opts.platform);
  const file = serviceFilePath(platform, opts.paths.instance, opts.env);
  if (opts.action === 'install') return await install(opts, platform, file);
  if (opts.action === 'uninstall') return uninstall(opts, platform, file);
  return status(opts, platform, file);
}
