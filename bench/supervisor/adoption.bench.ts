/**
 * Adoption (issue 31 "Benchmarks"): how long a tuicd takes from its start to serving every session
 * of a pty host the previous tuicd left behind (200 idle shells; the previous one was SIGKILLed),
 * against a cold start of the same build with no session (start to the first GET /sessions
 * answered). Ratio = adoption / cold start. Every process is ended after each run (the detached pty
 * host too, by its pid).
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { errorText, failedRow, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { spawnTracked, type Tracked } from '../http/children.js';
import { READY_LINE_RE, parseReadyLine } from '../http/readyLine.js';
import { tuicdMainPath } from '../http/targets.js';
import { createSession, inBatches, listSessions } from './sessions/tuicd.js';

const C = {
  SESSIONS: 200,
  SESSIONS_QUICK: 40,
  READY_TIMEOUT_MS: 30_000,
} as const;

interface Started {
  proc: Tracked;
  socketPath: string;
}

async function start(configDir: string): Promise<Started> {
  const proc = spawnTracked(process.execPath, [tuicdMainPath(), '--config-dir', configDir]);
  const m = await proc.waitForLine(READY_LINE_RE, C.READY_TIMEOUT_MS);
  return { proc, socketPath: parseReadyLine(m).socketPath };
}

function hostPid(configDir: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(configDir, 'pty-host.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

function kill(pid: number | null, signal: NodeJS.Signals): void {
  if (pid === null) return;
  try {
    process.kill(pid, signal);
  } catch {
    // Gone.
  }
}

/** Milliseconds from the spawn to GET /sessions listing `expected` sessions. */
async function timeToServe(configDir: string, expected: number): Promise<{ ms: number; started: Started }> {
  const t0 = performance.now();
  const started = await start(configDir);
  for (;;) {
    const rows = await listSessions(started.socketPath);
    if (rows.length >= expected) return { ms: performance.now() - t0, started };
    if (performance.now() - t0 > C.READY_TIMEOUT_MS) throw new Error(`only ${rows.length} of ${expected} sessions served`);
  }
}

async function oneRun(sessions: number): Promise<{ cold: number; adopt: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'tuicd-bench-adopt-'));
  const configDir = join(dir, 'config');
  await mkdir(configDir);
  await writeFile(join(configDir, 'config.json'), JSON.stringify({ services: { server: { enabled: false } } }));
  let current: Started | undefined;
  try {
    const cold = await timeToServe(configDir, 0);
    current = cold.started;
    await inBatches(
      Array.from({ length: sessions }, (_, i) => i),
      8,
      () => createSession(current!.socketPath, '/bin/sh', ['-c', 'sleep 3600']),
    );
    current.proc.child.kill('SIGKILL');
    await new Promise((r) => current!.proc.child.once('exit', r));
    const adopted = await timeToServe(configDir, sessions);
    current = adopted.started;
    return { cold: cold.ms, adopt: adopted.ms };
  } finally {
    const host = hostPid(configDir);
    await current?.proc.stop();
    // SIGTERM stops everything; a host left anyway (a failed run) goes with its sessions.
    kill(host, 'SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const sessions = ctx.quick ? C.SESSIONS_QUICK : C.SESSIONS;
  const group = `adoption: start to ${sessions} sessions served after a SIGKILL, vs a cold start with none`;
  const unit = 'ms (lower is better)';
  const runs: Array<{ cold: number; adopt: number }> = [];
  try {
    for (let rep = 0; rep < ctx.repetitions; rep++) runs.push(await oneRun(sessions));
  } catch (err) {
    return [failedRow(group, 'tuicd', ctx, unit, errorText(err))];
  }
  const cold = row(
    group,
    'cold start (no sessions)',
    ctx,
    unit,
    runs.map((r) => r.cold),
  );
  const adopt = row(
    group,
    `adopting ${sessions} sessions`,
    ctx,
    unit,
    runs.map((r) => r.adopt),
    { name: 'cold start (no sessions)', median: cold.median },
  );
  return [cold, withNote(adopt, 'ratio = adoption / cold start')];
};
