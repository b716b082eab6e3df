/** Read-side git queries behind the /repo routes: each is one or two `git` runs, parsed. */
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';

import { git, GitError } from './gitRunner.js';

export interface DiffStats {
  additions: number;
  deletions: number;
}

export interface ChangedFile extends DiffStats {
  path: string;
  status: string;
}

/** `git diff --numstat` lines: `adds<TAB>dels<TAB>path`; binary files show `-` and count as 0. */
export function parseNumstat(text: string): Array<{ path: string } & DiffStats> {
  const out: Array<{ path: string } & DiffStats> = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [a, d, ...rest] = line.split('\t');
    out.push({ additions: a === '-' ? 0 : Number(a), deletions: d === '-' ? 0 : Number(d), path: rest.join('\t') });
  }
  return out;
}

export function sumStats(files: readonly DiffStats[]): DiffStats {
  let additions = 0;
  let deletions = 0;
  for (const f of files) {
    additions += f.additions;
    deletions += f.deletions;
  }
  return { additions, deletions };
}

/** Whether HEAD names a commit yet (a fresh `git init` has none: diff against the empty tree then). */
export async function diffBase(cwd: string): Promise<string> {
  try {
    await git(cwd, ['rev-parse', '--verify', '-q', 'HEAD']);
    return 'HEAD';
  } catch {
    return '4b825dc642cb6eb9a060e54bf8d69288fbee4904'; // the empty tree
  }
}

export async function currentBranch(cwd: string): Promise<string | null> {
  try {
    return (await git(cwd, ['symbolic-ref', '--short', '-q', 'HEAD'])).trim() || null;
  } catch {
    return null; // detached HEAD
  }
}

export function initialsOf(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  if (words.length === 0) return '?';
  if (words.length === 1) return words[0]!.slice(0, 2).toUpperCase();
  return (words[0]![0]! + words[1]![0]!).toUpperCase();
}

export interface StatusEntry {
  path: string;
  /** Two-letter porcelain code (`XY`): index then work tree. */
  code: string;
  staged: boolean;
  unstaged: boolean;
  untracked: boolean;
}

/** `git status --porcelain=v1 -z`: renames carry their source as a second NUL-separated field. */
export async function porcelainStatus(cwd: string): Promise<StatusEntry[]> {
  const raw = await git(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
  const parts = raw.split('\0');
  const out: StatusEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const item = parts[i]!;
    if (item.length < 4) continue;
    const code = item.slice(0, 2);
    const path = item.slice(3);
    if (code[0] === 'R' || code[0] === 'C') i++; // skip the rename source
    const untracked = code === '??';
    out.push({ path, code, untracked, staged: !untracked && code[0] !== ' ', unstaged: !untracked && code[1] !== ' ' });
  }
  return out;
}

export async function repoInfo(cwd: string): Promise<Record<string, unknown>> {
  const name = basename(cwd);
  let top: string;
  try {
    top = (await git(cwd, ['rev-parse', '--show-toplevel'])).trim();
  } catch {
    return { path: cwd, name, initials: initialsOf(name), branch: null, status: 'not-git', is_git_repo: false };
  }
  const [branch, entries, merging] = await Promise.all([
    currentBranch(top),
    porcelainStatus(top),
    git(top, ['rev-parse', '-q', '--verify', 'MERGE_HEAD']).then(
      () => true,
      () => false,
    ),
  ]);
  const conflicted = entries.some((e) => e.code.includes('U') || e.code === 'AA' || e.code === 'DD');
  const status = conflicted ? 'conflict' : merging ? 'merge' : entries.length > 0 ? 'dirty' : 'clean';
  return { path: top, name: basename(top), initials: initialsOf(basename(top)), branch, status, is_git_repo: true };
}

/** Changed files against HEAD (staged and unstaged) with their line counts; untracked files count their lines as added. */
export async function changedFiles(cwd: string): Promise<ChangedFile[]> {
  const base = await diffBase(cwd);
  const [numstat, status] = await Promise.all([git(cwd, ['diff', '--numstat', '--no-renames', base]), porcelainStatus(cwd)]);
  const counts = new Map(parseNumstat(numstat).map((f) => [f.path, f]));
  return Promise.all(
    status.map(async (e) => {
      const c = e.untracked ? { additions: await untrackedLines(join(cwd, e.path)), deletions: 0 } : counts.get(e.path);
      const st = e.untracked ? 'untracked' : e.code.includes('D') ? 'deleted' : e.code.includes('A') ? 'added' : e.code.includes('R') ? 'renamed' : 'modified';
      return { path: e.path, status: st, additions: c?.additions ?? 0, deletions: c?.deletions ?? 0 };
    }),
  );
}

