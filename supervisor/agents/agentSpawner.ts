/**
 * `agent action=spawn`: starts an agent in a new PTY, gives it an inbox at once, links it to a
 * registered parent, returns a task handle, and delivers the prompt: as the command line's last
 * argument (or where the caller's args say `{prompt}`), or, for prefill-only TUIs (Codex,
 * OpenCode), typed in once the agent is ready, watched by a one-shot 30 s watchdog that mails
 * `prompt_delivery_failed` to the parent. The parent then gets `state_change` mail
 * (lifecycleMail.ts) and can poll the task.
 */
import { basename, isAbsolute } from 'node:path';

import { ApiError } from '../../shared/apiError.js';
import type { RunConfig } from '../config/agentSettings.js';
import type { Logger } from '../log.js';
import { binaryOf, parseAgentType, type AgentType } from '../sessions/agentDetection.js';
import { findBinary } from './agentBinaries.js';
import { agentState } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';
import { submitCommand } from '../sessions/submission.js';
import type { TaskRegistry } from './tasks.js';
import type { LifecycleMail } from './lifecycleMail.js';
import type { Peer, PeerRegistry } from './peerRegistry.js';
import type { AgentCaller } from './ports.js';

export const SpawnConstants = {
  /** The deferred prompt's watchdog. */
  PROMPT_WATCHDOG_MS: 30_000,
  /** pty_description derived from the prompt: at most this many characters. */
  DESCRIPTION_MAX_CHARS: 160,
  POLL_INTERVAL_MS: 1_000,
} as const;

const CLAUDE_CHANNEL_FLAG = '--dangerously-load-development-channels';
/** Codex's approval policy flags: a caller that sets one keeps it. */
const CODEX_APPROVAL_FLAGS: ReadonlySet<string> = new Set(['-a', '--ask-for-approval', '--full-auto', '--dangerously-bypass-approvals-and-sandbox', '--yolo']);
const CODEX_APPROVAL_BYPASS = ['--ask-for-approval', 'never'];
const CLAUDE_CHANNEL_SERVER = 'server:tuicommander';

/** TUIs that only prefill their composer from argv: the prompt is typed in once they are ready. */
const PREFILL_ONLY: ReadonlySet<string> = new Set(['codex', 'opencode']);

/**
 * print_mode: the agent's one-shot, non-interactive form (it prints its answer and exits):
 * `claude -p [--output-format F]`, `codex exec [--json]`, `gemini [--output-format F] -p <prompt>`.
 */
function printModeArgs(kind: AgentType | null, binary: string, outputFormat: string | undefined): { before: string[]; after: string[] } {
  const format = outputFormat === undefined ? [] : ['--output-format', outputFormat];
  if (kind === 'claude') return { before: [], after: ['-p', ...format] };
  if (kind === 'gemini') return { before: [], after: [...format, '-p'] };
  if (kind === 'codex') {
    if (outputFormat !== undefined && outputFormat !== 'json')
      throw new ApiError('invalid_input', `Codex prints text or json; output_format '${outputFormat}' is not one of them`);
    return { before: ['exec'], after: outputFormat === 'json' ? ['--json'] : [] };
  }
  throw new ApiError('invalid_input', `print_mode is known for claude, codex and gemini; not for '${kind ?? basename(binary)}'`);
}

/** Test knob: a shorter prompt watchdog, so a test sees it fire without waiting 30 s. */
export const PROMPT_WATCHDOG_ENV = 'TUIC_PROMPT_WATCHDOG_MS';

/** The watchdog from the environment, else PROMPT_WATCHDOG_MS; a malformed value fails the start. */
export function promptWatchdogFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env[PROMPT_WATCHDOG_ENV];
  if (raw === undefined || raw === '') return SpawnConstants.PROMPT_WATCHDOG_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1 || ms > SpawnConstants.PROMPT_WATCHDOG_MS) {
    throw new Error(`${PROMPT_WATCHDOG_ENV} must be an integer between 1 and ${SpawnConstants.PROMPT_WATCHDOG_MS} (ms), got ${JSON.stringify(raw)}`);
  }
  return ms;
}

export interface SpawnRequest {
  prompt: string;
  agentType?: string;
  binaryPath?: string;
  args?: string[];
  cwd?: string;
  model?: string;
  rows?: number;
  cols?: number;
  name?: string;
  /** undefined: derived from the prompt; null: none. */
  ptyDescription?: string | null;
  /** Added to the child's environment. */
  env?: Record<string, string>;
  /** The session stays, with its output, after the agent exits. */
  keepOpen?: boolean;
  /** The agent's one-shot non-interactive form (false: an interactive terminal). */
  printMode?: boolean;
  outputFormat?: string;
}

