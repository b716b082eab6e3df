/**
 * Work that must not run on the supervisor's event loop (content search over thousands of files,
 * parsing big git outputs, many git runs at once): piscina runs these named exports on worker threads.
 * Plain data in, plain data out; nothing here touches supervisor state.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

import { move } from 'piscina';

import { git } from '../repos/gitRunner.js';
import { diffBase, parseNumstat, sumStats, type DiffStats } from '../repos/gitQueries.js';
import { checkoutFingerprint } from '../repos/checkoutFingerprint.js';
import { gitDirsOf } from '../repos/gitDirs.js';
import { lowerThisThreadsPriority } from './threadPriority.js';

// Loaded as a pool thread's task module: yield the CPU to the supervisor's loop (the main thread
// also imports this module, for searchRegExp, and keeps its priority).
if (!isMainThread) lowerThisThreadsPriority();

/** Files git would show: tracked plus untracked-but-not-ignored (.gitignore honoured). */
export async function listFiles(task: { repoPath: string }): Promise<string[]> {
  const out = await git(task.repoPath, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--deduplicate']);
  return out.split('\0').filter(Boolean);
}

export interface SearchQuery {
  query: string;
  caseSensitive: boolean;
  useRegex: boolean;
  wholeWord: boolean;
}

export interface ContentMatch {
  path: string;
  line_number: number;
  line_text: string;
  /** UTF-16 offsets into line_text, end exclusive. */
  match_start: number;
  match_end: number;
  /** With a search's `context`: that many lines before and after, from the same read. */
  before?: string[];
  after?: string[];
}

/** Builds the one RegExp a search uses; a bad user regex throws a SyntaxError the route turns into 400. */
export function searchRegExp(q: SearchQuery): RegExp {
  let source = q.useRegex ? q.query : q.query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (q.wholeWord) source = `\\b(?:${source})\\b`;
  return new RegExp(source, q.caseSensitive ? 'gu' : 'giu');
}

/** Files larger than this are skipped: they are data, not source anyone searches by line. */
const MAX_SEARCHED_FILE_BYTES = 8 * 1024 * 1024;
/** Git's own rule for "binary": a NUL in the first 8000 bytes. */
const BINARY_PROBE_BYTES = 8000;
const MAX_LINE_CHARS = 1000;
/** One read buffer per thread, grown on demand: no allocation per file. */
let scratch = Buffer.allocUnsafe(1024 * 1024);

/**
 * A file's bytes, read synchronously: this runs on a pool thread, where a blocking read costs nobody
 * else anything and is several times faster than fs.promises (one thread hop per syscall there).
 * The view is valid until the next call. null: unreadable, gone, not a file, or too large.
 */
function readWhole(path: string, noFollow = false): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, noFollow ? constants.O_RDONLY | constants.O_NOFOLLOW : 'r');
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_SEARCHED_FILE_BYTES) return null;
    if (st.size > scratch.length) scratch = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < st.size) {
      const got = readSync(fd, scratch, n, st.size - n, n);
      if (got === 0) break;
      n += got;
    }
    return scratch.subarray(0, n);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * `noFollow`: a file that is a symlink is skipped (a sandboxed search must not read through one to
 * outside). `context`: each match carries that many lines around it, taken from the text searched.
 */
export function searchContent(task: { repoPath: string; files: string[]; q: SearchQuery; limit: number; noFollow?: boolean; context?: number }): {
  matches: ContentMatch[];
  bytes: number;
  truncated: boolean;
} {
  const re = searchRegExp(task.q);
  // A literal query is first looked for in the raw bytes, so most files are rejected without
  // decoding: exact bytes when case matters, else an ASCII-folded copy of the query against a
  // lower-cased view (a non-ASCII query skips the byte filter and is decided by the RegExp alone).
  const literal = !task.q.useRegex ? Buffer.from(task.q.query, 'utf8') : null;
  const foldAscii = literal !== null && !task.q.caseSensitive && /^[\x00-\x7f]*$/.test(task.q.query);
  const needle = literal === null ? null : foldAscii ? Buffer.from(task.q.query.toLowerCase(), 'latin1') : task.q.caseSensitive ? literal : null;
  const matches: ContentMatch[] = [];
  let bytes = 0;
  for (const rel of task.files) {
    if (matches.length > task.limit) break;
    const buf = readWhole(join(task.repoPath, rel), task.noFollow);
    if (buf === null) continue;
    bytes += buf.length;
    if (buf.subarray(0, BINARY_PROBE_BYTES).includes(0)) continue;
    if (needle !== null && !(foldAscii ? lowerAsciiIncludes(buf, needle) : buf.includes(needle))) continue;
    const text = buf.toString('utf8');
    re.lastIndex = 0;
    if (!re.test(text)) continue;
    const lines = text.split('\n');
    const context = task.context ?? 0;
    const lineAt = (n: number): string => {
      const line = lines[n]!;
      return line.endsWith('\r') ? line.slice(0, -1) : line;
    };
    for (let n = 0; n < lines.length; n++) {
      const line = lineAt(n);
      re.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = re.exec(line)) !== null) {
        if (m[0].length === 0) {
          re.lastIndex++;
          continue;
        }
        if (m.index >= MAX_LINE_CHARS) break;
        const match: ContentMatch = {
          path: rel,
          line_number: n + 1,
          line_text: line.slice(0, MAX_LINE_CHARS),
          match_start: m.index,
          match_end: Math.min(m.index + m[0].length, MAX_LINE_CHARS),
        };
        if (context > 0) {
          match.before = [];
          for (let k = Math.max(0, n - context); k < n; k++) match.before.push(lineAt(k));
          match.after = [];
          for (let k = n + 1; k <= Math.min(lines.length - 1, n + context); k++) match.after.push(lineAt(k));
        }
        matches.push(match);
      }
    }
  }
  return { matches: matches.slice(0, task.limit), bytes, truncated: matches.length > task.limit };
}