/** Untracked text files are all additions; big or binary ones count 0, as numstat shows binaries. */
const UNTRACKED_COUNT_MAX_BYTES = 1024 * 1024;
async function untrackedLines(path: string): Promise<number> {
  try {
    if ((await stat(path)).size > UNTRACKED_COUNT_MAX_BYTES) return 0;
    const buf = await readFile(path);
    if (buf.subarray(0, 8000).includes(0)) return 0;
    let n = 0;
    for (const b of buf) if (b === 10) n++;
    return buf.length > 0 && buf[buf.length - 1] !== 10 ? n + 1 : n;
  } catch {
    return 0;
  }
}

export async function diffStats(cwd: string): Promise<DiffStats> {
  return sumStats(parseNumstat(await git(cwd, ['diff', '--numstat', await diffBase(cwd)])));
}

export async function branches(cwd: string, refs: string[]): Promise<Array<Record<string, unknown>>> {
  const fmt = '%(refname)%00%(refname:short)%00%(objectname)%00%(HEAD)%00%(committerdate:unix)%00%(upstream:short)';
  const out = await git(cwd, ['for-each-ref', `--format=${fmt}`, '--sort=-committerdate', ...refs]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref, name, sha, head, ts, upstream] = line.split('\0');
      return { name, is_remote: ref!.startsWith('refs/remotes/'), is_current: head === '*', sha, last_commit_ts: Number(ts), upstream: upstream || null };
    })
    .filter((b) => !(b.is_remote && String(b.name).endsWith('/HEAD')));
}

export interface CommitEntry {
  sha: string;
  short_sha: string;
  author: string;
  email: string;
  timestamp: number;
  subject: string;
}

/** `git log` of `ref`, newest first; with `followFile`, that file's commits under its earlier names too (`--follow`). */
export async function commitLog(cwd: string, count: number, ref = 'HEAD', followFile?: string): Promise<CommitEntry[]> {
  let out: string;
  try {
    const follow = followFile === undefined ? [] : ['--follow'];
    out = await git(cwd, [
      'log',
      ...follow,
      `-n${count}`,
      '--format=%H%x00%h%x00%an%x00%ae%x00%ct%x00%s',
      ref,
      '--',
      ...(followFile === undefined ? [] : [followFile]),
    ]);
  } catch (err) {
    // A repository without commits has no history: an empty answer, not an error.
    if (err instanceof GitError && /does not have any commits|unknown revision/.test(err.stderr)) return [];
    throw err;
  }
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [sha, short, author, email, ts, subject] = line.split('\0');
      return { sha: sha!, short_sha: short!, author: author!, email: email!, timestamp: Number(ts), subject: subject ?? '' };
    });
}

export const MAIN_BRANCH_NAMES = ['main', 'master', 'develop'];

/** Linked worktrees of a repository from `git worktree list --porcelain`. */
export interface WorktreeEntry {
  path: string;
  head: string | null;
  branch: string | null;
  bare: boolean;
  detached: boolean;
  prunable: boolean;
}

export async function worktreeList(cwd: string): Promise<WorktreeEntry[]> {
  const out = await git(cwd, ['worktree', 'list', '--porcelain']);
  const list: WorktreeEntry[] = [];
  let cur: WorktreeEntry | null = null;
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree ')) {
      cur = { path: line.slice(9), head: null, branch: null, bare: false, detached: false, prunable: false };
      list.push(cur);
    } else if (cur && line.startsWith('HEAD ')) cur.head = line.slice(5);
    else if (cur && line.startsWith('branch ')) cur.branch = line.slice(7).replace(/^refs\/heads\//, '');
    else if (cur && line === 'bare') cur.bare = true;
    else if (cur && line === 'detached') cur.detached = true;
    else if (cur && line.startsWith('prunable')) cur.prunable = true;
  }
  return list;
}

export async function mergedBranches(cwd: string): Promise<string[]> {
  const out = await git(cwd, ['branch', '--merged', 'HEAD', '--format=%(refname:short)']);
  return out.split('\n').filter(Boolean);
}
