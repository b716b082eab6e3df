/**
 * POST /sessions/:id/write calls/s and calls per supervisor CPU second: the REST input path, whose
 * body is now checked by its compiled schema before the handler. Over the unix socket with the
 * node client, 16 connections, into a session whose program reads and discards its input (no echo:
 * the figure is the request path, not the terminal's output). With --baseline-ref the older build
 * runs beside it, measured right after it in every repetition; the goal is ≥ 0.97× on both.
 */
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { errorText, type BenchModule } from '../harness.js';
import { runLoadgen } from './drivers.js';
import { measureRotating, rowsVsBaseline } from './rotatingSeries.js';
import { confirmUws, startBaseline, startTuicd, type Target } from './targets.js';

const DURATIONS = {
  full: { warmupMs: 1000, measureMs: 5000 },
  quick: { warmupMs: 300, measureMs: 1000 },
};
/** Writes in flight: a busy orchestrator, not a flood the input backlog would refuse. */
const CONNECTIONS = 16;
/** Reads and drops what is typed, with the terminal's echo off. */
const SINK = ['-c', 'stty -echo; exec cat > /dev/null'];
const GROUP = 'POST /sessions/:id/write (unix, node client)';

export const run: BenchModule = async (ctx) => {
  const d = ctx.quick ? DURATIONS.quick : DURATIONS.full;
  const tmp = await mkdtemp(join(tmpdir(), 'tuicd-bench-write-'));
  const removeTmp = (): void => rmSync(tmp, { recursive: true, force: true });
  process.once('exit', removeTmp);
  const targets: Array<{ target: Target; sessionId: string }> = [];
  const failures = new Map<string, string>();
  try {
    const starters: Array<[string, () => Promise<Target>]> = [['tuicd', async () => confirmUws(await startTuicd('tuicd', 'uws', tmp))]];
    if (ctx.baseline) {
      const b = ctx.baseline;
      starters.push([b.label, () => startBaseline(b, tmp)]);
    }
    for (const [name, start] of starters) {
      try {
        const target = await start();
        const created = await httpJson<{ session_id: string }>(target.at.socketPath, 'POST', '/sessions', { shell: '/bin/sh', args: SINK });
        targets.push({ target, sessionId: created.session_id });
      } catch (err) {
        failures.set(name, `${name} did not start: ${errorText(err)}`);
      }
    }
    const series = await measureRotating(
      targets,
      (t) => t.target.name,
      { repetitions: ctx.repetitions, ...d },
      ({ target, sessionId }, warmupMs, ms) =>
        runLoadgen(target, warmupMs, ms, { method: 'POST', path: `/sessions/${sessionId}/write`, body: '{"data":"x"}' }, CONNECTIONS),
    );
    return rowsVsBaseline(ctx, GROUP, series, failures);
  } finally {
    await Promise.all(targets.map((t) => t.target.proc.stop()));
    process.removeListener('exit', removeTmp);
    await rm(tmp, { recursive: true, force: true });
  }
};

/** One JSON request over a unix socket; a non-2xx answer is an error naming it. */
function httpJson<T>(socketPath: string, method: string, path: string, body: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request({ socketPath, method, path, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) } }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => (data += c));
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(JSON.parse(data) as T) : reject(new Error(`${method} ${path}: ${res.statusCode} ${data}`))));
    });
    req.on('error', reject);
    req.end(text);
  });
}
