// Whether dist/ was built from the sources as they are now. `npm start` used to run the whole tsc
// build first (40–50 s here) even when nothing had changed, so a restart stayed down that long.
// The stamp is a digest of every build input's path, size and modification time, written after a
// build succeeds: any edit, new file, deleted file or changed lock file changes it.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Source trees tsc compiles (tsconfig.json "include") plus the /mobile page's. */
export const SOURCE_DIRS = ['supervisor', 'workers', 'shared', 'bridge', 'bench', 'test', 'scripts', 'web'];
/** Single files whose change changes the output. */
export const SOURCE_FILES = ['tsconfig.json', 'package.json', 'package-lock.json'];
export const STAMP_FILE = join('dist', '.build-stamp');

function* filesUnder(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (entry.isFile()) yield path;
  }
}

/** A digest of every input's relative path, size and mtime, in a stable order. */
export function inputDigest(root) {
  const paths = [];
  for (const dir of SOURCE_DIRS) for (const file of filesUnder(join(root, dir))) paths.push(file);
  for (const file of SOURCE_FILES) if (existsSync(join(root, file))) paths.push(join(root, file));
  paths.sort();
  const hash = createHash('sha256');
  for (const path of paths) {
    const st = statSync(path);
    hash.update(`${relative(root, path)}\0${st.size}\0${st.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** True when dist/ holds a build of exactly these inputs. */
export function isBuildCurrent(root) {
  try {
    return readFileSync(join(root, STAMP_FILE), 'utf8').trim() === inputDigest(root);
  } catch {
    return false;
  }
}

/** `digest`: the inputs as they were when the build started (default: as they are now). */
export function writeBuildStamp(root, digest = inputDigest(root)) {
  writeFileSync(join(root, STAMP_FILE), `${digest}\n`);
}
