/**
 * Signals for a stdio upstream's process group, shared by the pump that owns the child and the hub,
 * which kills the group when its pump goes away. The child is spawned `detached`, so it calls setsid()
 * and leads a group whose id is its pid: `kill(-pid)` reaches it and whatever it started (an
 * `npx` wrapper's real server, a shell's jobs), which a kill of the pid alone would orphan.
 * No fallback to the bare pid: after the leader was reaped that pid may belong to someone else,
 * while a group id cannot be reused as long as any member of the group lives.
 */

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every member has already exited.
  }
}
