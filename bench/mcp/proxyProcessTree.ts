/**
 * CPU time of a server and everything it started: tuicd's stdio upstreams are children of a worker
 * thread, so they are found through /proc/<pid>/task/<tid>/children of every thread, not only the
 * main one. Linux only; elsewhere the figures are undefined.
 */
import { readdirSync, readFileSync } from 'node:fs';

import { cpuSeconds } from '../http/children.js';

/** Every live descendant of `pid` (children of any of its threads, recursively). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (parent: number): void => {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return; // gone, or no /proc
    }
    for (const tid of tasks) {
      let text = '';
      try {
        text = readFileSync(`/proc/${parent}/task/${tid}/children`, 'utf8');
      } catch {
        continue; // the thread ended meanwhile
      }
      for (const child of text.split(' ')) {
        if (!child.trim()) continue;
        out.push(Number(child));
        walk(Number(child));
      }
    }
  };
  walk(pid);
  return out;
}

/** CPU seconds (user + system, all threads) of `pid` alone and of its live descendants together. */
export interface TreeCpu {
  root: number;
  descendants: number;
}

export function treeCpuSeconds(pid: number): TreeCpu | undefined {
  const root = cpuSeconds(pid);
  if (root === undefined) return undefined;
  let below = 0;
  for (const child of descendants(pid)) below += cpuSeconds(child) ?? 0;
  return { root, descendants: below };
}

/** CPU spent between two readings, or undefined when either is missing. */
export function treeCpuDelta(before: TreeCpu | undefined, after: TreeCpu | undefined): TreeCpu | undefined {
  if (!before || !after) return undefined;
  return { root: after.root - before.root, descendants: after.descendants - before.descendants };
}
