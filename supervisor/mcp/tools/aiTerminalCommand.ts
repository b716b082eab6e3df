/**
 * `ai_terminal_run_command`: runs one shell command in the session's sandbox (not in its terminal)
 * and returns what it printed. The user confirms first; a few commands that destroy beyond repair
 * are refused outright, confirmed or not. The command runs in a process group of its own, killed
 * whole at the timeout, and its output is capped and redacted.
 */
import { spawn } from 'node:child_process';

import { Type } from 'typebox';

import { redactSecrets } from '../../../shared/redactor.js';
import { confirmOrRefuse, sessionFor, sessionIdArg, type AiTerminalDeps } from './aiTerminalGuard.js';
import { SessionSandbox } from './aiTerminalSandbox.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

const RunCommandConstants = {
  DEFAULT_TIMEOUT_MS: 120_000,
  MAX_TIMEOUT_MS: 600_000,
  /** Bytes kept of stdout and of stderr each; the rest is counted, not kept. */
  MAX_OUTPUT_BYTES: 1024 * 1024,
} as const;

/** Commands refused whatever the user answers: each destroys a machine, a disk or shared history. */
const DESTRUCTIVE: ReadonlyArray<[RegExp, string]> = [
  [
    /\brm\s+(-[a-zA-Z-]*\s+)*-[a-zA-Z]*[rRf][a-zA-Z]*\s+(-[a-zA-Z-]+\s+)*("?)(\/|~|\$HOME|\$\{HOME\})?\/?\*?\3(\s|;|&|\||$)/,
    'recursive removal of /, ~ or everything',
  ],
  [/\bmkfs(\.\w+)?\b/, 'formatting a file system'],
  [/\bdd\b[^\n]*\bof=\/dev\//, 'writing a raw device'],
  [/>\s*\/dev\/(sd|nvme|hd|disk|mmcblk)/, 'writing a raw device'],
  [/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, 'a fork bomb'],
  [/(^|[;&|(]\s*|\bsudo\s+)(shutdown|reboot|halt|poweroff)(\s|;|&|\||$)/, 'stopping the machine'],
  [/\bchmod\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*R[a-zA-Z]*\s+\S+\s+\/(\s|$)/, 'changing the whole file system'],
  [/\bgit\s+push\b[^\n]*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+\S)/, 'force-pushing (rewrites shared history)'],
];

export function destructiveReason(command: string): string | null {
  for (const [re, why] of DESTRUCTIVE) if (re.test(command)) return why;
  return null;
}

interface RunResult {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  truncated: boolean;
}

function runShell(command: string, cwd: string, env: Record<string, string>, timeoutMs: number, signal: AbortSignal): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // Its own process group: the timeout kills what the command started too.
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const sizes = { out: 0, err: 0 };
    let truncated = false;
    let timedOut = false;
    const keep = (into: Buffer[], which: 'out' | 'err') => (chunk: Buffer) => {
      const room = RunCommandConstants.MAX_OUTPUT_BYTES - sizes[which];
      if (room <= 0) {
        truncated = true;
        return;
      }
      if (chunk.length > room) truncated = true;
      const kept = chunk.subarray(0, room);
      into.push(kept);
      sizes[which] += kept.length;
    };
    child.stdout.on('data', keep(out, 'out'));
    child.stderr.on('data', keep(err, 'err'));
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = () => killGroup();
    signal.addEventListener('abort', onAbort, { once: true });
    child.once('error', (e) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(e);
    });
    child.once('close', (code, sig) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve({
        exit_code: code,
        signal: sig,
        stdout: redactSecrets(Buffer.concat(out).toString('utf8')),
        stderr: redactSecrets(Buffer.concat(err).toString('utf8')),
        timed_out: timedOut,
        truncated,
      });
    });
  });
}

export function createCommandTool(deps: AiTerminalDeps): NativeTool {
  return defineTool({
    name: 'ai_terminal_run_command',
    summary:
      "Run a shell command (sh -c) in the session's sandbox, outside its terminal, and capture what it prints. Always asks the user first; destructive commands (rm -rf /, mkfs, dd to a device, force-push, …) are refused. Timeout default 2 min, at most 10 min. → {exit_code, signal, stdout, stderr, timed_out, truncated} (1 MB of each stream kept, secrets redacted).",
    properties: {
      session_id: sessionIdArg,
      command: Type.String({ minLength: 1, description: 'The shell command', errorMessage: "'command' must be a non-empty string" }),
      timeout_ms: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: RunCommandConstants.MAX_TIMEOUT_MS,
          description: `Kill it after this long (default ${RunCommandConstants.DEFAULT_TIMEOUT_MS}, at most ${RunCommandConstants.MAX_TIMEOUT_MS})`,
          errorMessage: `'timeout_ms' must be an integer between 1 and ${RunCommandConstants.MAX_TIMEOUT_MS}`,
        }),
      ),
      cwd: Type.Optional(
        Type.String({ minLength: 1, description: 'A directory inside the sandbox (default its root)', errorMessage: "'cwd' must be a non-empty string" }),
      ),
    },
    required: ['session_id', 'command'],
    handler: async (args, caller) => {
      const command = args['command'] as string;
      const why = destructiveReason(command);
      if (why !== null)
        throw new ToolError('forbidden', `ai_terminal_run_command refuses destructive commands (${why}); nothing was run`, { field: 'command' });
      const record = sessionFor(deps.sessions, args['session_id'] as string);
      const sandbox = await SessionSandbox.of(record);
      const cwd = args['cwd'] === undefined ? sandbox.root : sandbox.resolve(args['cwd'] as string, 'cwd');
      if (!SessionSandbox.isDirectory(cwd)) throw new ToolError('invalid_input', "'cwd' is not a directory", { field: 'cwd' });
      await confirmOrRefuse(deps, caller, 'ai_terminal_run_command', record, `Run in ${sandbox.relative(cwd) || '.'}: ${command}`);
      // Checked again after the wait: the directory may lead elsewhere by now.
      if (args['cwd'] !== undefined) sandbox.resolve(args['cwd'] as string, 'cwd');
      const timeoutMs = (args['timeout_ms'] as number | undefined) ?? RunCommandConstants.DEFAULT_TIMEOUT_MS;
      // The session's own environment, not tuicd's: no TMUX or CLAUDECODE of the terminal tuicd was started from.
      const env = deps.sessions.childEnvFor(record.tuic_session);
      return { ...(await runShell(command, cwd, env, timeoutMs, caller.signal)) };
    },
  });
}
