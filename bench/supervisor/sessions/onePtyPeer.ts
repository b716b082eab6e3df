/** Starts and stops the one-process echo peer (onePtyServer.ts) on a unix socket in a temp dir. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { spawnTracked } from '../../http/children.js';
import { benchUws, uwsUnavailable } from '../../http/engines.js';
import { parseReadyLine, READY_LINE_RE } from '../../http/readyLine.js';

const READY_TIMEOUT_MS = 10_000;
/** A hard bound on the peer's life, should the bench die without stopping it. */
const MAX_SECONDS = 1_800;

export interface OnePtyServer {
  socketPath: string;
  /** The peer's process (its CPU time is the reference for tuicd's two). */
  pid: number | undefined;
  stop(): Promise<void>;
}

export async function startOnePtyServer(script: string): Promise<OnePtyServer> {
  // Checked here too, so the row says why rather than "exited (code 3)".
  const u = benchUws();
  if (!u.ok) throw new Error(uwsUnavailable(u.why));
  const dir = await mkdtemp(join(tmpdir(), 'tuicd-bench-onepty-'));
  const entry = fileURLToPath(new URL('./onePtyServer.js', import.meta.url));
  const proc = spawnTracked(process.execPath, [entry, '--socket', join(dir, 'pty.sock'), '--script', script, '--max-seconds', String(MAX_SECONDS)]);
  const stop = async (): Promise<void> => {
    await proc.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const m = await proc.waitForLine(READY_LINE_RE, READY_TIMEOUT_MS);
    return { socketPath: parseReadyLine(m).socketPath, pid: proc.child.pid, stop };
  } catch (err) {
    await stop();
    throw new Error(`the one-process pty server did not start: ${(err as Error).message}`);
  }
}
