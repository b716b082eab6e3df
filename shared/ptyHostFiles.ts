/**
 * The detached pty host's files in the config dir, named once for both sides: the state file that
 * says where the host listens and which protocol it speaks, and the note it leaves when it ended
 * its sessions with no supervisor attached to be told.
 */
import { join } from 'node:path';

export interface PtyHostState {
  pid: number;
  /** The host's unix socket (mode 0600). */
  socket: string;
  protocol_version: number;
  instance: string | null;
  started_ms: number;
}

/**
 * Ended sessions: the reason (a `session-closed` reason), a sentence, and their ids; a session with
 * a reason of its own (`exit`: its process ended while no supervisor was attached) says so.
 */
export interface PtyHostEnded {
  reason: string;
  message: string;
  at_ms: number;
  sessions: Array<{ session_id: string; reason?: string }>;
}

/** One per instance: an explicit config dir may hold several. */
export function ptyHostStatePath(configDir: string, instance: string | null): string {
  return join(configDir, instance === null ? 'pty-host.json' : `pty-host.${instance}.json`);
}

export function ptyHostEndedPath(statePath: string): string {
  return `${statePath.replace(/\.json$/, '')}.ended.json`;
}
