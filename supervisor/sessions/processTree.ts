/**
 * A session's leaf process: from the session's process down through its only child while there is
 * exactly one (`sh -c` → `node` → the agent), read from /proc (Linux; each task's `children` file).
 * Where a process has several children the walk stops there: no one of them is "the" leaf.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Deeper chains than this are not followed (a loop of stale reads cannot spin). */
const MAX_DEPTH = 32;

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (c !== '' && c !== '\n') out.push(Number(c));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The leaf pid under `pid` (itself when it has no child or several); null when the process is gone. */
export function leafPid(pid: number): number | null {
  try {
    readFileSync(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
  let leaf = pid;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const children = childrenOf(leaf);
    if (children.length !== 1) break;
    leaf = children[0]!;
  }
  return leaf;
}
