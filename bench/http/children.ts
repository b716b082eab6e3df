/** Child processes of the HTTP benches: every one is tracked and killed by pid when this process exits. */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** SIGTERM first; a child still alive after this long gets SIGKILL. */
const STOP_GRACE_MS = 3000;
/** How many leading and trailing output lines to keep for error messages (a Node stack puts the cause first). */
const KEPT_LINES = 12;

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Runs on normal exit and on process.exit() from run.ts's SIGINT/SIGTERM handler.
  process.on('exit', () => {
    for (const child of live) {
      try {
        if (child.pid) process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** A spawned child whose output is drained (pipes never fill) and whose last lines are kept. */
export interface Tracked {
  child: ChildProcess;
  /** Last lines of stdout and stderr, for error messages. */
  tail(): string;
  /** Resolves with the first line of `from` (stdout unless said) matching `re`; rejects on exit or after `timeoutMs`. */
  waitForLine(re: RegExp, timeoutMs: number, from?: 'stdout' | 'stderr'): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the child has exited. */
  stop(): Promise<void>;
}

export function spawnTracked(command: string, args: string[], options: SpawnOptions = {}): Tracked {
  installExitHook();
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  live.add(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  void exited.then(() => live.delete(child));
  const head: string[] = [];
  const lines: string[] = [];
  const lineWaiters = new Set<(line: string, from: 'stdout' | 'stderr') => void>();
  const onText = (stream: NodeJS.ReadableStream | null, prefix: string): void => {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (text: string) => {
      const parts = (partial + text).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        if (head.length < KEPT_LINES) head.push(prefix + line);
        lines.push(prefix + line);
        if (lines.length > KEPT_LINES) lines.shift();
        for (const w of lineWaiters) w(line, prefix === '' ? 'stdout' : 'stderr');
      }
    });
  };
  onText(child.stdout, '');
  onText(child.stderr, '[stderr] ');

  return {
    child,
    tail: () => lines.join('\n'),
    waitForLine(re, timeoutMs, from = 'stdout') {
      return new Promise((resolve, reject) => {
        const done = (): void => {
          clearTimeout(timer);
          lineWaiters.delete(onLine);
          child.removeListener('exit', onExit);
          child.removeListener('error', onError);
        };
        const onLine = (line: string, stream: 'stdout' | 'stderr'): void => {
          if (stream !== from) return;
          const m = line.match(re);
          if (m) {
            done();
            resolve(m);
          }
        };
        const onExit = (code: number | null, signal: string | null): void => {
          done();
          reject(new Error(`exited (${signal ?? `code ${code}`}) before printing its ready line${outputSuffix(head, lines)}`));
        };
        const onError = (err: Error): void => {
          done();
          reject(err);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ready line within ${timeoutMs / 1000} s${outputSuffix(head, lines)}`));
        }, timeoutMs);
        lineWaiters.add(onLine);
        child.once('exit', onExit);
        child.once('error', onError);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null || !live.has(child)) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The first line that names an error (else the last few lines), for a one-line message. */
function outputSuffix(head: string[], tail: string[]): string {
  const errorLine = [...head, ...tail].find((l) => /error/i.test(l));
  const text = (errorLine ?? tail.slice(-4).join(' | ')).trim();
  return text ? `; output: ${text.slice(0, 300)}` : '';
}

/** Runs a command to completion (bounded by `timeoutMs`) and returns its output; tracked like any child. */
export async function runToEnd(command: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  installExitHook();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
  child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, signal) => (signal === 'SIGKILL' ? reject(new Error(`${command} killed after ${timeoutMs / 1000} s`)) : resolve(c)));
    });
    return { code, stdout, stderr };
  } finally {
    live.delete(child);
  }
}

/** True when `command` can be spawned (it exists on PATH). */
export function commandExists(command: string, probeArgs: string[]): boolean {
  const r = spawnSync(command, probeArgs, { stdio: 'ignore', timeout: 5000 });
  return !(r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT');
}

let clockTicks: number | undefined;

/** CPU seconds (user + system, all threads) a process has used so far, from /proc; undefined off Linux. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
    return ticks / clockTicks;
  } catch {
    return undefined; // no /proc (not Linux) or the process is gone
  }
}
