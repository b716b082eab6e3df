/** The scheduling priority sessions run at. */
import { setPriority } from 'node:os';

/**
 * Sessions run at nice +10 (`TUIC_PTY_NICE` overrides, 0 disables) so hundreds of
 * busy agents never starve the supervisor and pty host that serve them. Children inherit it.
 */
export function sessionNice(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['TUIC_PTY_NICE'];
  const n = raw === undefined || raw.trim() === '' ? DEFAULT_SESSION_NICE : Number(raw);
  return Number.isInteger(n) ? Math.max(-20, Math.min(19, n)) : DEFAULT_SESSION_NICE;
}
const DEFAULT_SESSION_NICE = 10;

export function lowerPriority(pid: number): void {
  const nice = sessionNice();
  if (nice === 0) return;
  try {
    setPriority(pid, nice);
  } catch {
    // A negative nice needs privileges; the session still runs at the default priority.
  }
}
