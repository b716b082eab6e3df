/**
 * A tuicd under test for the session benches: its own process on a unix socket only (no TCP
 * listener), plus the few REST calls the benches make and the RSS of it and its pty host.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { spawnTracked, type Tracked } from '../../http/children.js';
import { engineArgs, engineOfReadyLine, engineUnavailable, type EngineInUse, type TuicdEngine } from '../../http/engines.js';
import { parseReadyLine, READY_LINE_RE } from '../../http/readyLine.js';
import { tuicdMainPath } from '../../http/targets.js';

/** tuicd's start-up contract: the ready line within 10 s (bench/README.md). */
const READY_TIMEOUT_MS = 10_000;
/** One REST call; session creation on a loaded machine is the slowest. */
const REQUEST_TIMEOUT_MS = 15_000;

export interface TuicdUnderTest {
  socketPath: string;
  pid: number;
  proc: Tracked;
  /** The HTTP engine its start line names (absent from builds that do not say). */
  engine?: EngineInUse;
  /** Removes its sessions' processes (SIGTERM: the pty host kills them), then the temp dir. */
  stop(): Promise<void>;
}

/**
 * Starts `node dist/supervisor/main.js --config-dir <tmp>` with the TCP listener off; `engine`
 * forces its HTTP engine (`--http-engine`, confirmed by the start line), otherwise tuicd picks.
 */
/** `mainPath`: another build's dist/supervisor/main.js (--baseline-ref); the current build by default. */
export async function startTuicd(engine?: TuicdEngine, mainPath?: string): Promise<TuicdUnderTest> {
  const unavailable = engineUnavailable(engine);
  if (unavailable) throw new Error(unavailable);
  const main = mainPath ?? tuicdMainPath();
  if (!existsSync(main)) throw new Error(`${main} not found: tuicd is not built yet (npm run build)`);
  const dir = await mkdtemp(join(tmpdir(), 'tuicd-bench-sessions-'));
  const configDir = join(dir, 'config');
  await mkdir(configDir, { recursive: true });
  // Unix socket only: nothing of the bench listens beyond this machine.
  await writeFile(join(configDir, 'config.json'), JSON.stringify({ services: { server: { enabled: false } } }));
  const proc = spawnTracked(process.execPath, [main, '--config-dir', configDir, ...engineArgs(engine)]);
  const cleanup = async (): Promise<void> => {
    await proc.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const m = await proc.waitForLine(READY_LINE_RE, READY_TIMEOUT_MS);
    const inUse = engineOfReadyLine(m.input ?? m[0], engine);
    return { socketPath: parseReadyLine(m).socketPath, pid: proc.child.pid!, proc, ...(inUse ? { engine: inUse } : {}), stop: cleanup };
  } catch (err) {
    await cleanup();
    throw new Error(`tuicd did not start: ${(err as Error).message}`);
  }
}

export interface HttpAnswer {
  status: number;
  body: string;
}

/** One request over the unix socket, no keep-alive (these are set-up calls, never timed). */
export function request(socketPath: string, method: string, path: string, body?: object): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(
      {
        socketPath,
        method,
        path,
        agent: false,
        timeout: REQUEST_TIMEOUT_MS,
        headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function expectJson<T>(socketPath: string, method: string, path: string, body?: object): Promise<T> {
  const r = await request(socketPath, method, path, body);
  if (r.status < 200 || r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body) as T;
}

/** POST /sessions running `command args` in /tmp on a 24×80 terminal; resolves with the session id. */
/** `agentType`: the session starts as that agent (POST /sessions `agent_type`), so the output parser reads it as one. */
export async function createSession(socketPath: string, command: string, args: string[], agentType?: string): Promise<string> {
  const body = { cwd: tmpdir(), shell: command, args, rows: 24, cols: 80, ...(agentType ? { agent_type: agentType } : {}) };
  const r = await expectJson<{ session_id: string }>(socketPath, 'POST', '/sessions', body);
  return r.session_id;
}

/** DELETE /sessions/:id; a session that is already gone is fine. */
export async function deleteSession(socketPath: string, id: string): Promise<void> {
  const r = await request(socketPath, 'DELETE', `/sessions/${encodeURIComponent(id)}`);
  if (r.status !== 404 && (r.status < 200 || r.status >= 300)) throw new Error(`DELETE /sessions/${id} answered ${r.status}: ${r.body.slice(0, 200)}`);
}

export interface SessionRow {
  session_id: string;
  total_written: number;
}

/** GET /sessions: the live sessions with their output counters. */
export function listSessions(socketPath: string): Promise<SessionRow[]> {
  return expectJson<SessionRow[]>(socketPath, 'GET', '/sessions');
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function inBatches<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/** VmRSS of a process in KiB, from /proc; undefined when it is gone (or off Linux). */
export function rssKiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Reads a process's VmRSS every `everyMs` until stopped; `stop()` gives the largest reading in KiB. */
export function rssSampler(pid: number | undefined, everyMs: number): { stop(): number | undefined } {
  let max: number | undefined;
  const read = (): void => {
    const v = pid === undefined ? undefined : rssKiB(pid);
    if (v !== undefined) max = Math.max(max ?? 0, v);
  };
  read();
  const timer = setInterval(read, everyMs);
  return {
    stop() {
      clearInterval(timer);
      read();
      return max;
    },
  };
}

/** Direct children of a process (from /proc/<pid>/task/<tid>/children, all threads). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone, or off Linux
  }
  return out;
}

/** The pty host: the one child of tuicd running node (started on the first session). */
export function ptyHostPid(tuicdPid: number): number | undefined {
  return childPids(tuicdPid).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('pty');
    } catch {
      return false;
    }
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
