/**
 * Kills upstream process groups that outlive the thread that spawned them. The parent-death signal
 * (parentDeath.ts) reaches only the direct child: an upstream that is a shell or `npx` wrapper has
 * its real server one level down, and that server is orphaned, not killed, when tuicd is SIGKILLed
 * or OOM-killed or the hub thread is terminated.
 *
 * A small `sh` (its own session, no parent-death signal) reads the ids of live groups on its stdin.
 * Only this thread holds the write end, so when the thread or the whole process goes away, however
 * it goes, the kernel closes it; the shell reads EOF, SIGKILLs every group still listed and exits.
 * A group leaves the list once its pump has killed it after the leader exited, so a group id reused
 * later by someone else is never signalled.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

const SHELL = '/bin/sh';

/** `+<id>` adds a group, `-<id>` removes one; at EOF every group left is killed. Builtins only. */
const REAPER_SCRIPT = `
groups=" "
while read -r line; do
  case "$line" in
    +*) groups="$groups\${line#+} " ;;
    -*) id=\${line#-}; keep=" "; for g in $groups; do [ "$g" = "$id" ] || keep="$keep$g "; done; groups=$keep ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
`;

export class GroupReaper {
  private child: ChildProcess | undefined;
  private failed = false;

  /** Pid of the reaper shell, once started (for tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The group led by `pgid` is killed if this thread ends before `release(pgid)`. */
  watch(pgid: number): void {
    this.send(`+${pgid}\n`);
  }

  /** The group was killed by its owner: forget it. */
  release(pgid: number): void {
    if (this.child !== undefined) this.send(`-${pgid}\n`);
  }

  /** Ends the list as the thread's end would: every group still watched is killed, then the reaper exits. */
  close(): void {
    this.child?.stdin?.end();
    this.child = undefined;
  }

  private send(line: string): void {
    const stdin = this.start()?.stdin;
    if (stdin && !stdin.destroyed) stdin.write(line);
  }

  private start(): ChildProcess | undefined {
    if (this.child !== undefined || this.failed) return this.child;
    try {
      accessSync(SHELL, constants.X_OK);
      // detached: its own session, so a terminal's Ctrl-C (which tuicd handles gracefully) does not take it first.
      const child = spawn(SHELL, ['-c', REAPER_SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
      child.on('error', () => (this.failed = true));
      child.stdin!.on('error', () => {}); // the reaper gone early: EPIPE, nothing left to do
      // Neither the process nor its pipe may keep this thread's event loop alive.
      child.unref();
      (child.stdin as unknown as { unref?: () => void }).unref?.();
      this.child = child;
    } catch {
      this.failed = true; // no POSIX shell: the parent-death signal still covers direct children
    }
    return this.child;
  }
}

/** One reaper per thread that spawns upstreams (module state is per thread). */
export const groupReaper = new GroupReaper();
