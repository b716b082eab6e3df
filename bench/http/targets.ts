/**
 * The servers under test for GET /health: tuicd on each HTTP engine and two bare baselines, each in
 * its own process.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { baselineEngine, requireUws, type Baseline } from '../baseline.js';
import { errorText } from '../harness.js';
import { spawnTracked, type Tracked } from './children.js';
import { benchUws, engineArgs, engineOfReadyLine, engineUnavailable, uwsUnavailable, type TuicdEngine } from './engines.js';
import { parseReadyLine, READY_LINE_RE, type Listening } from './readyLine.js';

/** tuicd's contract: the ready line within 10 s of spawn, or its rows show an error. */
const READY_TIMEOUT_MS = 10_000;
/** The bare baselines exit on their own after this long even if nobody stops them. */
const BARE_MAX_SECONDS = 1800;

/**
 * `tuicd` runs on uWS (forced), `tuicd (node engine)` on node:http + ws (forced): the fallback's cost
 * is their ratio. `tuicd (baseline <ref>)` (only with --baseline-ref) is an older commit's build, on uWS.
 */
export type VariantName = 'bare uWS' | 'node:http' | 'tuicd' | 'tuicd (node engine)' | `tuicd (baseline ${string})`;

export const TUICD_NODE_ENGINE = 'tuicd (node engine)' satisfies VariantName;

export interface Target {
  name: VariantName;
  proc: Tracked;
  at: Listening;
  /** What the server said it runs on (tuicd: its start line; bare uWS: the build loaded). */
  engineDetail?: string;
  /** tuicd: the engine its start line names (absent from builds that do not say). */
  engineName?: string;
}

/** Either a running target or the reason it is not running. */
export type Started = { ok: true; target: Target } | { ok: false; name: VariantName; error: string };

/** dist/supervisor/main.js next to this compiled file; TUICD_BENCH_MAIN overrides it (for testing the bench). */
export function tuicdMainPath(): string {
  return process.env['TUICD_BENCH_MAIN'] ?? fileURLToPath(new URL('../../supervisor/main.js', import.meta.url));
}

export async function startTuicd(
  name: VariantName,
  engine: TuicdEngine | undefined,
  tmpDir: string,
  main = tuicdMainPath(),
  dirName = `tuicd-config-${engine}`,
): Promise<Target> {
  const unavailable = engineUnavailable(engine);
  if (unavailable) throw new Error(unavailable);
  if (!existsSync(main)) throw new Error(`${main} not found: tuicd is not built yet (npm run build)`);
  // Each tuicd has its own config dir (its unix socket lives there).
  const configDir = join(tmpDir, dirName);
  await mkdir(configDir, { recursive: true });
  // port 0 = any free port; the ready line tells us which one.
  await writeFile(join(configDir, 'config.json'), JSON.stringify({ services: { server: { enabled: true, port: 0 } } }));
  let engineName: string | undefined;
  const t = await startProcess(name, process.execPath, [main, '--config-dir', configDir, ...engineArgs(engine)], (line) => {
    const inUse = engineOfReadyLine(line, engine);
    engineName = inUse?.name;
    return inUse?.detail;
  });
  return engineName ? { ...t, engineName } : t;
}

function startBare(name: 'bare uWS' | 'node:http', tmpDir: string): Promise<Target> {
  let detail: string | undefined;
  if (name === 'bare uWS') {
    // Checked here too, so the row says why rather than "exited (code 3)".
    const u = benchUws();
    if (!u.ok) throw new Error(uwsUnavailable(u.why));
    detail = u.label;
  }
  const file = name === 'bare uWS' ? 'bareUws.js' : 'bareNodeHttp.js';
  const script = fileURLToPath(new URL(`./${file}`, import.meta.url));
  const socket = join(tmpDir, name === 'bare uWS' ? 'uws.sock' : 'node.sock');
  return startProcess(name, process.execPath, [script, '--socket', socket, '--max-seconds', String(BARE_MAX_SECONDS)], () => detail);
}

async function startProcess(name: VariantName, command: string, args: string[], engineOf: (readyLine: string) => string | undefined): Promise<Target> {
  const proc = spawnTracked(command, args);
  try {
    const m = await proc.waitForLine(READY_LINE_RE, READY_TIMEOUT_MS);
    const engineDetail = engineOf(m.input ?? m[0]);
    return { name, proc, at: parseReadyLine(m), ...(engineDetail ? { engineDetail } : {}) };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/**
 * The older build of --baseline-ref on uWS, and the current tuicd's engine confirmed from /health too:
 * a current / baseline ratio must compare builds, not engines.
 */
export async function startBaseline(b: Baseline, tmpDir: string): Promise<Target> {
  if ('error' in b) throw new Error(b.error);
  const engine = baselineEngine(b);
  const t = await startTuicd(b.label as VariantName, engine, tmpDir, b.mainPath, 'tuicd-config-baseline');
  try {
    const unknownEngine = await requireUws(b.label, t.at.socketPath, t.engineName);
    const detail = [
      t.engineDetail ?? unknownEngine,
      `commit ${b.commit.slice(0, 12)}`,
      engine ? undefined : 'started without --http-engine (its CLI has no such flag)',
      b.buildNote,
    ];
    return { ...t, engineDetail: detail.filter(Boolean).join('; ') };
  } catch (err) {
    await t.proc.stop();
    throw err;
  }
}

export async function confirmUws(t: Target): Promise<Target> {
  try {
    await requireUws(t.name, t.at.socketPath, t.engineName);
    return t;
  } catch (err) {
    await t.proc.stop();
    throw err;
  }
}

/** Starts every variant; one that fails to start is reported, the others still run. */
export async function startTargets(tmpDir: string, baseline?: Baseline): Promise<Started[]> {
  const starters: Array<[VariantName, () => Promise<Target>]> = [
    ['bare uWS', () => startBare('bare uWS', tmpDir)],
    ['node:http', () => startBare('node:http', tmpDir)],
    // With a baseline the current tuicd's engine is also read back from /health.
    ['tuicd', async () => (baseline ? confirmUws(await startTuicd('tuicd', 'uws', tmpDir)) : startTuicd('tuicd', 'uws', tmpDir))],
    // Right after tuicd, so within a repetition the two are measured back to back (but one rotation).
    ...(baseline ? [[baseline.label as VariantName, () => startBaseline(baseline, tmpDir)] as [VariantName, () => Promise<Target>]] : []),
    [TUICD_NODE_ENGINE, () => startTuicd(TUICD_NODE_ENGINE, 'node', tmpDir)],
  ];
  const out: Started[] = [];
  // One at a time: startup CPU of one server must not delay another's ready line.
  for (const [name, start] of starters) {
    try {
      out.push({ ok: true, target: await start() });
    } catch (err) {
      const why = errorText(err);
      // "uWS unavailable: ..." is the whole story; other failures say which server.
      out.push({ ok: false, name, error: why.startsWith('uWS unavailable') ? why : `${name} did not start: ${why}` });
    }
  }
  return out;
}

export async function stopTargets(started: Started[]): Promise<void> {
  await Promise.all(started.map((s) => (s.ok ? s.target.proc.stop() : undefined)));
}
