/** The GitHub CLI, when it is installed and logged in; every GitHub route goes through it or is refused as unavailable. */
import { execFile } from 'node:child_process';

import { ApiError } from '../../shared/apiError.js';

/** How long a "gh is (not) usable" answer is trusted: a `gh auth login` is picked up within this. */
const PROBE_TTL_MS = 60_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

function run(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    const child = execFile(
      'gh',
      args as string[],
      { cwd, env: { ...env, GH_PROMPT_DISABLED: '1', NO_COLOR: '1' }, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
        resolve({ code: !e ? 0 : typeof e.code === 'number' ? e.code : null, stdout, stderr, missing: e?.code === 'ENOENT' });
      },
    );
    // gh may exit before reading all of it (a refused call): the write error is its exit's to report.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input ?? '');
  });
}

export class GhCli {
  private probe: { at: number; problem: string | null } | null = null;

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** null when gh can be used; otherwise why not, in words for the caller. */
  async problem(cwd: string): Promise<string | null> {
    if (this.probe && Date.now() - this.probe.at < PROBE_TTL_MS) return this.probe.problem;
    const r = await run(cwd, ['auth', 'status'], this.env);
    const problem = r.missing
      ? 'GitHub features need the GitHub CLI (gh), which is not installed on the machine running tuicd'
      : r.code !== 0
        ? `GitHub features need the GitHub CLI logged in: run \`gh auth login\` on the machine running tuicd (${(r.stderr || r.stdout).trim().split('\n')[0] ?? ''})`
        : null;
    this.probe = { at: Date.now(), problem };
    return problem;
  }

  /** Runs gh in the repository; `unavailable` when gh is unusable, `bad_gateway` when GitHub (through gh) refuses. */
  async call(cwd: string, args: readonly string[], input?: string): Promise<string> {
    const problem = await this.problem(cwd);
    if (problem) throw new ApiError('unavailable', problem);
    const r = await run(cwd, args, this.env, input);
    if (r.code !== 0) throw new ApiError('bad_gateway', `gh ${args.slice(0, 2).join(' ')} failed: ${(r.stderr || r.stdout).trim()}`);
    return r.stdout;
  }

  async json<T = unknown>(cwd: string, args: readonly string[], input?: string): Promise<T> {
    const out = await this.call(cwd, args, input);
    return (out.trim() === '' ? null : JSON.parse(out)) as T;
  }
}
