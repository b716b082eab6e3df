/**
 * The servers under test for GET /health: tuicd on each HTTP engine and two bare baselines, each in
 * its own process.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { errorText } from '../harness.js';
import { spawnTracked, type Tracked } from './children.js';
import { benchUws, engineArgs, engineOfReadyLine, engineUnavailable, uwsUnavailable, type TuicdEngine } from './engines.js';
import { parseReadyLine, READY_LINE_RE, type Listening } from './readyLine.js';

/** tuicd's contract: the ready line within 10 s of spawn, or its rows show an error. */
const READY_TIMEOUT_MS = 10_000;
/** The bare baselines exit on their own after this long even if nobody stops them. */
const BARE_MAX_SECONDS = 1800;

/** `tuicd` runs on uWS (forced), `tuicd (node engine)` on node:http + ws (forced): the fallback's cost is their ratio. */
export type VariantName = 'bare uWS' | 'node:http' | 'tuicd' | 'tuicd (node engine)';

export const TUICD_NODE_ENGINE = 'tuicd (node engine)' satisfies VariantName;

export interface Target {
  name: VariantName;
  proc: Tracked;
  at: Listening;
  /** What the server said it runs on (tuicd: its start line; bare uWS: the build loaded). */
  engineDetail?: string;
}

/** Either a running target or the reason it is not running. */
export type Started = { ok: true; target: Target } | { ok: false; name: VariantName; error: string };

/** dist/supervisor/main.js next to this compiled file; TUICD_BENCH_MAIN overrides it (for testing the bench). */
export function tuicdMainPath(): string {
  return process.env['TUICD_BENCH_MAIN'] ?? fileURLToPath(new URL('../../supervisor/main.js', import.meta.url));
}

async function startTuicd(name: VariantName, engine: TuicdEngine, tmpDir: string): Promise<Target> {
  const unavailable = engineUnavailable(engine);
  if (unavailable) throw new Error(unavailable);
  const main = tuicdMainPath();
  if (!existsSync(main)) throw new Error(`${main} not found: tuicd is not built yet (npm run build)`);
  // Each tuicd has its own config dir (its unix socket lives there).
  const configDir = join(tmpDir, `tuicd-config-${engine}`);
  await mkdir(configDir, { recursive: true });
  // port 0 = any free port; the ready line tells us which one.
  await writeFile(join(configDir, 'config.json'), JSON.stringify({ services: { server: { enabled: true, port: 0 } } }));
  return startProcess(name, process.execPath, [main, '--config-dir', configDir, ...engineArgs(engine)], (line) => engineOfReadyLine(line, engine)?.detail);
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

/** Starts every variant; one that fails to start is reported, the others still run. */
export async function startTargets(tmpDir: string): Promise<Started[]> {
  const starters: Array<[VariantName, () => Promise<Target>]> = [
    ['bare uWS', () => startBare('bare uWS', tmpDir)],
    ['node:http', () => startBare('node:http', tmpDir)],
    ['tuicd', () => startTuicd('tuicd', 'uws', tmpDir)],
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
