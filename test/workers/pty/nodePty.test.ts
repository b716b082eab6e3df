/**
 * workers/pty/nodePty.ts: which node-pty the pty host uses. The prebuilt @lydell/node-pty first,
 * else the source build scripts/ptyFallback.mjs made, else an error that says what to do. The
 * choice runs on an injected module loader; the real load is checked once on this machine.
 */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { loadNodePty, type ModuleLoader, NodePtySources } from '../../../workers/pty/nodePty.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

const fakePty = (name: string) => ({
  spawn: () => {
    throw new Error(`${name} spawn called`);
  },
  name,
});

function notFound(specifier: string): Error {
  return Object.assign(new Error(`Cannot find module '${specifier}'\nRequire stack:\n- somewhere`), { code: 'MODULE_NOT_FOUND' });
}

/** A loader over a table of modules (an Error value is thrown); records what was asked for. */
function loaderOf(table: Record<string, unknown>): { load: ModuleLoader; asked: string[] } {
  const asked: string[] = [];
  const load: ModuleLoader = (specifier, from) => {
    asked.push(`${specifier} from ${from}`);
    const value = table[`${specifier} from ${from}`];
    if (value instanceof Error) throw value;
    if (value === undefined) throw notFound(specifier);
    return value;
  };
  return { load, asked };
}

const PREBUILT_KEY = `@lydell/node-pty from ${ROOT}`;
const SOURCE_KEY = `node-pty from ${NodePtySources.SOURCE_PREFIX}`;

test('the prebuilt @lydell/node-pty is used where it loads, and the source build is not looked at', () => {
  const prebuilt = fakePty('prebuilt');
  const { load, asked } = loaderOf({ [PREBUILT_KEY]: prebuilt, [SOURCE_KEY]: fakePty('source') });
  const got = loadNodePty(load, 'linux-x64');
  assert.equal(got.kind, 'prebuilt');
  assert.equal(got.module, prebuilt);
  assert.deepEqual(asked, [PREBUILT_KEY]);
});

test('without a prebuild (binary package missing), the node-pty built into the fallback prefix is used', () => {
  const source = fakePty('source');
  const missingBinary = new Error('The @lydell/node-pty package currently does not support your platform: linux-riscv64');
  const { load, asked } = loaderOf({ [PREBUILT_KEY]: missingBinary, [SOURCE_KEY]: source });
  const got = loadNodePty(load, 'linux-riscv64');
  assert.equal(got.kind, 'source');
  assert.equal(got.module, source);
  assert.deepEqual(asked, [PREBUILT_KEY, SOURCE_KEY]);
});

test('a prebuild that resolves but does not load (musl libc refusing the glibc build) also falls back to the source build', () => {
  const dlopen = Object.assign(new Error('Error relocating pty.node: __memcpy_chk: symbol not found'), { code: 'ERR_DLOPEN_FAILED' });
  const { load } = loaderOf({ [PREBUILT_KEY]: dlopen, [SOURCE_KEY]: fakePty('source') });
  assert.equal(loadNodePty(load, 'linux-x64').kind, 'source');
});

test('a module without spawn() is not taken for node-pty', () => {
  const { load } = loaderOf({ [PREBUILT_KEY]: { notSpawn: true }, [SOURCE_KEY]: fakePty('source') });
  assert.equal(loadNodePty(load, 'linux-x64').kind, 'source');
});

test('with neither, the error names the platform, both failures, the fallback prefix, the script to run and what the build needs', () => {
  const missingBinary = new Error('The @lydell/node-pty package currently does not support your platform: freebsd-x64\nmore detail');
  const { load } = loaderOf({ [PREBUILT_KEY]: missingBinary });
  assert.throws(
    () => loadNodePty(load, 'freebsd-x64'),
    (err: Error) => {
      assert.match(err.message, /^node-pty is not available on freebsd-x64: /);
      assert.ok(err.message.includes('(The @lydell/node-pty package currently does not support your platform: freebsd-x64)'), err.message);
      assert.ok(!err.message.includes('more detail'), 'only the first line of each failure');
      assert.ok(err.message.includes("Cannot find module 'node-pty'"), err.message);
      assert.ok(err.message.includes(NodePtySources.SOURCE_PREFIX), err.message);
      assert.ok(err.message.includes(`node ${NodePtySources.FALLBACK_SCRIPT}`), err.message);
      assert.match(err.message, /python3, make and a C\+\+ compiler/);
      assert.equal(err.cause, missingBinary);
      return true;
    },
  );
});

test('on this machine the real loader takes the prebuilt node-pty where a prebuild package exists for the platform', (t) => {
  const prebuildPlatforms = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64'];
  const platform = `${process.platform}-${process.arch}`;
  if (!prebuildPlatforms.includes(platform)) {
    t.skip(`@lydell/node-pty 1.1.0 has no prebuild for ${platform}`);
    return;
  }
  const got = loadNodePty();
  assert.equal(got.kind, 'prebuilt');
  assert.equal(typeof got.module.spawn, 'function');
});

test('the loader looks for the source build where scripts/ptyFallback.mjs puts it', async () => {
  const script = (await import(pathToFileURL(`${ROOT}scripts/ptyFallback.mjs`).href)) as { SOURCE_PREFIX: string; NODE_PTY_SOURCE_VERSION: string };
  assert.equal(NodePtySources.SOURCE_PREFIX, script.SOURCE_PREFIX);
  assert.equal(NodePtySources.FALLBACK_SCRIPT, `${ROOT}scripts/ptyFallback.mjs`);
  assert.match(script.NODE_PTY_SOURCE_VERSION, /^\d+\.\d+\.\d+$/, 'the source build is pinned to a release');
});

test('workers/pty/nodePty.ts is the only importer of node-pty in supervisor/, workers/, shared/ and bridge/', () => {
  const importSpecifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+|\bexport\s+\*\s+from\s*)['"]([^'"]+)['"]/gm;
  const isNodePty = (spec: string) =>
    ['node-pty', '@lydell/node-pty'].some((name) => spec === name || spec.startsWith(`${name}/`) || spec.startsWith(`${name}-`));
  const tsFiles = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) return tsFiles(full);
      return name.endsWith('.ts') ? [full] : [];
    });
  const importers = ['supervisor', 'workers', 'shared', 'bridge']
    .flatMap((dir) => tsFiles(join(ROOT, dir)))
    .filter((file) => [...readFileSync(file, 'utf8').matchAll(importSpecifier)].some((m) => isNodePty(m[1]!)))
    .map((file) => relative(ROOT, file));
  assert.deepEqual(importers, ['workers/pty/nodePty.ts']);
});