export interface SpawnResult {
  session_id: string;
  name: string;
  task_id: string;
  poll_interval_ms: number;
  server_ts: number;
  parent_session_id?: string;
  warning?: string;
  launch_warning?: string;
}

export interface AgentSpawnerOptions {
  sessions: SessionService;
  registry: PeerRegistry;
  tasks: TaskRegistry;
  lifecycle: LifecycleMail;
  /** PATH the children get (binary names are looked up on it). */
  path: () => string;
  log: Logger;
  /** The deferred prompt's watchdog (default PROMPT_WATCHDOG_MS). */
  watchdogMs?: number;
  /** agents.json run configs by name. */
  runConfig?: (name: string) => { agentType: string; config: RunConfig } | null;
}

export class AgentSpawner {
  constructor(private readonly opts: AgentSpawnerOptions) {}

  /**
   * Spawns for a caller: its registered identity is the child's parent and owns the task; a caller
   * without one owns it by its protocol session and becomes the pending parent a later register links.
   */
  spawnFor(caller: AgentCaller, req: SpawnRequest): Promise<SpawnResult> {
    const parent = this.opts.registry.ofCaller(caller);
    return this.spawn(req, parent, parent?.tuic_session ?? caller.mcpSessionId ?? 'anonymous', caller.mcpSessionId);
  }

  /** `callerMcp`: the spawning protocol session; without a parent identity it becomes the pending parent a later register links. */
  async spawn(req: SpawnRequest, parent: Peer | undefined, owner: string, callerMcp: string | null = null): Promise<SpawnResult> {
    const typeArg = req.agentType?.trim().toLowerCase();
    // A run config's name comes first, then an agent's binary name.
    const runConfig = req.binaryPath === undefined && typeArg ? (this.opts.runConfig?.(typeArg) ?? null) : null;
    const type = typeArg === undefined || typeArg === '' ? null : (parseAgentType(typeArg === 'cursor-agent' ? 'cursor' : typeArg) as AgentType | null);
    const binary = this.resolveBinary(req, runConfig?.config.command, type, typeArg);
    // The executable itself says which agent runs (parser state, prompt deferral), whatever agent_type claims.
    const identity = parseAgentType(basename(binary));
    const kind = runConfig !== null ? (parseAgentType(runConfig.agentType) ?? identity) : (identity ?? type);
    if (req.outputFormat !== undefined && req.printMode !== true) throw new ApiError('invalid_input', "'output_format' needs print_mode=true");
    const printMode = req.printMode === true;
    const prompt = parent
      ? `${req.prompt}\n\n[TUIC] Your parent agent is ${parent.tuic_session}. Report to it with agent action=send to=${parent.tuic_session}.`
      : req.prompt;

    const args = [...(runConfig?.config.args ?? []), ...(req.args ?? [])];
    if (req.model !== undefined) args.push('--model', req.model);
    let launchWarning: string | undefined;
    if (printMode) {
      const { before, after } = printModeArgs(kind, binary, req.outputFormat);
      args.unshift(...before);
      args.push(...after);
    }
    if (runConfig !== null) {
      // Run-config argv is authoritative: nothing is added to it, and a Codex wrapper's flags cannot be checked.
      if (kind === 'codex')
        launchWarning = `run config '${runConfig.config.name}' launches Codex with its own argv: tuicd left it as written (no approval-bypass default) and cannot check the flags the wrapper passes to Codex; the child may stop at approval prompts`;
    } else if (kind === 'codex' && !printMode && !args.some((a) => CODEX_APPROVAL_FLAGS.has(a.split('=')[0]!))) {
      // A spawned Codex answers to its parent, not to a person at its terminal: approvals are bypassed by default.
      args.push(...CODEX_APPROVAL_BYPASS);
    } else if (kind === 'claude' && !printMode && !args.includes(CLAUDE_CHANNEL_FLAG)) {
      // Claude takes channel pushes (notifications/claude/channel) from the tuicd server only with this flag.
      args.push(CLAUDE_CHANNEL_FLAG, CLAUDE_CHANNEL_SERVER);
    }
    // {prompt} in the args is authoritative; else the prompt is the last positional argument, or,
    // for a prefill-only TUI started by its own binary, typed in once it is ready.
    const substituted = args.some((a) => a.includes('{prompt}'));
    const deferred = !substituted && !printMode && runConfig === null && kind !== null && PREFILL_ONLY.has(kind) && prompt !== '';
    const argv = substituted ? args.map((a) => a.replaceAll('{prompt}', prompt)) : deferred || prompt === '' ? args : [...args, prompt];
    const name = req.name?.trim() || 'agent';
    const record = await this.opts.sessions.create({
      shell: binary,
      args: argv,
      ...(req.cwd !== undefined ? { cwd: req.cwd } : {}),
      ...(req.rows !== undefined ? { rows: req.rows } : {}),
      ...(req.cols !== undefined ? { cols: req.cols } : {}),
      ...(req.env !== undefined ? { env: req.env } : {}),
      ...(req.keepOpen === true ? { keep_open: true } : {}),
      display_name: name,
      ...(kind !== null ? { agent_type: kind } : {}),
    });
    const description =
      req.ptyDescription === undefined ? req.prompt.replace(/\s+/g, ' ').trim().slice(0, SpawnConstants.DESCRIPTION_MAX_CHARS) : req.ptyDescription;
    if (description) record.pty_description = description;
    // Every child has an inbox from the start, whatever its own MCP does later.
    this.opts.registry.bind(record.tuic_session, null, { name });
    const task = this.opts.tasks.create(record.session_id, owner);
    this.opts.lifecycle.follow(record.session_id, record.tuic_session, parent?.tuic_session ?? null, task.task_id, callerMcp);
    if (deferred) this.deliverWhenReady(record.session_id, prompt, parent);
    const result: SpawnResult = {
      session_id: record.session_id,
      name,
      task_id: task.task_id,
      poll_interval_ms: SpawnConstants.POLL_INTERVAL_MS,
      server_ts: Date.now(),
    };
    if (parent) result.parent_session_id = parent.tuic_session;
    else
      result.warning =
        'You are not registered, so the child cannot message you back. Register with agent action=register: this child is then linked to you and its lifecycle mail so far delivered.';
    if (launchWarning !== undefined) result.launch_warning = launchWarning;
    return result;
  }