/**
 * One contiguous shard of the repository's listing, listed here on the pool thread: the file list
 * (tens of thousands of paths) never crosses to the supervisor's thread and back.
 */
export async function searchShard(task: {
  repoPath: string;
  shard: number;
  shards: number;
  q: SearchQuery;
  limit: number;
}): Promise<{ matches: ContentMatch[]; bytes: number; truncated: boolean; files: number; total: number }> {
  const all = await listFiles(task);
  const per = Math.ceil(all.length / task.shards);
  const files = all.slice(task.shard * per, (task.shard + 1) * per);
  return { ...searchContent({ repoPath: task.repoPath, files, q: task.q, limit: task.limit }), files: files.length, total: all.length };
}

/** Whether `needle` (lower-case ASCII) occurs in `buf` with ASCII letters compared case-insensitively. */
function lowerAsciiIncludes(buf: Buffer, needle: Buffer): boolean {
  const first = needle[0]!;
  const firstUpper = first >= 97 && first <= 122 ? first - 32 : first;
  const last = buf.length - needle.length;
  // Next occurrence of each case of the first byte, each found once per pass: no rescanning.
  let nextLower = -2;
  let nextUpper = firstUpper === first ? -1 : -2;
  let i = 0;
  while (i <= last) {
    if (nextLower !== -1 && nextLower < i) nextLower = buf.indexOf(first, i);
    if (nextUpper !== -1 && nextUpper < i) nextUpper = buf.indexOf(firstUpper, i);
    const at = nextLower === -1 ? nextUpper : nextUpper === -1 ? nextLower : Math.min(nextLower, nextUpper);
    if (at === -1 || at > last) return false;
    let k = 1;
    for (; k < needle.length; k++) {
      let c = buf[at + k]!;
      if (c >= 65 && c <= 90) c += 32;
      if (c !== needle[k]) break;
    }
    if (k === needle.length) return true;
    i = at + 1;
  }
  return false;
}

/** File-name search: substring of the path, case-insensitive; basename hits rank first. */
export async function searchFiles(task: { repoPath: string; query: string; limit: number }): Promise<string[]> {
  const files = await listFiles(task);
  const q = task.query.toLowerCase();
  const byName: string[] = [];
  const byPath: string[] = [];
  for (const f of files) {
    const lower = f.toLowerCase();
    if (!lower.includes(q)) continue;
    const base = lower.slice(lower.lastIndexOf('/') + 1);
    (base.includes(q) ? byName : byPath).push(f);
  }
  return [...byName, ...byPath].slice(0, task.limit);
}

/**
 * A big file as the JSON answer `{content, size}`, encoded here: the supervisor gets the bytes moved
 * (not copied) and only writes them. `{over}` when the file is past `cap` by the time it is read.
 */
export function readFileJson(task: { path: string; cap: number }): Uint8Array | { over: number } {
  const bytes = readFileSync(task.path);
  if (bytes.length > task.cap) return { over: bytes.length };
  return move(Buffer.from(JSON.stringify({ content: bytes.toString('utf8'), size: bytes.length }))) as Uint8Array;
}

/** Raw text of a git command (a large diff) read and held off the main loop. */
export async function gitText(task: { cwd: string; args: string[] }): Promise<string> {
  return git(task.cwd, task.args);
}

