/**
 * What install-bridge created, so --uninstall can take back exactly that: a config file it created
 * (removed again once it holds nothing else) and a parent key it added (`"mcpServers": {…}`, removed
 * again once empty). A parent or file that was there before is never removed. Kept beside the launcher.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Paths } from '../../shared/paths.js';
import { removeIfPresent, writeAtomic } from './files.js';
import { LAUNCHER_DIR } from './launcher.js';

export interface FileRecord {
  created_file?: boolean;
  created_parent?: boolean;
}

export interface InstallState {
  version: 1;
  files: Record<string, FileRecord>;
}

export function statePath(paths: Paths): string {
  return join(paths.configDir, LAUNCHER_DIR, 'install-state.json');
}

/** The saved state; an absent or unreadable one is empty (uninstall then keeps parents and files). */
export function loadState(file: string): InstallState {
  try {
    const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
    const files = (raw as { files?: unknown } | null)?.files;
    if (typeof files === 'object' && files !== null && !Array.isArray(files)) return { version: 1, files: files as Record<string, FileRecord> };
  } catch {
    // absent or damaged: nothing recorded
  }
  return { version: 1, files: {} };
}

/** Writes the state if it differs from what is on disk; removes the file when nothing is recorded. */
export function saveState(file: string, state: InstallState): void {
  const empty = Object.keys(state.files).length === 0;
  const text = `${JSON.stringify(state, null, 2)}\n`;
  let current: string | null = null;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // absent
  }
  if (empty) {
    if (current !== null) removeIfPresent(file);
    return;
  }
  if (current !== text) writeAtomic(file, text);
}
