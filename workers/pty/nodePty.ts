/**
 * Where node-pty comes from: the one importer of it (ptySession.ts takes it from here).
 * First @lydell/node-pty, node-pty with its native module prebuilt per platform (linux, darwin and
 * win32 on x64 and arm64), so that a normal install compiles nothing. Where that binary is missing
 * or does not load (another arch, musl libc, --omit=optional), the node-pty that the postinstall
 * scripts/ptyFallback.mjs built from source into .cache/node-pty-source/. Loaded on the first spawn,
 * so a missing node-pty fails that spawn with what to do, not the pty host's start; a failed load
 * is tried again on the next spawn (the source build may have been run since).
 */

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import type * as NodePty from '@lydell/node-pty';

export type { IPtyForkOptions } from '@lydell/node-pty';

/**
 * node-pty's IPty as @lydell/node-pty types it, except that write() also takes a Buffer, which the
 * pty host writes. @lydell/node-pty 1.1.0 is node-pty 1.1.0-beta14 repackaged: its typings say
 * `write(data: string)` while its write is a socket write, which takes a Buffer as well; node-pty
 * 1.1.0 (the source build) queues Buffers itself and types `write(data: string | Buffer)`.
 */
export type IPty = Omit<NodePty.IPty, 'write'> & { write(data: string | Buffer): void };

/** What the pty host uses of node-pty, with @lydell/node-pty's typings (the source build has the same API). */
export interface NodePtyModule {
  spawn(file: string, args: string[] | string, options: NodePty.IPtyForkOptions | NodePty.IWindowsPtyForkOptions): IPty;
}

/** Repo (or installed package) root, from dist/workers/pty/ — the same depth as workers/pty/. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const NodePtySources = {
  PREBUILT: '@lydell/node-pty',
  /** scripts/ptyFallback.mjs installs node-pty here (keep the two in step). */
  SOURCE_PREFIX: `${ROOT}.cache/node-pty-source/`,
  FALLBACK_SCRIPT: `${ROOT}scripts/ptyFallback.mjs`,
  BUILD_NEEDS: 'python3, make and a C++ compiler (g++ or clang++)',
} as const;

export interface LoadedNodePty {
  module: NodePtyModule;
  /** 'prebuilt': @lydell/node-pty; 'source': the fallback prefix's node-pty. */
  kind: 'prebuilt' | 'source';
}

/** Loads a module by specifier, the way `require` does; `from` is the directory whose node_modules it searches. */
export type ModuleLoader = (specifier: string, from: string) => unknown;

const requireFrom: ModuleLoader = (specifier, from) => createRequire(`${from}package.json`)(specifier);

function firstLine(err: unknown): string {
  return String((err as Error | undefined)?.message ?? err).split('\n')[0]!;
}

function asNodePty(value: unknown): NodePtyModule {
  if (typeof (value as Partial<NodePtyModule> | null)?.spawn !== 'function') throw new Error('the module has no spawn()');
  return value as NodePtyModule;
}

/**
 * The prebuilt node-pty, else the source build; throws (saying what to do) when neither loads.
 * `load` and `platform` are for tests; by default modules load from the root's node_modules and the
 * fallback prefix.
 */
export function loadNodePty(load: ModuleLoader = requireFrom, platform = `${process.platform}-${process.arch}`): LoadedNodePty {
  const { PREBUILT, SOURCE_PREFIX, FALLBACK_SCRIPT, BUILD_NEEDS } = NodePtySources;
  let prebuiltError: unknown;
  try {
    return { module: asNodePty(load(PREBUILT, ROOT)), kind: 'prebuilt' };
  } catch (err) {
    prebuiltError = err;
  }
  let sourceError: unknown;
  try {
    return { module: asNodePty(load('node-pty', SOURCE_PREFIX)), kind: 'source' };
  } catch (err) {
    sourceError = err;
  }
  throw new Error(
    `node-pty is not available on ${platform}: ${PREBUILT} does not load (${firstLine(prebuiltError)}) ` +
      `and there is no node-pty built from source in ${SOURCE_PREFIX} (${firstLine(sourceError)}). ` +
      `Build it with \`node ${FALLBACK_SCRIPT}\` (the install's postinstall does this unless install scripts were off); ` +
      `the build needs ${BUILD_NEEDS}.`,
    { cause: prebuiltError },
  );
}

let loaded: LoadedNodePty | undefined;

/** node-pty, loaded on first use (see loadNodePty). */
export function nodePty(): LoadedNodePty {
  return (loaded ??= loadNodePty());
}

/** node-pty's spawn, from whichever node-pty loads; throws loadNodePty's error when none does. */
export const spawn: NodePtyModule['spawn'] = (file, args, options) => nodePty().module.spawn(file, args, options);
