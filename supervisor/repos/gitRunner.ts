/** Runs the real `git` binary without a shell; its failures carry git's own stderr. */
import { execFile } from 'node:child_process';

/** Diffs of big repositories run to tens of MB; beyond this the caller is told, not silently cut. */
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
    /** What git printed before failing (`diff --no-index` exits 1 with the diff). */
    readonly stdout = '',
  ) {
    super(message);
    this.name = 'GitError';
  }
}

export interface GitOptions {
  /** Extra environment on top of ours (GIT_INDEX_FILE and the like). */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Text fed to git's stdin. */
  input?: string;
  /** The whole environment instead of ours (run-git's scrubbed one); GIT_ENV still goes on top. */
  replaceEnv?: NodeJS.ProcessEnv;
}

/** Git must never ask a question on a terminal nobody watches, nor localise what we parse. */
const GIT_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' };

export function git(cwd: string, args: readonly string[], opts: GitOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args as string[],
      {
        cwd,
        env: { ...(opts.replaceEnv ?? process.env), ...GIT_ENV, ...opts.env },
        maxBuffer: MAX_OUTPUT_BYTES,
        encoding: 'utf8',
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const code = typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null;
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new GitError('git is not installed (not found on PATH)', null, ''));
        const why = stderr.trim() || err.message;
        reject(new GitError(`git ${args[0] ?? ''} failed: ${why}`, code, stderr, stdout));
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like git(), but a non-zero exit is an answer (`git merge-base --is-ancestor`), not an error. */
export async function gitExitCode(cwd: string, args: readonly string[]): Promise<number> {
  try {
    await git(cwd, args);
    return 0;
  } catch (err) {
    if (err instanceof GitError && err.exitCode !== null) return err.exitCode;
    throw err;
  }
}

/** The repository's top level for a path inside it, or null when the path is not in a work tree. */
export async function toplevelOf(path: string): Promise<string | null> {
  try {
    return (await git(path, ['rev-parse', '--show-toplevel'])).trim() || null;
  } catch {
    return null;
  }
}
