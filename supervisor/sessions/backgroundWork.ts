/**
 * Background work of an agent (agent_state's third rule, after exited and awaiting input): a meaningful live descendant of the agent
 * process keeps agent_state `working` while its terminal is quiet (a `npm run dev &` it started,
 * a build it is waiting on). Read from /proc (Linux): children lists, names and start times.
 *
 * Not meaningful: the integration helpers agents run beside their work (mdkb, tuic-bridge, node_repl, a timed
 * `caffeinate -i -t N`), and what the agent started with itself (its stdio MCP servers live as
 * long as it does): descendants started within STARTUP_HELPER_WINDOW_S of the agent process.
 */
import { readFileSync } from 'node:fs';

import { processName } from './foreground.js';

export const BackgroundWorkConstants = {
  /** Descendants started this soon after the agent are its own helpers (MCP servers, watchers). */
  STARTUP_HELPER_WINDOW_S: 30,
  /** The answer is reused this long: GET /sessions derives state for every row. */
  CACHE_TTL_MS: 1_000,
  /** Bounds a walk through a runaway process tree. */
  MAX_PROCESSES: 512,
} as const;

const HELPERS = new Set(['mdkb', 'tuic-bridge', 'node_repl']);

/** Linux clock ticks per second (USER_HZ), which /proc/<pid>/stat start times are in. */
const CLOCK_TICKS = 100;

function children(pid: number): number[] {
  const out: number[] = [];
  try {
    // A process's children are listed per thread; the main thread's list has those it forked.
    for (const part of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ')) {
      const child = Number(part);
      if (Number.isInteger(child) && child > 0) out.push(child);
    }
  } catch {
    // Gone, or a kernel without the children file: nothing known below it.
  }
  return out;
}

/** Start time in seconds since boot, or null. */
function startSeconds(pid: number): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const start = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isFinite(start) ? start / CLOCK_TICKS : null;
  } catch {
    return null;
  }
}

function isHelper(pid: number): boolean {
  const name = processName(pid);
  if (name === null) return true; // gone meanwhile
  if (HELPERS.has(name)) return true;
  if (name === 'caffeinate') {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('-t');
    } catch {
      return true;
    }
  }
  return false;
}

/** Whether the process `agentPid` has a live descendant that is work rather than a helper. */
export function hasMeaningfulDescendant(agentPid: number, helperWindowS: number = BackgroundWorkConstants.STARTUP_HELPER_WINDOW_S): boolean {
  const agentStart = startSeconds(agentPid);
  if (agentStart === null) return false;
  const queue = children(agentPid);
  let seen = 0;
  while (queue.length > 0 && seen++ < BackgroundWorkConstants.MAX_PROCESSES) {
    const pid = queue.shift()!;
    const start = startSeconds(pid);
    if (start === null) continue;
    // A helper's own children (an MCP server's workers) are helpers too: not walked.
    if (isHelper(pid) || start - agentStart < helperWindowS) continue;
    return true;
  }
  return false;
}

const cache = new Map<number, { at: number; value: boolean }>();

/** `hasMeaningfulDescendant`, read at most once per CACHE_TTL_MS per agent process. */
export function backgroundWorkOf(agentPid: number, nowMs = Date.now()): boolean {
  const hit = cache.get(agentPid);
  if (hit && nowMs - hit.at < BackgroundWorkConstants.CACHE_TTL_MS) return hit.value;
  if (cache.size > 4096) for (const [pid, e] of cache) if (nowMs - e.at >= BackgroundWorkConstants.CACHE_TTL_MS) cache.delete(pid);
  const value = hasMeaningfulDescendant(agentPid);
  cache.set(agentPid, { at: nowMs, value });
  return value;
}
