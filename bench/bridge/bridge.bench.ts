/**
 * tuic-bridge against the direct path, in the same run: `tools/call session list` through the
 * bridge (stdio → its per-request unix-socket POST) vs straight to tuicd's unix socket (keep-alive),
 * calls/s at 1 and 16 callers and the latency p50; the bridge's cold start to its first answered
 * tools/list beside a bare `node -e 0` start; and its memory once serving (RSS, and PSS, which
 * counts the Node binary's shared pages once across the hundreds of bridges a machine runs) beside
 * an idle bare Node process. Goals (issue 15): ≥ 0.7× direct calls/s; ≤ 150 ms cold start idle.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { runToEnd } from '../http/children.js';
import { startTuicd, type McpTarget } from '../mcp/toolsCallTargets.js';

const BRIDGE_JS = fileURLToPath(new URL('../../bridge/cli.js', import.meta.url));
const DRIVER_JS = fileURLToPath(new URL('./bridgeDriver.js', import.meta.url));
const DURATIONS = { full: { warmupMs: 500, durationMs: 3000 }, quick: { warmupMs: 200, durationMs: 1000 } };
const COLD_SAMPLES = { full: 10, quick: 3 };
const GOAL_RATIO = 0.7;
const GOAL_COLD_MS = 150;

interface DriverResult {
  callsPerS: number;
  p50Ms: number;
  p99Ms: number;
  problem?: string;
}

async function drive(socketPath: string, mode: 'direct' | 'bridge', callers: number, d: { warmupMs: number; durationMs: number }): Promise<DriverResult> {
  const out = await runToEnd(
    process.execPath,
    [
      DRIVER_JS,
      '--mode',
      mode,
      '--socket',
      socketPath,
      '--bridge',
      BRIDGE_JS,
      '--callers',
      String(callers),
      '--warmup-ms',
      String(d.warmupMs),
      '--duration-ms',
      String(d.durationMs),
    ],
    d.warmupMs + d.durationMs + 20_000,
  );
  if (out.code !== 0) throw new Error(`${mode} driver exited ${out.code}: ${out.stderr.slice(-300)}`);
  const result = JSON.parse(out.stdout.trim().split('\n').pop()!) as DriverResult;
  if (result.problem) throw new Error(`${mode}: a call failed: ${result.problem}`);
  return result;
}

function statusKb(pid: number, field: string, file = 'status'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** Spawn → first answered tools/list, in ms; and the bridge's RSS/PSS (MB) right after. */
function coldStart(socketPath: string): Promise<{ ms: number; rssMb: number; pssMb: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [BRIDGE_JS], { env: { ...process.env, TUIC_SOCKET: socketPath }, stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdin.write(
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n',
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (!out.includes('"id":2')) return;
      const ms = performance.now() - t0;
      const rssMb = statusKb(child.pid!, 'VmRSS') / 1024;
      const pssMb = statusKb(child.pid!, 'Pss', 'smaps_rollup') / 1024;
      child.kill();
      resolve({ ms, rssMb, pssMb });
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!out.includes('"id":2')) reject(new Error(`the bridge exited (${code}) before answering tools/list`));
    });
  });
}

function nodeStartMs(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.once('exit', () => resolve(performance.now() - t0));
    child.once('error', reject);
  });
}

/** An idle bare Node process's RSS and PSS (MB): the floor any Node bridge sits on. */
function bareNodeMemory(): Promise<{ rssMb: number; pssMb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log("up")'], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.once('data', () =>
      setTimeout(() => {
        const rssMb = statusKb(child.pid!, 'VmRSS') / 1024;
        const pssMb = statusKb(child.pid!, 'Pss', 'smaps_rollup') / 1024;
        child.kill();
        resolve({ rssMb, pssMb });
      }, 100),
    );
    child.once('error', reject);
  });
}

