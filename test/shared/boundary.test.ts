/** shared/ is a leaf: no native, process or server modules. */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

import { importSpecifiers } from '../helpers/importSpecifiers.js';

/** Module specifiers shared/ must never import; a prefix also bans its subpaths. */
const FORBIDDEN = [
  'node-pty',
  '@lydell/node-pty',
  '@trufflesuite/uws-js-unofficial',
  'uWebSockets.js',
  'child_process',
  'node:child_process',
  '@modelcontextprotocol/sdk/server',
];

// From dist/test/shared/ back to the sources (tests run on the emitted JS; shared/ is read as .ts).
const SHARED_DIR = new URL('../../../shared/', import.meta.url).pathname;

/** Every forbidden module `source` imports (static, dynamic, type-only, require, re-export). */
export function forbiddenImports(source: string): string[] {
  return importSpecifiers(source).filter((spec) => FORBIDDEN.some((bad) => spec === bad || spec.startsWith(`${bad}/`)));
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

test('the detector catches every import form and ignores mere mentions', () => {
  assert.deepEqual(forbiddenImports(`import { spawn } from 'node:child_process';`), ['node:child_process']);
  assert.deepEqual(forbiddenImports(`import type { IPty } from "node-pty";`), ['node-pty']);
  assert.deepEqual(forbiddenImports(`import { spawn } from '@lydell/node-pty';`), ['@lydell/node-pty']);
  assert.deepEqual(forbiddenImports(`import type { IPty } from '@lydell/node-pty/node-pty';`), ['@lydell/node-pty/node-pty']);
  assert.deepEqual(forbiddenImports(`const uws = await import('@trufflesuite/uws-js-unofficial');`), ['@trufflesuite/uws-js-unofficial']);
  assert.deepEqual(forbiddenImports(`const cp = require('child_process');`), ['child_process']);
  assert.deepEqual(forbiddenImports(`export * from 'uWebSockets.js';`), ['uWebSockets.js']);
  assert.deepEqual(forbiddenImports(`import '@modelcontextprotocol/sdk/server/index.js';`), ['@modelcontextprotocol/sdk/server/index.js']);
  assert.deepEqual(forbiddenImports(`import {\n  spawn,\n} from 'child_process';`), ['child_process']);
  assert.deepEqual(forbiddenImports(`// shared/ never imports child_process\nimport { x } from './child_process_notes.js';`), []);
  assert.deepEqual(forbiddenImports(`import { Type } from 'typebox';`), []);
});

test('no file under shared/ imports node-pty, uWebSockets.js, child_process or MCP server code', () => {
  const files = tsFiles(SHARED_DIR);
  assert.ok(files.length >= 5, `expected shared/ sources at ${SHARED_DIR}`);
  const offenders = files.flatMap((file) => forbiddenImports(readFileSync(file, 'utf8')).map((spec) => `${relative(SHARED_DIR, file)}: ${spec}`));
  assert.deepEqual(offenders, []);
});
