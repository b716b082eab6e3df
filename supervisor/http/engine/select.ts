/**
 * Picks the HTTP engine at start: the first uWebSockets.js build that loads on this Node ABI and
 * libc, otherwise Node's http + ws. The reason travels to /health and the start line.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { NodeEngine } from './nodeEngine.js';
import type { EngineName, HttpEngine } from './types.js';
import { UwsEngine, type UwsModule } from './uwsEngine.js';

/** Environment twin of `--http-engine`, so a test run can put every tuicd it starts on one engine. */
export const HTTP_ENGINE_ENV = 'TUIC_HTTP_ENGINE';

/** The uWS builds tuicd knows, fastest first; each binary is loaded by path, never through a fallback of its own. */
const UWS_BUILDS: ReadonlyArray<{ pkg: string; binaryDir: string; label: string }> = [
  // Node 16–20 (ABIs 93, 108, 115), any glibc. Its loader falls back to a slow JS emulation silently: bypassed.
  { pkg: '@trufflesuite/uws-js-unofficial', binaryDir: 'binaries', label: 'uWebSockets.js 20.30 (@trufflesuite build)' },
  // Node 20–25 (ABIs 115, 127, 137, 141), glibc ≥ 2.38.
  { pkg: '@btc-vision/uwebsockets.js', binaryDir: '', label: 'uWebSockets.js 20.57 (@btc-vision build)' },
];

export function parseEngineName(value: string | undefined, source: string): EngineName | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'uws' || value === 'node') return value;
  throw new Error(`${source} must be uws or node, got ${JSON.stringify(value)}`);
}

/** What this process runs on, as the reasons quote it. */
export function platformLabel(): string {
  const major = process.versions.node.split('.')[0];
  const glibc = glibcVersion();
  return `Node ${major} ABI ${process.versions.modules}${glibc ? ` on glibc ${glibc}` : process.platform === 'linux' ? ' on a non-glibc libc' : ` on ${process.platform}`}`;
}

function glibcVersion(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}

type UwsAttempt = { ok: true; module: UwsModule; label: string } | { ok: false; why: string };

/** Loads the first uWS build with a binary for this platform and ABI that the dynamic loader accepts. */
export function loadUws(): UwsAttempt {
  const require = createRequire(import.meta.url);
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const misses: string[] = [];
  for (const build of UWS_BUILDS) {
    const dir = packageDir(build.pkg);
    if (dir === undefined) {
      misses.push(`${build.pkg} not installed`);
      continue;
    }
    const binary = join(dir, build.binaryDir, file);
    try {
      return { ok: true, module: require(binary) as UwsModule, label: build.label };
    } catch (err) {
      const message = (err as Error).message;
      const glibc = /GLIBC_([\d.]+)' not found/.exec(message);
      misses.push(
        glibc
          ? `${build.pkg} needs glibc ≥ ${glibc[1]}`
          : (err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND'
            ? `${build.pkg} has no ${file}`
            : `${build.pkg}: ${message.split('\n')[0]}`,
      );
    }
  }
  return { ok: false, why: misses.join('; ') };
}

/** Where Node would find `pkg`, by its folder: @btc-vision's `exports` hides its package.json from require.resolve. */
function packageDir(pkg: string): string | undefined {
  const require = createRequire(import.meta.url);
  return (require.resolve.paths(pkg) ?? []).map((base) => join(base, pkg)).find((dir) => existsSync(join(dir, 'package.json')));
}

/**
 * `forced`: from --http-engine or TUIC_HTTP_ENGINE. Forcing uws where no build loads is an error
 * that says why, not a silent fallback.
 */
export function selectEngine(forced?: EngineName): HttpEngine {
  const where = platformLabel();
  if (forced === 'node') return new NodeEngine(`node:http + ws, forced (uWS not tried), ${where}`);
  const uws = loadUws();
  if (uws.ok) return new UwsEngine(uws.module, `${uws.label} on ${where}${forced ? ', forced' : ''}`);
  if (forced === 'uws') throw new Error(`--http-engine uws: uWS unavailable for ${where} (${uws.why})`);
  return new NodeEngine(`uWS unavailable for ${where} (${uws.why})`);
}

/**
 * The engine a TCP listener serving TLS and plain HTTP on one port runs on: `engine` when it can,
 * else Node's http + ws. Only that listener moves; the unix socket stays on `engine`.
 */
export function dualProtocolEngine(engine: HttpEngine): HttpEngine {
  if (engine.servesDualProtocol) return engine;
  return new NodeEngine(`node:http + ws for the TLS listener (${engine.name} cannot serve TLS and plain HTTP on one port), ${platformLabel()}`);
}
