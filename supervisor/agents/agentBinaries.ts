/**
 * Which agent programs are installed (GET /agents, /agents/detect, agent action=detect): a binary found on PATH (or an
 * absolute path), its version from `--version`, and whether its `--help` offers a flag that keeps
 * it off the alternate screen (native scrollback). Each probe has a 2 s deadline and runs without
 * blocking the loop; answers are cached per path and version (a new install is a new version).
 * `lookup` runs nothing (GET /agents/detect): the path, plus what an earlier probe of the same,
 * unchanged file found.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

import { AGENT_BINARIES } from '../sessions/agentDetection.js';

export const DetectConstants = {
  /** The help and version probes' deadline. */
  PROBE_TIMEOUT_MS: 2_000,
  /** Probe output read at most (a help text is a few KB). */
  PROBE_MAX_BYTES: 256 * 1024,
} as const;

/** Flags that keep an agent's TUI in the primary screen (its output then scrolls back natively). */
const NO_ALT_SCREEN_FLAGS = ['--no-alt-screen'];

export interface Detection {
  path: string | null;
  version: string | null;
  supports_no_alt_screen: boolean;
}

function executable(path: string): boolean {
  try {
    return statSync(path).isFile() && (accessSync(path, fsConstants.X_OK), true);
  } catch {
    return false;
  }
}

/** `binary` as a path (absolute) or a name looked up on `path`; null when not installed. */
export function findBinary(binary: string, path: string): string | null {
  if (binary.includes('/')) return isAbsolute(binary) && executable(binary) ? binary : null;
  for (const dir of path.split(delimiter)) if (dir && executable(join(dir, binary))) return join(dir, binary);
  return null;
}

/** Runs `file args` with the probe deadline; its stdout+stderr, or null when it failed to run. */
function probe(file: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: DetectConstants.PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: DetectConstants.PROBE_MAX_BYTES, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const out = `${stdout}${stderr}`;
        // A non-zero exit still printed something useful (some CLIs exit 1 after --help).
        resolve(err && out.length === 0 ? null : out);
      },
    );
  });
}

const VERSION = /\b(\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?)\b/;

/** Paths whose last probe `lookup` remembers. */
const MAX_REMEMBERED_PROBES = 256;

/** Names one version of a file: replaced, rewritten or retargeted (a symlink), it changes. */
function fileSignature(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return null;
  }
}

export class AgentBinaries {
  private readonly cache = new Map<string, Detection>();
  /** The last probe of each path, with the file's signature at the time (what `lookup` may repeat). */
  private readonly probed = new Map<string, { signature: string; detection: Detection }>();

  constructor(private readonly path: () => string) {}

  /** Path only, no probes (detect-all). */
  locate(binary: string): Detection {
    return { path: findBinary(binary, this.path()), version: null, supports_no_alt_screen: false };
  }

  /**
   * Runs nothing: the path, and the version and flag an earlier `detect` found in this very file
   * (same signature); a file never probed, or changed since, says version null and false.
   */
  lookup(binary: string): Detection {
    const path = findBinary(binary, this.path());
    if (path === null) return { path: null, version: null, supports_no_alt_screen: false };
    const last = this.probed.get(path);
    if (last !== undefined && last.signature === fileSignature(path)) return last.detection;
    return { path, version: null, supports_no_alt_screen: false };
  }

  /** Path, version and the no-alt-screen flag: runs the binary (`--version`, `--help`). */
  async detect(binary: string): Promise<Detection> {
    const path = findBinary(binary, this.path());
    if (path === null) return { path: null, version: null, supports_no_alt_screen: false };
    // Taken before the probes: a file changed while they ran is not remembered as probed.
    const signature = fileSignature(path);
    const detection = await this.probe(path);
    if (signature !== null) {
      this.probed.delete(path);
      if (this.probed.size >= MAX_REMEMBERED_PROBES) {
        const oldest = this.probed.keys().next();
        if (!oldest.done) this.probed.delete(oldest.value);
      }
      this.probed.set(path, { signature, detection });
    }
    return detection;
  }

  private async probe(path: string): Promise<Detection> {
    const versionText = await probe(path, ['--version']);
    const version = versionText === null ? null : (VERSION.exec(versionText)?.[1] ?? null);
    const key = `${path}\u0000${version ?? ''}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const help = await probe(path, ['--help']);
    const detection: Detection = { path, version, supports_no_alt_screen: help !== null && NO_ALT_SCREEN_FLAGS.some((f) => help.includes(f)) };
    this.cache.set(key, detection);
    return detection;
  }

  /** Every known agent installed here, probed in parallel. */
  async installed(): Promise<Array<{ name: string; path: string; version: string | null }>> {
    const found = await Promise.all(AGENT_BINARIES.map(async (name) => ({ name, ...(await this.detect(name)) })));
    return found.filter((d) => d.path !== null).map((d) => ({ name: d.name, path: d.path!, version: d.version }));
  }
}
