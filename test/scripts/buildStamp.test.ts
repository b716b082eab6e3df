/** `npm start` skips the build only when dist/ was built from exactly the sources present now. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { REPO_ROOT } from '../helpers/node22.js';

interface BuildStamp {
  inputDigest(root: string): string;
  isBuildCurrent(root: string): boolean;
  writeBuildStamp(root: string, digest?: string): void;
}

let stamp: BuildStamp;
let root: string;

before(async () => {
  stamp = (await import(join(REPO_ROOT, 'scripts', 'buildStamp.mjs'))) as BuildStamp;
  root = mkdtempSync(join(tmpdir(), 'tuicd-stamp-'));
  for (const dir of ['supervisor', 'web/mobile', 'dist']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'supervisor', 'main.ts'), 'export {};\n');
  writeFileSync(join(root, 'web', 'mobile', 'app.ts'), 'export {};\n');
  writeFileSync(join(root, 'package-lock.json'), '{}\n');
});
after(() => rmSync(root, { recursive: true, force: true }));

test('no stamp means a build is needed; a stamp written after the build makes it current', () => {
  assert.equal(stamp.isBuildCurrent(root), false);
  stamp.writeBuildStamp(root);
  assert.equal(stamp.isBuildCurrent(root), true);
});

test('an edited, added or deleted source, or a reinstalled dependency, makes the build stale', () => {
  const edits: Array<[string, () => void]> = [
    ['edited source', () => writeFileSync(join(root, 'supervisor', 'main.ts'), 'export const x = 1;\n')],
    ['touched source', () => utimesSync(join(root, 'web', 'mobile', 'app.ts'), new Date(), new Date(Date.now() + 5000))],
    ['new source', () => writeFileSync(join(root, 'supervisor', 'extra.ts'), 'export {};\n')],
    ['deleted source', () => unlinkSync(join(root, 'supervisor', 'extra.ts'))],
    ['new lock file', () => writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n')],
  ];
  for (const [what, edit] of edits) {
    stamp.writeBuildStamp(root);
    assert.equal(stamp.isBuildCurrent(root), true, `current before the ${what}`);
    edit();
    assert.equal(stamp.isBuildCurrent(root), false, `stale after the ${what}`);
  }
});

test('a source edited while the build ran leaves the build stale: the stamp holds the digest taken at its start', () => {
  const atStart = stamp.inputDigest(root);
  writeFileSync(join(root, 'supervisor', 'main.ts'), 'export const during = 1;\n');
  stamp.writeBuildStamp(root, atStart);
  assert.equal(stamp.isBuildCurrent(root), false);
});

test('what is built is not an input: writing into dist/ keeps the build current', () => {
  stamp.writeBuildStamp(root);
  writeFileSync(join(root, 'dist', 'main.js'), 'export {};\n');
  assert.equal(stamp.isBuildCurrent(root), true);
});
