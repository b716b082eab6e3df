/**
 * Where the shells and browsers tests start keep their dotfiles: never the machine's. A shell given
 * the machine's HOME appends to ~/.bash_history (and one given HOME=/tmp to /tmp/.bash_history);
 * Chromium creates ~/.config/chromium and ~/.cache/dconf even with --user-data-dir. .ci/run fails
 * when a test run changed any of those.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh empty directory to serve as HOME; the caller removes it. */
export function makeTestHome(prefix = 'tuicd-test-home-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

let shared: string | undefined;

/** One HOME for the shells of this test process, made on first use and removed when the process exits. */
export function testHome(): string {
  if (shared === undefined) {
    const dir = (shared = makeTestHome());
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return shared;
}

/**
 * What a test shell's environment needs on top of its own: a HOME of its own (no rc file or dotfile
 * of the machine's is read or written) and HISTFILE=/dev/null, so an interactive bash keeps no
 * history file even where a test hands it some other HOME.
 */
export function shellHomeEnv(home: string = testHome()): { HOME: string; HISTFILE: string } {
  return { HOME: home, HISTFILE: '/dev/null' };
}

/**
 * The environment of a browser started by a test, all under `dir` (which the caller removes):
 * HOME, and the XDG config, cache, data and runtime dirs, where Chromium otherwise creates
 * ~/.config/chromium, ~/.cache/chromium and ~/.cache/dconf; TMPDIR too, for its
 * org.chromium.Chromium.* singleton dir (keep `dir` short: a unix socket path goes in there). The
 * directories are made here, 0700 as the runtime dir's users require. Pass `--user-data-dir` as well.
 */
export function browserEnv(dir: string): Record<string, string> {
  const dirs = {
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_RUNTIME_DIR: join(dir, 'runtime'),
    TMPDIR: join(dir, 'tmp'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return { ...env, ...dirs, HISTFILE: '/dev/null' };
}
