/**
 * The launcher every agent entry points at: `<config dir>/mcp-bridge/tuic-bridge`, a shell script that
 * execs this install's Node on this install's bridge (absolute paths: an agent whose PATH has no node,
 * or another node, still starts the right one), pinned to this config dir and instance so the bridge
 * reaches the tuicd it was installed for and never falls back to another instance's socket.
 */
import { chmodSync, mkdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Paths } from '../../shared/paths.js';
import { removeIfPresent, writeAtomic } from './files.js';

export const LAUNCHER_DIR = 'mcp-bridge';
export const LAUNCHER_NAME = 'tuic-bridge';
const LAUNCHER_MODE = 0o755;

/** dist/bridge/cli.js of this install (this file is dist/supervisor/installBridge/launcher.js). */
export function defaultBridgeScript(): string {
  return fileURLToPath(new URL('../../bridge/cli.js', import.meta.url));
}

export function launcherPath(paths: Paths): string {
  return join(paths.configDir, LAUNCHER_DIR, LAUNCHER_NAME);
}

/** POSIX shell single quoting: safe for any path. */
function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function launcherScript(paths: Paths, nodePath: string, bridgeScript: string): string {
  const instance = paths.instance !== null ? [`TUIC_APP_INSTANCE=${sq(paths.instance)}`, 'export TUIC_APP_INSTANCE'] : ['unset TUIC_APP_INSTANCE'];
  return [
    '#!/bin/sh',
    '# Written by `tuicd install-bridge` (removed by `tuicd install-bridge --uninstall`): the MCP server',
    "# agents' configs name. It runs this install's tuic-bridge on this install's Node, for this config",
    '# dir and instance only.',
    `TUIC_CONFIG_DIR=${sq(paths.configDir)}`,
    'export TUIC_CONFIG_DIR',
    ...instance,
    `exec ${sq(nodePath)} ${sq(bridgeScript)} "$@"`,
    '',
  ].join('\n');
}

export type LauncherAction = 'written' | 'unchanged' | 'removed' | 'absent';

/** Writes the launcher unless it is already exactly this (content and mode). */
export function ensureLauncher(file: string, script: string, dryRun: boolean): LauncherAction {
  try {
    if (readFileSync(file, 'utf8') === script && (statSync(file).mode & 0o777) === LAUNCHER_MODE) return 'unchanged';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (dryRun) return 'written';
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeAtomic(file, script);
  chmodSync(file, LAUNCHER_MODE);
  return 'written';
}

/** Removes the launcher, and its directory when nothing else is left in it. */
export function removeLauncher(file: string, dryRun: boolean): LauncherAction {
  let present: boolean;
  if (dryRun) {
    try {
      statSync(file);
      present = true;
    } catch {
      present = false;
    }
    return present ? 'removed' : 'absent';
  }
  present = removeIfPresent(file);
  try {
    rmdirSync(dirname(file));
  } catch {
    // not empty (other files of ours or of another tool), or already gone
  }
  return present ? 'removed' : 'absent';
}
