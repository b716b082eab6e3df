/** Shared by the keep-sessions tests: counting shells, the detached pty host's pid, and killing whatever a test left. */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

import { isHostOf } from '../../../supervisor/hosts/ptyHostState.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

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

export interface OrphanedCounter {
  /** The tuicd the test last started in the dir (the first one has exited); `t.after` stops it. */
  tuicd: Tuicd;
  session: { session_id: string; pid: number };
  host: number;
  /** Session pids to kill at the end (a test adds the ones it starts later). */
  pids: number[];
}

/**
 * A tuicd started with --keep-sessions and one counting shell, then SIGTERMed: its pty host holds the
 * session with no supervisor. `t.after` stops whichever tuicd `tuicd` is by then, kills what is left
 * and removes the dir.
 */
export async function orphanedCounter(t: TestContext, dir: string, env: Record<string, string>): Promise<OrphanedCounter> {
  const tuicd = await Tuicd.start({ configDir: dir, env, args: ['--keep-sessions'] });
  const pids: number[] = [];
  const run = { tuicd, pids } as OrphanedCounter;
  t.after(async () => {
    await run.tuicd.stop();
    killAll(dir, pids);
    rmSync(dir, { recursive: true, force: true });
  });
  run.session = await createCounter(tuicd, dir);
  pids.push(run.session.pid);
  run.host = hostPid(dir)!;
  tuicd.child.kill('SIGTERM');
  assert.equal(await tuicd.exited, 0);
  assert.ok(isAlive(run.host) && isAlive(run.session.pid), 'the pty host and the session outlive tuicd');
  return run;
}
