/**
 * Where a detached pty host is found: an owner-only state file in the config dir naming its pid, its
 * socket and the protocol it speaks. Both the file and the socket are checked (owned by this user,
 * no access for anyone else) before anything connects, so no other user's process is ever adopted.
 */
import { lstatSync, readFileSync, rmSync } from 'node:fs';

import { type PtyHostEnded, type PtyHostState, ptyHostEndedPath, ptyHostStatePath } from '../../shared/ptyHostFiles.js';

export type { PtyHostState };
export const hostStatePath = ptyHostStatePath;

function uid(): number {
  return typeof process.getuid === 'function' ? process.getuid() : 0;
}

/** Owned by this user and closed to everyone else; else why not. */
export function ownerOnlyProblem(path: string, kind: 'file' | 'socket'): string | null {
  const st = lstatSync(path);
  if (kind === 'file' ? !st.isFile() : !st.isSocket()) return `${path} is not a ${kind}`;
  if (st.uid !== uid()) return `${path} belongs to uid ${st.uid}, not to this user (${uid()})`;
  if ((st.mode & 0o077) !== 0) return `${path} has mode ${(st.mode & 0o777).toString(8)}, not owner-only`;
  return null;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `pid` is still the pty host that `statePath` names, not a process that took its pid since
 * (pids are reused, within minutes where pid_max is 32768): on Linux its command line must be a
 * pty host's with `--state statePath`; elsewhere it must run.
 */
export function isHostOf(pid: number, statePath: string): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return process.platform !== 'linux' && isAlive(pid);
  }
  const args = cmdline.split('\0');
  const at = args.indexOf('--state');
  return at >= 0 && args[at + 1] === statePath && args.some((a) => a.endsWith('/workers/pty/main.js'));
}

/** The state file's content: null when there is none; throws when it is not trustworthy or unreadable. */
export function readHostState(path: string): PtyHostState | null {
  let text: string;
  try {
    const problem = ownerOnlyProblem(path, 'file');
    if (problem !== null) throw new Error(`refusing the pty host state file: ${problem}`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const raw = JSON.parse(text) as Partial<PtyHostState>;
  if (!Number.isSafeInteger(raw.pid) || (raw.pid ?? 0) <= 1 || typeof raw.socket !== 'string' || !Number.isSafeInteger(raw.protocol_version)) {
    throw new Error(`pty host state file ${path} is malformed`);
  }
  return { pid: raw.pid!, socket: raw.socket, protocol_version: raw.protocol_version!, instance: raw.instance ?? null, started_ms: raw.started_ms ?? 0 };
}

/**
 * The sessions a host ended with nobody attached (orphan timeout, a protocol change), read once:
 * the file is removed. Null when there is none or it cannot be trusted.
 */
export function takeEndedSessions(statePath: string): PtyHostEnded | null {
  const path = ptyHostEndedPath(statePath);
  try {
    if (ownerOnlyProblem(path, 'file') !== null) return null;
    const ended = JSON.parse(readFileSync(path, 'utf8')) as PtyHostEnded;
    rmSync(path, { force: true });
    if (typeof ended.reason !== 'string' || !Array.isArray(ended.sessions)) return null;
    return ended;
  } catch {
    return null;
  }
}