  /** binary_path (absolute, existing), a run config's command, or the agent's binary on PATH. */
  private resolveBinary(req: SpawnRequest, command: string | undefined, type: AgentType | null, typeArg: string | undefined): string {
    if (req.binaryPath !== undefined) {
      if (!isAbsolute(req.binaryPath)) throw new ApiError('invalid_input', 'binary_path must be an absolute path');
      if (findBinary(req.binaryPath, '') === null) throw new ApiError('not_found', `Agent binary '${req.binaryPath}' not found`);
      return req.binaryPath;
    }
    const name = command ?? (type !== null ? binaryOf(type) : (typeArg ?? 'claude'));
    const found = findBinary(name, isAbsolute(name) ? '' : this.opts.path());
    if (found === null) throw new ApiError('not_found', `Agent binary '${name}' not found`);
    return found;
  }

  /** Types the prompt at the agent's first ready (idle) screen; one mail to the parent if that has not happened in 30 s. */
  private deliverWhenReady(sessionId: string, prompt: string, parent: Peer | undefined): void {
    let done = false;
    let watchdog: NodeJS.Timeout | undefined;
    let subscription: { dispose(): void } | undefined;
    const finish = (): void => {
      clearTimeout(watchdog);
      subscription?.dispose();
    };
    const attempt = async (): Promise<void> => {
      const record = this.opts.sessions.resolve(sessionId);
      if (done || !record || record.exit) return;
      const state = agentState(record);
      if (state !== 'idle' && state !== 'completed') return;
      done = true;
      const receipt = await submitCommand(this.opts.sessions, sessionId, prompt, { timeoutMs: 3_000 });
      if (receipt.write_state === 'not_started')
        done = false; // refused before writing: the next idle tries again
      else finish();
    };
    subscription = this.opts.sessions.onShellState((record) => {
      if (record.session_id === sessionId) void attempt();
    });
    watchdog = setTimeout(() => {
      if (done) return;
      done = true;
      finish();
      if (parent) this.opts.lifecycle.notify(sessionId, parent.tuic_session, { type: 'prompt_delivery_failed', session_id: sessionId });
      this.opts.log.warn({ session_id: sessionId }, 'spawned agent never became ready for its prompt');
    }, this.opts.watchdogMs ?? SpawnConstants.PROMPT_WATCHDOG_MS);
    watchdog.unref();
    void attempt();
  }
}
