/** The two load generators: wrk over TCP (the ceiling), and our node client (same generator for every variant on unix sockets). */
import { fileURLToPath } from 'node:url';

import { commandExists, cpuSeconds, runToEnd } from './children.js';
import type { LoadgenResult } from './loadgen.js';
import type { Target } from './targets.js';

/** wrk's connection count; the node client opens as many, so both drive 64 requests in flight. */
export const CONNECTIONS = 64;
/** A run may take this much longer than its planned duration before it is killed. */
const RUN_SLACK_MS = 15_000;

export const WRK_MISSING = 'wrk is not installed: apt-get install -y wrk (Debian package; wrk measures the TCP ceiling)';

/** One measured run against one server. */
export interface Measurement {
  rps: number;
  /** Requests the server answered during the window in which its CPU time was read. */
  requestsInCpuWindow: number;
  /** Server CPU seconds (all threads) spent in that window; undefined off Linux. */
  serverCpuS: number | undefined;
  /** Client CPU / wall time for the node client (near 1 = the client was the limit); undefined for wrk. */
  clientCpu?: number;
  /** Non-2xx responses: the figure measured an error path, so the row becomes an error. */
  badStatus?: string;
  /** Socket errors: the figure stands, with a note. */
  socketErrors?: string;
}

let wrkChecked: boolean | undefined;

export function wrkInstalled(): boolean {
  wrkChecked ??= commandExists('wrk', ['-v']);
  return wrkChecked;
}

/** `wrk -t1 -c64 -d<s>s http://host:port/health`; wrk's durations are whole seconds. */
export async function runWrk(target: Target, seconds: number): Promise<Measurement> {
  if (!target.at.tcp) throw new Error(`${target.name} reported no TCP listener in its ready line (was services.server in config.json honoured?)`);
  const { host, port } = target.at.tcp;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/health`;
  const cpu0 = cpuSeconds(target.proc.child.pid!);
  const out = await runToEnd('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '5s', url], seconds * 1000 + RUN_SLACK_MS);
  const cpu1 = cpuSeconds(target.proc.child.pid!);
  if (out.code !== 0) throw new Error(`wrk exited with code ${out.code}: ${out.stderr.trim() || out.stdout.trim()}`);
  return { ...parseWrk(out.stdout), serverCpuS: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 };
}

/** Reads `N requests in Xs`, `Requests/sec:`, `Non-2xx or 3xx responses:` and `Socket errors:` from wrk's report. */
export function parseWrk(text: string): Omit<Measurement, 'serverCpuS'> {
  const rps = /Requests\/sec:\s*([\d.]+)/.exec(text);
  const total = /(\d+) requests in/.exec(text);
  if (!rps || !total) throw new Error(`could not read wrk output: ${text.trim().slice(0, 200)}`);
  const non2xx = Number(/Non-2xx or 3xx responses:\s*(\d+)/.exec(text)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const socketErrors = sock ? sock.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const m: Omit<Measurement, 'serverCpuS'> = { rps: Number(rps[1]), requestsInCpuWindow: Number(total[1]) };
  return withProblems(m, non2xx, socketErrors, Number(total[1]));
}

/** Runs loadgen.js in its own process against the target's unix socket. */
/** A request other than GET /health, sent on every connection. */
export interface LoadgenRequest {
  method: string;
  path: string;
  body?: string;
}

export async function runLoadgen(target: Target, warmupMs: number, durationMs: number, req?: LoadgenRequest, connections = CONNECTIONS): Promise<Measurement> {
  const script = fileURLToPath(new URL('./loadgen.js', import.meta.url));
  const args = [
    script,
    '--socket',
    target.at.socketPath,
    ...(req ? ['--method', req.method, '--path', req.path, ...(req.body === undefined ? [] : ['--body', req.body])] : []),
    '--connections',
    String(connections),
    '--warmup-ms',
    String(warmupMs),
    '--duration-ms',
    String(durationMs),
  ];
  const cpu0 = cpuSeconds(target.proc.child.pid!);
  const out = await runToEnd(process.execPath, args, warmupMs + durationMs + RUN_SLACK_MS);
  const cpu1 = cpuSeconds(target.proc.child.pid!);
  if (out.code !== 0) throw new Error(`load generator exited with code ${out.code}: ${out.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const r = JSON.parse(out.stdout.trim().split('\n').pop()!) as LoadgenResult;
  if (r.requests === 0) throw new Error(`no responses from ${target.at.socketPath}${r.firstError ? `: ${r.firstError}` : ''}`);
  const m: Measurement = {
    rps: r.rps,
    requestsInCpuWindow: r.totalRequests,
    serverCpuS: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
    clientCpu: r.clientCpu,
  };
  return withProblems(m, r.non2xx, r.errors, r.requests, r.firstError);
}

function withProblems<T extends Omit<Measurement, 'serverCpuS'>>(m: T, non2xx: number, errors: number, total: number, firstError?: string): T {
  if (non2xx > 0) m.badStatus = `${non2xx} of ${total} responses were not 2xx`;
  if (errors > 0) m.socketErrors = `${errors} socket errors${firstError ? ` (${firstError})` : ''}`;
  return m;
}
