/**
 * A checkout's fingerprint: a digest of the stat data of everything `git diff HEAD` reads (HEAD and
 * the ref it names, the index, config and attributes, and every tracked file). While it is unchanged,
 * an earlier diff of the checkout still holds, so a diff-stats batch can skip git for it. Taken on a
 * pool thread: a checkout of 300 files is 300 lstat calls, several times cheaper than starting git.
 *
 * Like git's own "racy clean" rule, a file changed within RACY_WINDOW_MS of the reading is not
 * trusted: a second write in the same clock tick could leave size and times as they were. Such a
 * checkout gets no fingerprint (null) until it has been quiet that long, and git runs every time.
 */
import { createHash, type Hash } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';

import { gitDirsOf } from './gitDirs.js';
import { indexPaths } from './indexPaths.js';

/** Longer than any file system's timestamp granularity that matters here (FAT's is 2 s). */
export const RACY_WINDOW_MS = 2_000;

/** Parsed index listings per index file version (path, inode, size, mtime), so an unchanged index is not parsed again. */
const listings = new Map<string, { key: string; paths: string[] | null }>();
const MAX_LISTINGS = 512;

class StatDigest {
  private readonly hash: Hash = createHash('sha1');
  /** Set once any file read was changed too recently to be trusted. */
  racy = false;

  constructor(private readonly racyAfterNs: bigint) {}

  /** Adds a file's identity and times; a missing file counts as missing (its later creation changes the digest). */
  add(path: string): void {
    const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    if (!st) {
      this.hash.update(`-${path}\n`);
      return;
    }
    if (st.mtimeNs >= this.racyAfterNs || st.ctimeNs >= this.racyAfterNs) this.racy = true;
    this.hash.update(`${st.ino}:${st.size}:${st.mode}:${st.mtimeNs}:${st.ctimeNs}\n`);
  }

  update(text: string): void {
    this.hash.update(text);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

function trackedPaths(indexFile: string, hashBytes: number): string[] | null {
  const st = lstatSync(indexFile, { bigint: true, throwIfNoEntry: false });
  if (!st) return []; // a repository with nothing added yet
  const key = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  const known = listings.get(indexFile);
  if (known?.key === key) return known.paths;
  const paths = indexPaths(readFileSync(indexFile), hashBytes);
  if (listings.size >= MAX_LISTINGS) listings.delete(listings.keys().next().value!);
  listings.set(indexFile, { key, paths });
  return paths;
}

/**
 * Whether a config file sends git to files this digest does not watch: `[include]`/`[includeIf]`
 * sections or a `core.attributesFile`. Such a checkout is always diffed by git.
 */
function namesOtherFiles(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false; // absent: nothing to follow
  }
  return /^\s*\[\s*include(if)?\b/im.test(text) || /^\s*attributesfile\s*=/im.test(text);
}

/** Configuration outside the repository that can change how a diff is counted (attributes, drivers, autocrlf). */
function userConfigFiles(): string[] {
  const home = process.env['HOME'] ?? homedir();
  const xdg = process.env['XDG_CONFIG_HOME'] || join(home, '.config');
  return [
    process.env['GIT_CONFIG_GLOBAL'] ?? join(home, '.gitconfig'),
    join(xdg, 'git', 'config'),
    join(xdg, 'git', 'attributes'),
    process.env['GIT_CONFIG_SYSTEM'] ?? '/etc/gitconfig',
  ];
}

/**
 * The fingerprint of the checkout whose top level is `path`, or null when it cannot be trusted now
 * (not a checkout's top, an index this reader does not vouch for, a submodule, or a recent change).
 */
export function checkoutFingerprint(path: string, nowMs: number = Date.now()): string | null {
  try {
    const dirs = gitDirsOf(path);
    if (!dirs) return null;
    const digest = new StatDigest(BigInt(nowMs - RACY_WINDOW_MS) * 1_000_000n);
    const config = join(dirs.commonDir, 'config');
    const sha256 = /^\s*objectformat\s*=\s*sha256\s*$/im.test(readFileSync(config, 'utf8'));
    const head = readFileSync(join(dirs.gitDir, 'HEAD'), 'utf8');
    digest.update(head);
    digest.add(join(dirs.gitDir, 'HEAD'));
    const ref = /^ref: (refs\/.+)$/m.exec(head)?.[1]?.trim();
    if (ref) digest.add(join(dirs.commonDir, ref));
    digest.add(join(dirs.commonDir, 'packed-refs'));
    // The reftable backend keeps refs (HEAD's too) in tables; each update rewrites tables.list.
    digest.add(join(dirs.commonDir, 'reftable', 'tables.list'));
    if (dirs.gitDir !== dirs.commonDir) digest.add(join(dirs.gitDir, 'reftable', 'tables.list'));
    const configFiles = [config, join(dirs.gitDir, 'config.worktree'), ...userConfigFiles()];
    if (configFiles.some(namesOtherFiles)) return null;
    for (const file of [...configFiles, join(dirs.commonDir, 'info', 'attributes')]) digest.add(file);
    const indexFile = join(dirs.gitDir, 'index');
    digest.add(indexFile);
    const paths = trackedPaths(indexFile, sha256 ? 32 : 20);
    if (paths === null) return null;
    // Attributes files are read even when untracked, from every directory on the way to a tracked file.
    const dirsSeen = new Set<string>();
    for (const rel of paths) {
      digest.add(join(path, rel));
      for (let dir = dirname(rel); !dirsSeen.has(dir); dir = dirname(dir)) {
        dirsSeen.add(dir);
        digest.add(join(path, dir, '.gitattributes'));
        if (dir === '.') break;
      }
    }
    return digest.racy ? null : digest.digest();
  } catch {
    return null;
  }
}
