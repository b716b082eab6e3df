/**
 * Signals for a session's process group. node-pty's helper calls setsid(), so the shell leads a
 * group whose id is its pid: `kill(-pid)` reaches the shell and the jobs it started in it.
 */

import { constants as osConstants } from 'node:os';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';

/** Signals that ask a session to end, and so get escalated to SIGKILL if ignored; SIGINT or SIGWINCH do not. */
const CLOSING_SIGNALS: ReadonlySet<string> = new Set(['SIGHUP', 'SIGTERM', 'SIGQUIT']);

/** 'hup', 'HUP' and 'SIGHUP' all mean SIGHUP; an unknown name is the caller's mistake (INVALID_MESSAGE). */
export function normalizeSignal(signal: string): NodeJS.Signals {
  const upper = signal.toUpperCase();
  const name = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  if (!Object.hasOwn(osConstants.signals, name)) throw new SupervisorError(ErrorCode.INVALID_MESSAGE, `unknown signal '${signal}'`);
  return name as NodeJS.Signals;
}

export function isClosingSignal(signal: NodeJS.Signals): boolean {
  return CLOSING_SIGNALS.has(signal);
}

/** Signals the group led by `pid`, falling back to the pid alone if the group is already gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // ESRCH: everything in it has already exited; the exit event is on its way.
    }
  }
}
