/** History-side git queries behind the git panel routes: blame and the stash list (a file's log is gitQueries' commitLog). */
import { git } from './gitRunner.js';

export interface BlameLine {
  line: number;
  sha: string;
  author: string;
  timestamp: number;
  summary: string;
  content: string;
}

const BLAME_HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) \d+ (\d+)(?: \d+)?$/;

/**
 * `git blame --porcelain`: each group starts with `<sha> <orig> <final> [<n>]`; a commit's
 * author/summary lines come only with its first group, so they are kept per sha for later groups.
 */
export function parseBlamePorcelain(text: string): BlameLine[] {
  const commits = new Map<string, { author: string; timestamp: number; summary: string }>();
  const out: BlameLine[] = [];
  let sha = '';
  let finalLine = 0;
  for (const raw of text.split('\n')) {
    if (raw.startsWith('\t')) {
      const info = commits.get(sha) ?? { author: '', timestamp: 0, summary: '' };
      out.push({ line: finalLine, sha, author: info.author, timestamp: info.timestamp, summary: info.summary, content: raw.slice(1) });
      continue;
    }
    const header = BLAME_HEADER.exec(raw);
    if (header) {
      sha = header[1]!;
      finalLine = Number(header[2]);
      if (!commits.has(sha)) commits.set(sha, { author: '', timestamp: 0, summary: '' });
      continue;
    }
    const info = commits.get(sha);
    if (!info) continue;
    const space = raw.indexOf(' ');
    const key = space < 0 ? raw : raw.slice(0, space);
    const value = space < 0 ? '' : raw.slice(space + 1);
    if (key === 'author') info.author = value;
    else if (key === 'author-time') info.timestamp = Number(value);
    else if (key === 'summary') info.summary = value;
  }
  return out;
}

export async function fileBlame(cwd: string, file: string, ref: string | null): Promise<BlameLine[]> {
  return parseBlamePorcelain(await git(cwd, ['blame', '--porcelain', ...(ref ? [ref] : []), '--', file]));
}

export interface StashEntry {
  index: number;
  ref: string;
  message: string;
  timestamp: number;
  branch: string | null;
}

/** `git stash list`: the reflog subject is `On <branch>: <message>` or `WIP on <branch>: <sha> <subject>`. */
export async function stashList(cwd: string): Promise<StashEntry[]> {
  const out = await git(cwd, ['stash', 'list', '--format=%gd%x00%gs%x00%ct']);
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref, subject, ts] = line.split('\0') as [string, string, string];
      const m = /^(WIP on|On) ([^:]+): (.*)$/.exec(subject);
      return {
        index: Number(/\{(\d+)\}/.exec(ref)?.[1] ?? -1),
        ref,
        // A named stash shows its name; an unnamed one keeps git's whole "WIP on …" line.
        message: m && m[1] === 'On' ? m[3]! : subject,
        timestamp: Number(ts),
        branch: m ? m[2]! : null,
      };
    });
}
