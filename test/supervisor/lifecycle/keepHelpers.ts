/** Shared by the keep-sessions tests: counting shells, the detached pty host's pid, and killing whatever a test left. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { isHostOf } from '../../../supervisor/hosts/ptyHostState.js';
import type { Tuicd } from '../../helpers/tuicdProcess.js';

export const COUNTER = ['-c', 'i=0; while :; do i=$((i+1)); echo "c$i"; sleep 0.05; done'];

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The detached pty host's pid from its state file, while that pid still is this dir's host; null
 * otherwise. A pid read from a file left behind may belong to another test's process by now.
 */
export function hostPid(configDir: string): number | null {
  const statePath = join(configDir, 'pty-host.json');
  try {
    const pid = (JSON.parse(readFileSync(statePath, 'utf8')) as { pid: number }).pid;
    return isHostOf(pid, statePath) ? pid : null;
  } catch {
    return null;
  }
}

export async function createCounter(t: Tuicd, cwd: string, extra: object = {}): Promise<{ session_id: string; pid: number }> {
  const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd, shell: '/bin/sh', args: COUNTER, ...extra }), { 'content-type': 'application/json' });
  if (r.status !== 201) throw new Error(`POST /sessions: ${r.status} ${r.text}`);
  return r.json();
}

/** The counter values in `text`, in order. */
export function counts(text: string): number[] {
  return [...text.matchAll(/c(\d+)\r?\n/g)].map((m) => Number(m[1]));
}

/** Consecutive, no value twice, no value missing. */
export function assertConsecutive(values: number[]): void {
  for (let i = 1; i < values.length; i++) {
    if (values[i] !== values[i - 1]! + 1) throw new Error(`counter jumps from ${values[i - 1]} to ${values[i]} at ${i} of ${values.length}`);
  }
}

/** Kills every pid given (process groups for sessions) and the detached host: a test's last word. */
export function killAll(configDir: string, sessionPids: number[]): void {
  for (const pid of sessionPids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  const host = hostPid(configDir);
  if (host !== null && isAlive(host)) process.kill(host, 'SIGKILL');
}