export const run: BenchModule = async (ctx: BenchContext) => {
  const d = ctx.quick ? DURATIONS.quick : DURATIONS.full;
  const tmp = await mkdtemp(join(tmpdir(), 'tuicd-bench-bridge-'));
  let target: McpTarget | undefined;
  const rows: BenchRow[] = [];
  try {
    target = await startTuicd(tmp);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    return [failedRow('tools/call through tuic-bridge', 'tuic-bridge', ctx, 'calls/s', `tuicd did not start: ${errorText(err)}`)];
  }
  try {
    const socketPath = target.socketPath;
    for (const callers of [1, 16]) {
      const series = { direct: [] as DriverResult[], bridge: [] as DriverResult[] };
      for (let rep = 0; rep < ctx.repetitions; rep++) {
        // Alternated within each repetition, so drift on a shared machine hits both alike.
        series.direct.push(await drive(socketPath, 'direct', callers, d));
        series.bridge.push(await drive(socketPath, 'bridge', callers, d));
      }
      const group = `tools/call session list, ${callers} caller${callers > 1 ? 's' : ''}`;
      const direct = row(
        group,
        'direct unix socket',
        ctx,
        'calls/s',
        series.direct.map((r) => r.callsPerS),
      );
      const bridged = row(
        group,
        'tuic-bridge',
        ctx,
        'calls/s',
        series.bridge.map((r) => r.callsPerS),
        { name: 'direct unix socket', median: direct.median },
      );
      rows.push(direct, withNote(bridged, `goal ≥ ${GOAL_RATIO}× direct`));
      const p50Direct = row(
        `${group}, latency p50`,
        'direct unix socket',
        ctx,
        'ms',
        series.direct.map((r) => r.p50Ms),
      );
      const p50Bridge = row(
        `${group}, latency p50`,
        'tuic-bridge',
        ctx,
        'ms',
        series.bridge.map((r) => r.p50Ms),
        { name: 'direct unix socket', median: p50Direct.median },
      );
      rows.push(p50Direct, withNote(p50Bridge, `adds ${(p50Bridge.median - p50Direct.median).toFixed(3)} ms`));
    }

    const samples = ctx.quick ? COLD_SAMPLES.quick : COLD_SAMPLES.full;
    const cold = { bridge: [] as number[], node: [] as number[], rss: [] as number[], pss: [] as number[] };
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      const bridgeMs: number[] = [];
      const nodeMs: number[] = [];
      for (let i = 0; i < samples; i++) {
        nodeMs.push(await nodeStartMs());
        const c = await coldStart(socketPath);
        bridgeMs.push(c.ms);
        cold.rss.push(c.rssMb);
        cold.pss.push(c.pssMb);
      }
      cold.bridge.push(median(bridgeMs));
      cold.node.push(median(nodeMs));
    }
    const nodeRow = row('bridge cold start (spawn → answered tools/list)', 'node -e 0 (spawn → exit)', ctx, 'ms', cold.node);
    const bridgeRow = row('bridge cold start (spawn → answered tools/list)', 'tuic-bridge', ctx, 'ms', cold.bridge, {
      name: 'node -e 0 (spawn → exit)',
      median: nodeRow.median,
    });
    rows.push(nodeRow, withNote(bridgeRow, `goal ≤ ${GOAL_COLD_MS} ms idle`));

    const bare = await Promise.all(Array.from({ length: ctx.repetitions }, () => bareNodeMemory()));
    const bareRss = row(
      'memory per process',
      'idle bare node, RSS',
      ctx,
      'MB',
      bare.map((b) => b.rssMb),
    );
    const bridgeRss = row('memory per process', 'tuic-bridge serving, RSS', ctx, 'MB', cold.rss, { name: 'idle bare node, RSS', median: bareRss.median });
    const barePss = row(
      'memory per process',
      'idle bare node, PSS',
      ctx,
      'MB',
      bare.map((b) => b.pssMb),
    );
    const bridgePss = row('memory per process', 'tuic-bridge serving, PSS', ctx, 'MB', cold.pss, { name: 'idle bare node, PSS', median: barePss.median });
    rows.push(bareRss, bridgeRss, barePss, withNote(bridgePss, 'PSS counts shared pages once per sharer'));
    return rows;
  } catch (err) {
    rows.push(failedRow('tools/call through tuic-bridge', 'tuic-bridge', ctx, 'calls/s', errorText(err)));
    return rows;
  } finally {
    await target.proc.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
};
