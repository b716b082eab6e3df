/**
 * Issue 13: where no prebuilt node-pty loads, the postinstall (scripts/ptyFallback.mjs) builds
 * node-pty from source into .cache/node-pty-source/ and tuicd's loader uses it. Shown here by
 * installing with --omit=optional, which leaves out the prebuild package just as a platform without
 * one would: first with only node, npm and sh on PATH, where the build must fail saying what it needs,
 * then running the script again with the compilers on PATH.
 */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { compiledBuilds, copyProject, envWithPath, linkTools, npmInstall, onPath, PLATFORM, run, spawnCheck } from './installHarness.js';

const PTY_NODE = '.cache/node-pty-source/node_modules/node-pty/build/Release/pty.node';

test('without a prebuild, the install builds node-pty from source, failing clearly where it cannot', {
  skip: process.platform === 'win32' ? 'the source build is checked on unix only' : false,
  timeout: 300_000,
}, async (t) => {
  const project = copyProject('tuicd-ptyfallback-');
  t.after(() => project.remove());
  // sh as well: npm's node-gyp shim runs under `#!/usr/bin/env sh`, and no machine lacks a shell.
  linkTools(project, process.execPath, ['/bin/sh']);

  // No compiler: the install fails, and says what the build needs.
  const failed = await npmInstall(project, ['--omit=optional']);
  assert.notEqual(failed.code, 0, `the install succeeded without a prebuild or a compiler:\n${failed.output}`);
  assert.match(failed.output, /tuicd: no working prebuilt node-pty for [\w-]+ \(.*\); building node-pty 1\.1\.0 from source/, failed.output);
  assert.match(failed.output, /gyp ERR! find Python/, `the build failed for another reason than the missing toolchain:\n${failed.output}`);
  assert.match(failed.output, /The build needs python3, make, a C\+\+ compiler/, failed.output);
  assert.ok(!existsSync(join(project.dir, `node_modules/@lydell/node-pty-${PLATFORM}`)), '--omit=optional still installed the prebuild');

  // Nothing loads yet: the loader's error says what to do.
  const none = await spawnCheck(project, process.execPath);
  assert.equal(none.kind, undefined);
  assert.match(none.error ?? '', new RegExp(`^node-pty is not available on ${PLATFORM}: `), none.error);
  assert.ok(none.error?.includes(`node ${project.dir}/scripts/ptyFallback.mjs`), none.error);

  const tools = { python3: onPath('python3'), make: onPath('make'), 'a C++ compiler': onPath('c++', 'g++', 'clang++') };
  const missing = Object.entries(tools)
    .filter(([, path]) => !path)
    .map(([name]) => name);
  if (missing.length) {
    t.skip(`the source build itself needs ${missing.join(', ')}, not on PATH here`);
    return;
  }

  // With the compilers: the script builds node-pty, and the loader takes it.
  const built = await run(process.execPath, ['scripts/ptyFallback.mjs'], project.dir, envWithPath(process.env['PATH'] ?? ''), 240_000);
  assert.equal(built.code, 0, built.output);
  assert.match(built.output, /tuicd: node-pty 1\.1\.0 built from source in /, built.output);
  assert.ok(existsSync(join(project.dir, PTY_NODE)), `no ${PTY_NODE}`);
  assert.deepEqual(compiledBuilds(project), ['.cache/node-pty-source/node_modules/node-pty/build'], 'node-gyp built only node-pty, in the fallback prefix');

  const check = await spawnCheck(project, process.execPath);
  assert.equal(check.error, undefined, check.error);
  assert.equal(check.kind, 'source');
  assert.match(check.out ?? '', /^ok\r?\n/, JSON.stringify(check.out));
  assert.equal(check.exitCode, 0);

  // Run again (the next install's postinstall): it keeps the build instead of compiling again.
  const again = await run(process.execPath, ['scripts/ptyFallback.mjs'], project.dir, envWithPath(project.bin), 30_000);
  assert.equal(again.code, 0, again.output);
  assert.match(again.output, /using node-pty built from source in /, again.output);
});
