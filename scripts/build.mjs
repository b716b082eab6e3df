// `npm run build`: tsc, then the /mobile page, then the stamp that lets `npm start` skip both.
// With --if-stale (what `npm start` and `npm run bench` run first) a current build is left as is.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { inputDigest, isBuildCurrent, writeBuildStamp } from './buildStamp.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const require = createRequire(import.meta.url);

if (process.argv.includes('--if-stale') && isBuildCurrent(root)) {
  process.stderr.write('tuicd: build is current (dist/ matches the sources), not rebuilding\n');
} else {
  // Deleted first: a build that fails half-way must not leave an old stamp vouching for it. The digest
  // is taken before the build: a source edited while it runs must make the next start build again.
  rmSync(`${root}dist/.build-stamp`, { force: true });
  const digest = inputDigest(root);
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', `${root}tsconfig.json`], { stdio: 'inherit' });
  execFileSync(process.execPath, [`${root}scripts/buildMobile.mjs`], { stdio: 'inherit' });
  writeBuildStamp(root, digest);
}
