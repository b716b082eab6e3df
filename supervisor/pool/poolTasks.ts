/**
 * Work that must not run on the supervisor's event loop (content search over thousands of files,
 * parsing big git outputs, many git runs at once): piscina runs these named exports on worker threads.
 * Plain data in, plain data out; nothing here touches supervisor state.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { git } from '../repos/gitRunner.js';
import { diffBase, parseNumstat, sumStats, type DiffStats } from '../repos/gitQueries.js';

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
const READ_CONCURRENCY = 16;

export async function searchContent(task: { repoPath: string; files: string[]; q: SearchQuery; limit: number }): Promise<{ matches: ContentMatch[]; bytes: number; truncated: boolean }> {
  const re = searchRegExp(task.q);
  // A literal, case-sensitive query is first looked for in the raw bytes: most files are rejected without decoding.
  const literal = !task.q.useRegex && task.q.caseSensitive ? Buffer.from(task.q.query, 'utf8') : null;
  const perFile: ContentMatch[][] = new Array(task.files.length);
  let bytes = 0;
  let found = 0;
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= task.files.length || found >= task.limit) return;
      const rel = task.files[i]!;
      let buf: Buffer;
      try {
        buf = await readFile(join(task.repoPath, rel));
      } catch {
        continue; // deleted since listing, a directory (submodule) or unreadable
      }
      if (buf.length > MAX_SEARCHED_FILE_BYTES) continue;
      bytes += buf.length;
      if (buf.subarray(0, BINARY_PROBE_BYTES).includes(0)) continue;
      if (literal && !buf.includes(literal)) continue;
      const text = buf.toString('utf8');
      re.lastIndex = 0;
      if (!re.test(text)) continue;
      const matches: ContentMatch[] = [];
      const lines = text.split('\n');
      for (let n = 0; n < lines.length; n++) {
        let line = lines[n]!;
        if (line.endsWith('\r')) line = line.slice(0, -1);
        re.lastIndex = 0;
        let m: RegExpExecArray | null;
        while ((m = re.exec(line)) !== null) {
          if (m[0].length === 0) {
            re.lastIndex++;
            continue;
          }
          if (m.index >= MAX_LINE_CHARS) break;
          matches.push({ path: rel, line_number: n + 1, line_text: line.slice(0, MAX_LINE_CHARS), match_start: m.index, match_end: Math.min(m.index + m[0].length, MAX_LINE_CHARS) });
        }
      }
      perFile[i] = matches;
      found += matches.length;
    }
  };
  await Promise.all(Array.from({ length: READ_CONCURRENCY }, worker));
  // Listing order, whatever order the reads finished in.
  const all: ContentMatch[] = [];
  for (const m of perFile) if (m) all.push(...m);
  return { matches: all.slice(0, task.limit), bytes, truncated: all.length > task.limit || found >= task.limit };
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

/** Raw text of a git command (a large diff) read and held off the main loop. */
export async function gitText(task: { cwd: string; args: string[] }): Promise<string> {
  return git(task.cwd, task.args);
}

/** How many git processes one batch keeps running at once. */
const BATCH_CONCURRENCY = 8;

export interface BatchStats {
  diff_stats: Record<string, DiffStats | null>;
  last_commit_ts: Record<string, number | null>;
  workspace_statuses: Record<string, 'clean' | 'dirty' | 'error'>;
  errors: Record<string, string>;
}

export async function diffStatsBatch(task: { paths: string[] }): Promise<BatchStats> {
  const result: BatchStats = { diff_stats: {}, last_commit_ts: {}, workspace_statuses: {}, errors: {} };
  let next = 0;
  const one = async (path: string) => {
    try {
      const base = await diffBase(path);
      const [numstat, ts] = await Promise.all([git(path, ['diff', '--numstat', base]), base === 'HEAD' ? git(path, ['log', '-1', '--format=%ct']) : Promise.resolve('')]);
      const files = parseNumstat(numstat);
      result.diff_stats[path] = sumStats(files);
      result.last_commit_ts[path] = ts.trim() === '' ? null : Number(ts.trim());
      result.workspace_statuses[path] = files.length > 0 ? 'dirty' : 'clean';
    } catch (err) {
      result.diff_stats[path] = null;
      result.last_commit_ts[path] = null;
      result.workspace_statuses[path] = 'error';
      result.errors[path] = (err as Error).message;
    }
  };
  const worker = async () => {
    while (next < task.paths.length) await one(task.paths[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, task.paths.length) }, worker));
  return result;
}