export interface BatchStats {
  diff_stats: Record<string, DiffStats | null>;
  last_commit_ts: Record<string, number | null>;
  workspace_statuses: Record<string, 'clean' | 'dirty' | 'error'>;
  errors: Record<string, string>;
}

/**
 * Last-commit times: worktrees of one repository share their refs, so one `for-each-ref` per
 * repository answers every checkout on a branch (its HEAD file names the branch); a detached or
 * unusual checkout asks git itself.
 */
async function lastCommitTimes(paths: readonly string[]): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  const byCommon = new Map<string, Array<{ path: string; ref: string }>>();
  for (const path of paths) {
    const dirs = gitDirsOf(path);
    let head = '';
    try {
      if (dirs) head = readFileSync(join(dirs.gitDir, 'HEAD'), 'utf8').trim();
    } catch {
      /* answered by git below */
    }
    const ref = /^ref: (refs\/heads\/.+)$/.exec(head)?.[1];
    if (!dirs || !ref) {
      out.set(path, null);
      continue;
    }
    const list = byCommon.get(dirs.commonDir) ?? [];
    list.push({ path, ref });
    byCommon.set(dirs.commonDir, list);
  }
  await Promise.all(
    [...byCommon.values()].map(async (list) => {
      const refs = new Map<string, number>();
      try {
        for (const line of (await git(list[0]!.path, ['for-each-ref', '--format=%(refname) %(committerdate:unix)', 'refs/heads'])).split('\n')) {
          const at = line.lastIndexOf(' ');
          if (at > 0) refs.set(line.slice(0, at), Number(line.slice(at + 1)));
        }
      } catch {
        /* each path falls back below */
      }
      for (const { path, ref } of list) out.set(path, refs.get(ref) ?? null);
    }),
  );
  // Detached HEADs and anything unresolved: one git run each.
  await Promise.all(
    paths
      .filter((p) => out.get(p) === null)
      .map(async (p) => {
        const ts = (await git(p, ['log', '-1', '--format=%ct']).catch(() => '')).trim();
        out.set(p, ts === '' ? null : Number(ts));
      }),
  );
  return out;
}

/** One checkout's diff stats, with the fingerprint taken just before git read it (null: not cacheable). */
export interface CheckoutStats {
  fingerprint: string | null;
  stats: DiffStats | null;
  status: 'clean' | 'dirty' | 'error';
  error?: string;
}

export interface DiffStatsShardTask {
  paths: string[];
  /** Fingerprints of the answers the caller holds: a checkout still matching one is not diffed again. */
  known: Record<string, string>;
  /** Git processes this shard keeps running at once. */
  concurrency: number;
  /** The batch's last-commit times are read by one shard, alongside its diffs. */
  commitTimesFor?: string[];
}

export interface DiffStatsShardResult {
  fresh: Record<string, CheckoutStats>;
  /** Paths whose fingerprint matched `known`: the caller's answer stands. */
  unchanged: string[];
  commitTimes?: Record<string, number | null>;
}

async function diffOne(path: string, fingerprint: string | null): Promise<CheckoutStats> {
  try {
    // A repository without commits (no HEAD) takes the slow path.
    const numstat = await git(path, ['diff', '--numstat', 'HEAD']).catch(async () => git(path, ['diff', '--numstat', await diffBase(path)]));
    const files = parseNumstat(numstat);
    return { fingerprint, stats: sumStats(files), status: files.length > 0 ? 'dirty' : 'clean' };
  } catch (err) {
    return { fingerprint: null, stats: null, status: 'error', error: (err as Error).message };
  }
}

/**
 * Diff stats for a share of a batch's checkouts. Each checkout's fingerprint is taken first (before
 * git reads anything, so a change during the diff shows in the next fingerprint); one that matches
 * the caller's is skipped, the rest are diffed with `concurrency` git processes at once.
 */
export async function diffStatsShard(task: DiffStatsShardTask): Promise<DiffStatsShardResult> {
  const times = task.commitTimesFor ? lastCommitTimes(task.commitTimesFor) : undefined;
  const result: DiffStatsShardResult = { fresh: {}, unchanged: [] };
  let next = 0;
  const worker = async () => {
    while (next < task.paths.length) {
      const path = task.paths[next++]!;
      const fingerprint = checkoutFingerprint(path);
      if (fingerprint !== null && task.known[path] === fingerprint) result.unchanged.push(path);
      else result.fresh[path] = await diffOne(path, fingerprint);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(task.concurrency, task.paths.length)) }, worker));
  if (times) result.commitTimes = Object.fromEntries(await times);
  return result;
}
