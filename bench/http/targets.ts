/** The servers under test for GET /health: tuicd itself and two bare baselines, each in its own process. */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { errorText } from '../harness.js';
import { spawnTracked, type Tracked } from './children.js';
import { parseReadyLine, READY_LINE_RE, type Listening } from './readyLine.js';

/** tuicd's contract: the ready line within 10 s of spawn, or its rows show an error. */
const READY_TIMEOUT_MS = 10_000;
/** The bare baselines exit on their own after this long even if nobody stops them. */
const BARE_MAX_SECONDS = 1800;

export type VariantName = 'bare uWS' | 'node:http' | 'tuicd';

export interface Target {
  name: VariantName;
  proc: Tracked;
  at: Listening;
}

/** Either a running target or the reason it is not running. */
export type Started = { ok: true; target: Target } | { ok: false; name: VariantName; error: string };

/** dist/supervisor/main.js next to this compiled file; TUICD_BENCH_MAIN overrides it (for testing the bench). */
export function tuicdMainPath(): string {
  return process.env['TUICD_BENCH_MAIN'] ?? fileURLToPath(new URL('../../supervisor/main.js', import.meta.url));
}

async function startTuicd(tmpDir: string): Promise<Target> {
  const main = tuicdMainPath();
  if (!existsSync(main)) throw new Error(`${main} not found: tuicd is not built yet (npm run build)`);
  const configDir = join(tmpDir, 'tuicd-config');
  await mkdir(configDir, { recursive: true });
  // port 0 = any free port; the ready line tells us which one.
  await writeFile(join(configDir, 'config.json'), JSON.stringify({ services: { server: { enabled: true, port: 0 } } }));
  return startProcess('tuicd', process.execPath, [main, '--config-dir', configDir]);
}

function startBare(name: 'bare uWS' | 'node:http', tmpDir: string): Promise<Target> {
  const file = name === 'bare uWS' ? 'bareUws.js' : 'bareNodeHttp.js';
  const script = fileURLToPath(new URL(`./${file}`, import.meta.url));
  const socket = join(tmpDir, name === 'bare uWS' ? 'uws.sock' : 'node.sock');
  return startProcess(name, process.execPath, [script, '--socket', socket, '--max-seconds', String(BARE_MAX_SECONDS)]);
}

async function startProcess(name: VariantName, command: string, args: string[]): Promise<Target> {
  const proc = spawnTracked(command, args);
  try {
    const m = await proc.waitForLine(READY_LINE_RE, READY_TIMEOUT_MS);
    return { name, proc, at: parseReadyLine(m) };
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
    ['tuicd', () => startTuicd(tmpDir)],
  ];
  const out: Started[] = [];
  // One at a time: startup CPU of one server must not delay another's ready line.
  for (const [name, start] of starters) {
    try {
      out.push({ ok: true, target: await start() });
    } catch (err) {
      out.push({ ok: false, name, error: `${name} did not start: ${errorText(err)}` });
    }
  }
  return out;
}

export async function stopTargets(started: Started[]): Promise<void> {
  await Promise.all(started.map((s) => (s.ok ? s.target.proc.stop() : undefined)));
}
