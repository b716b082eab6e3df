/**
 * The foreground process of a session's terminal, read from /proc (Linux): the shell's stat names
 * its terminal's foreground process group (tpgid), whose leader is the program the user is running.
 * Two small file reads; used for session list's foreground_process and to tell a shell waiting at
 * its prompt from one whose command runs silently (output-based busy/idle cannot see `sleep`).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

export interface Foreground {
  /** Leader of the terminal's foreground process group. */
  pid: number;
  name: string;
  /** True when the session's own process (the shell) holds the foreground: no job runs. */
  isSessionProcess: boolean;
}

/**
 * Agents detected from the foreground process name (agentDetection.ts): when one of these holds the
 * terminal, its composer is what a submit types into, and output activity decides busy/idle.
 */
const AGENT_NAMES = new Set(['claude', 'gemini', 'opencode', 'aider', 'codex', 'amp', 'cursor-agent', 'goose', 'grok', 'droid', 'pi']);

function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the ")" that closes the command name: state ppid pgrp session tty_nr tpgid ...
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * Node 24 renames its main thread, and so the process's comm, to "MainThread": any Node program
 * (an agent launched under its own name included) would read as that. Its argv[0] still names it.
 */
const RENAMED_MAIN_THREAD = 'MainThread';

export function processName(pid: number): string | null {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    if (comm !== RENAMED_MAIN_THREAD) return comm;
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return basename(argv0).slice(0, 15) || comm;
  } catch {
    return null;
  }
}

/** The foreground process group of the terminal `sessionPid` runs on (one stat read); null when unknown. */
export function foregroundPgid(sessionPid: number): number | null {
  const fields = statFields(sessionPid);
  if (!fields) return null;
  const tpgid = Number(fields[5]);
  return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : null;
}

/** The foreground of the terminal `sessionPid` runs on; null when unknown (process gone, no /proc). */
export function foregroundOf(sessionPid: number): Foreground | null {
  const tpgid = foregroundPgid(sessionPid);
  if (tpgid === null) return null;
  const name = processName(tpgid) ?? processName(sessionPid);
  if (name === null) return null;
  return { pid: tpgid, name, isSessionProcess: tpgid === sessionPid };
}

/** True when a non-agent job holds the terminal: the shell is not at its prompt, whatever its output says. */
export function foregroundJobRuns(fg: Foreground | null): boolean {
  return fg !== null && !fg.isSessionProcess && !AGENT_NAMES.has(fg.name.toLowerCase());
}

/**
 * How long a listed foreground name may be reused. `session list` names the foreground of every
 * session on every call; reading /proc for each row made it the bulk of the call's CPU (two sync
 * reads per row). A list is a snapshot for a human or an agent, so a second-old name is fine;
 * submit and wait still read fresh (`foregroundOf`), because they decide on it.
 */
export const FOREGROUND_LIST_TTL_MS = 1_000;

const listCache = new Map<number, { at: number; fg: Foreground | null }>();

/** `foregroundOf` for listings: at most one /proc read per session per FOREGROUND_LIST_TTL_MS. */
export function foregroundForListing(sessionPid: number, nowMs = Date.now()): Foreground | null {
  const hit = listCache.get(sessionPid);
  if (hit && nowMs - hit.at < FOREGROUND_LIST_TTL_MS) return hit.fg;
  if (listCache.size > 4096) {
    // Exited sessions' pids: dropped wholesale rather than tracked, the cache refills within a TTL.
    for (const [pid, entry] of listCache) if (nowMs - entry.at >= FOREGROUND_LIST_TTL_MS) listCache.delete(pid);
  }
  const fg = foregroundOf(sessionPid);
  // "None yet" is not kept: a session listed in the instant after its spawn (before its shell owns
  // the terminal) would otherwise list no foreground for a whole TTL.
  if (fg !== null) listCache.set(sessionPid, { at: nowMs, fg });
  else listCache.delete(sessionPid);
  return fg;
}
