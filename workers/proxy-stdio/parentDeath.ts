/**
 * Stdio upstreams die with the thread that spawned them, even when nobody gets to shut them down
 * (tuicd SIGKILLed or OOM-killed, the hub thread terminated): the child is started through
 * util-linux `setpriv --pdeathsig KILL`, which sets PR_SET_PDEATHSIG and then execs the command.
 * Without it a server that ignores EOF on stdin outlives tuicd. Node has no other way to set the
 * parent-death signal of a child. Where setpriv is missing (not Linux) the command runs as is.
 *
 * The kernel sends the signal when the spawning *thread* exits: the hub thread, so a hub restart
 * also takes its children down (it shuts them down first anyway).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

const SETPRIV = '/usr/bin/setpriv';
const wrapper = isExecutable(SETPRIV) ? SETPRIV : undefined;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A command missing on PATH, or not executable: reported like spawn's own ENOENT/EACCES. */
export class CommandNotFoundError extends Error {
  readonly code = 'ENOENT';
}

/**
 * The file exec would run for `command`: as given when it holds a slash (relative to `cwd`), else
 * the first executable match on `pathVar`. The wrapper execs what it is given, so a missing command
 * must be found missing here, where the caller can still name it.
 */
export function resolveCommand(command: string, pathVar: string | undefined, cwd: string | undefined): string {
  if (command.includes('/')) {
    const file = isAbsolute(command) ? command : resolve(cwd ?? process.cwd(), command);
    if (isExecutable(file)) return file;
    throw new CommandNotFoundError(`spawn ${command} ENOENT`);
  }
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(isAbsolute(dir) ? dir : resolve(cwd ?? process.cwd(), dir), command);
    if (isExecutable(file)) return file;
  }
  throw new CommandNotFoundError(`spawn ${command} ENOENT`);
}

/** The file and argv to spawn so `command args` gets SIGKILL when the spawning thread exits. */
export function withParentDeathSignal(
  command: string,
  args: readonly string[],
  pathVar: string | undefined,
  cwd: string | undefined,
): { file: string; args: string[] } {
  // An empty command or a NUL byte: let spawn refuse it with its own message.
  if (wrapper === undefined || command === '' || command.includes('\0')) return { file: command, args: [...args] };
  return { file: wrapper, args: ['--pdeathsig', 'KILL', '--', resolveCommand(command, pathVar, cwd), ...args] };
}
