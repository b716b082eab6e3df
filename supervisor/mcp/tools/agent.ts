/**
 * `agent`: the MCP face of agents/. It checks the arguments, calls the messaging rules
 * (agents/messaging.ts: register, the peer directory, send, inbox and wait on server-side cursors
 * in logical ms), the spawner and the binary probe, and shapes their answers. Messaging and
 * spawning are loopback-only (anti-hijack).
 */
import { Type } from 'typebox';

import type { AgentBinaries } from '../../agents/agentBinaries.js';
import type { AgentSpawner, SpawnRequest } from '../../agents/agentSpawner.js';
import type { AgentMessaging, RegisterRequest } from '../../agents/messaging.js';
import { AgentConstants } from '../../agents/peerRegistry.js';
import { checkEnv, type SessionService } from '../../sessions/sessionService.js';
import { clampWaitTimeout } from '../../sessions/sessionWaiter.js';
import { defineTool, describeArgument, ToolError } from './nativeTool.js';
import type { CallerContext, NativeTool } from './nativeTool.js';

export interface AgentToolDeps {
  /** Identities, the peer directory and mail (agents/messaging.ts). */
  messaging: AgentMessaging;
  spawner: AgentSpawner;
  binaries: AgentBinaries;
  /** stats and metrics: live sessions and the spawn counters. */
  sessions: SessionService;
  maxSessions: () => number;
}

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const MESSAGING_ACTIONS = new Set(['register', 'list_peers', 'send', 'inbox']);
const DIMENSION_MAX = 500;

/** A string argument of at most `max` characters, its refusal in one sentence. */
const text = (description: string, max: number = AgentConstants.PROJECT_MAX_CHARS) =>
  Type.String({ description, maxLength: max, errorMessage: `'{field}' must be a string of at most ${max} characters, got {json}` });
const uuid = (description: string) =>
  Type.String({ description, pattern: UUID_PATTERN, errorMessage: '{field} must be a canonical UUID (36 characters), got {json}' });
const flag = (description: string) => Type.Boolean({ description, errorMessage: "'{field}' must be a boolean, got {json}" });
const dimension = (name: string) =>
  Type.Integer({
    minimum: 1,
    maximum: DIMENSION_MAX,
    description: `spawn: terminal ${name}`,
    errorMessage: `'{field}' must be an integer from 1 to ${DIMENSION_MAX}, got {json}`,
  });

/** The arguments as the schema below has checked them (null-valued optional ones dropped). */
interface AgentArgs {
  action: string;
  prompt?: string;
  agent_type?: string;
  binary_path?: string;
  args?: string[];
  cwd?: string;
  model?: string;
  env?: Record<string, string>;
  keep_open?: boolean;
  print_mode?: boolean;
  output_format?: string;
  connection_id?: string;
  rows?: number;
  cols?: number;
  pty_description?: string | null;
  name?: string;
  path?: string;
  project?: string;
  orchestrator?: boolean;
  tuic_session?: string;
  replaces?: string;
  to?: string;
  message?: string;
  urgency?: 'normal' | 'urgent';
  since?: number;
  limit?: number;
  timeout_ms?: number;
}

/** A name that is only blanks names nothing. */
function nameArg(args: AgentArgs): string | undefined {
  if (args.name !== undefined && args.name.trim() === '') throw new ToolError("'name' must not be empty");
  return args.name;
}

export function createAgentTool(deps: AgentToolDeps): NativeTool {
  const { messaging, sessions } = deps;

  const register = (args: AgentArgs, caller: CallerContext): Record<string, unknown> => {
    const req: RegisterRequest = {};
    if (args.tuic_session !== undefined) req.tuicSession = args.tuic_session;
    const name = nameArg(args);
    if (name !== undefined) req.name = name;
    const project = args.path ?? args.project;
    if (project !== undefined) req.project = project;
    if (args.orchestrator !== undefined) req.orchestrator = args.orchestrator;
    if (args.replaces !== undefined) req.replaces = args.replaces;

    const r = messaging.register(caller, req);
    return {
      ok: true,
      ...(r.supersededIdentity !== undefined ? { superseded_identity: r.supersededIdentity } : {}),
      ...(r.mailMigrated !== undefined ? { mail_migrated: r.mailMigrated } : {}),
      ...(r.mailStranded !== undefined ? { mail_stranded: r.mailStranded } : {}),
      ...(r.identityWarning !== undefined ? { identity_warning: r.identityWarning } : {}),
      tuic_session: r.peer.tuic_session,
      name: r.peer.name,
      linked_children: r.linkedChildren,
      identity_generated: r.peer.generated,
      terminal: r.terminal,
      orchestrator: r.peer.orchestrator,
      mail_wake: r.mailWake,
    };
  };

  const send = (args: AgentArgs, caller: CallerContext): Record<string, unknown> => {
    const { to, message } = args;
    if (to === undefined || to === '') throw new ToolError("Action 'send' requires 'to' (a peer's tuic_session, the session id of its terminal, or its alias)");
    if (message === undefined || message === '') throw new ToolError("Action 'send' requires 'message'");
    const { message: stored, receipt, toSelf } = messaging.send(caller, to, message, args.urgency === 'urgent');
    const out: Record<string, unknown> = {
      ok: true,
      accepted: true,
      message_id: stored.id,
      buffered_in_inbox: true,
      delivered: receipt.delivered,
      delivery_path: receipt.path,
      recipient_has_terminal: receipt.recipient_has_terminal,
    };
    if (receipt.recipient_state !== undefined) out['recipient_state'] = receipt.recipient_state;
    if (toSelf) out['warning'] = 'You sent a message to yourself';
    return out;
  };

  const inbox = (args: AgentArgs, caller: CallerContext): Record<string, unknown> => {
    const page = messaging.inbox(caller, args.since, args.limit ?? AgentConstants.INBOX_DEFAULT_LIMIT);
    const out: Record<string, unknown> = { messages: page.messages, count: page.messages.length, next_since: page.nextSince, has_more: page.hasMore };
    if (page.missed > 0) out['missed_count'] = page.missed;
    return out;
  };

  const wait = async (args: AgentArgs, caller: CallerContext): Promise<Record<string, unknown>> => {
    const { messages, nextSince } = await messaging.wait(caller, args.since, clampWaitTimeout(args.timeout_ms), caller.signal);
    const met = messages.length > 0;
    return { met, timed_out: !met, new_messages: messages.length, messages, next_since: nextSince };
  };

  const spawn = async (args: AgentArgs, caller: CallerContext): Promise<Record<string, unknown>> => {
    if (!caller.isLoopback) throw new ToolError('forbidden', 'Agent spawning is restricted to localhost connections');
    const { prompt } = args;
    if (prompt === undefined || prompt.trim() === '') throw new ToolError("Action 'spawn' requires 'prompt'");
    const req: SpawnRequest = { prompt };
    if (args.agent_type !== undefined) req.agentType = args.agent_type;
    if (args.binary_path !== undefined) req.binaryPath = args.binary_path;
    if (args.cwd !== undefined) req.cwd = args.cwd;
    if (args.model !== undefined) req.model = args.model;
    const name = nameArg(args);
    if (name !== undefined) req.name = name;
    if (args.args !== undefined) req.args = args.args;
    if (args.rows !== undefined) req.rows = args.rows;
    if (args.cols !== undefined) req.cols = args.cols;
    if (args.pty_description !== undefined) req.ptyDescription = args.pty_description === '' ? null : args.pty_description;
    const connection = args.connection_id;
    if (connection !== undefined && connection !== '' && connection !== 'local') {
      throw new ToolError(
        `connection_id ${describeArgument(connection)} names a remote connection; tuicd runs agents on this machine only: omit connection_id`,
      );
    }
    if (args.env !== undefined) {
      // The names tuicd reserves and the size limits; the schema has checked the shape.
      checkEnv(args.env);
      req.env = args.env;
    }
    if (args.keep_open !== undefined) req.keepOpen = args.keep_open;
    if (args.print_mode !== undefined) req.printMode = args.print_mode;
    if (args.output_format !== undefined) req.outputFormat = args.output_format;
    return { ...(await deps.spawner.spawnFor(caller, req)) };
  };

  const tool: NativeTool = defineTool({
    name: 'agent',
    summary:
      'Talk to the other agents connected to tuicd: register a name, list peers, send a message (delivered into the recipient’s inbox, and to it at once when its state allows), read your inbox, or wait for mail. ' +
      'An agent running in a tuicd terminal is registered automatically (its $TUIC_SESSION); register then only renames it.',
    actions: {
      spawn:
        'start an agent in a new terminal with prompt (agent_type or binary_path; args, cwd, model, rows, cols, name, pty_description) → {session_id, name, task_id, poll_interval_ms, server_ts, parent_session_id?, warning?}; follow it with task action=get and your inbox (state_change mail). Local callers only',
      register:
        'name your identity (optional name, path, orchestrator) → {ok, tuic_session, name, identity_generated, terminal, orchestrator, mail_wake, …}; replaces=<old uuid> moves an old identity’s mail. Local callers only',
      list_peers:
        'registered peers (optionally of one path) → {peers: [{tuic_session, name, orchestrator, alias?, session_id?, project?}]}. Local callers only',
      send: 'to (tuic_session, terminal session id or alias) + message (≤64 KiB) → {ok, message_id, delivered, delivery_path, recipient_state?}. Local callers only',
      inbox:
        'your messages after since (default: where you last read) → {messages, count, next_since, has_more, missed_count?}; limit 1-100. Local callers only',
      wait: 'block until new mail arrives → {met, timed_out, new_messages, messages, next_since}; timeout_ms default 60000, 300000+ runs as 295000. Prefer it to polling inbox',
      detect: 'agent programs installed here → [{name, path, version}]',
      stats: 'session slots → {active_sessions, max_sessions, available_slots}',
      metrics: 'counters → {total_spawned, total_failed, bytes_emitted, pauses_triggered}',
    },
    notes:
      'Messages are kept per recipient (100, oldest dropped first; missed_count says how many). Cursors are logical milliseconds: pass next_since back, or omit since to resume where you last read; since=0 replays everything.',
    properties: {
      prompt: Type.Optional(Type.String({ description: 'spawn: the task', errorMessage: "'prompt' must be a string, got {json}" })),
      agent_type: Type.Optional(text('spawn: claude, codex, gemini… (its binary is looked up on PATH)')),
      binary_path: Type.Optional(text('spawn: absolute path of the agent program')),
      args: Type.Optional(
        Type.Array(Type.String(), {
          description: 'spawn: arguments; {prompt} marks where the prompt goes (else it is the last one)',
          errorMessage: "'args' must be an array of strings, got {json}",
        }),
      ),
      cwd: Type.Optional(text('spawn: working directory')),
      model: Type.Optional(text('spawn: passed as --model')),
      env: Type.Optional(
        Type.Record(Type.String(), Type.String(), {
          description: 'spawn: extra environment variables',
          errorMessage: 'env must be an object of names to strings',
        }),
      ),
      keep_open: Type.Optional(flag('spawn: keep the terminal and its output after the agent exits')),
      print_mode: Type.Optional(flag('spawn: true runs the agent one-shot and headless (claude -p, codex exec); default false')),
      output_format: Type.Optional(text('spawn, print_mode: e.g. json')),
      connection_id: Type.Optional(Type.String({ description: 'spawn: a remote connection; tuicd has only this machine' })),
      rows: Type.Optional(dimension('rows')),
      cols: Type.Optional(dimension('cols')),
      pty_description: Type.Optional(
        Type.Union([Type.String(), Type.Null()], {
          description: 'spawn: what the terminal works on (default: from the prompt; null: none)',
          errorMessage: "'pty_description' must be a string or null",
        }),
      ),
      name: Type.Optional(text('register, spawn: display name', AgentConstants.NAME_MAX_CHARS)),
      path: Type.Optional(text('register: your project (repository path); list_peers: only peers of this project')),
      project: Type.Optional(text('register, list_peers: the same as path (older clients)')),
      orchestrator: Type.Optional(flag('register: declare (true) or drop (false) the orchestrator role; omitted keeps it')),
      tuic_session: Type.Optional(uuid('register: the identity (canonical UUID) to register as; omitted = your terminal’s, or a new one')),
      replaces: Type.Optional(uuid('register: an old identity (UUID) whose mail moves to you')),
      to: Type.Optional(Type.String({ description: 'send: recipient', errorMessage: "'to' must be a string, got {json}" })),
      message: Type.Optional(Type.String({ description: 'send: the text, at most 64 KiB', errorMessage: "'message' must be a string, got {json}" })),
      urgency: Type.Optional(
        Type.String({
          enum: ['normal', 'urgent'],
          description: 'send: default normal',
          errorMessage: "'urgency' must be normal or urgent, got {json}",
        } as never),
      ),
      since: Type.Optional(
        Type.Integer({
          minimum: 0,
          description: 'inbox, wait: a next_since value; 0 replays everything',
          errorMessage: "'since' must be a non-negative integer (a next_since value), got {json}",
        }),
      ),
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: AgentConstants.INBOX_CAPACITY,
          description: `inbox: at most this many messages (default ${AgentConstants.INBOX_DEFAULT_LIMIT})`,
          errorMessage: `'limit' must be an integer from 1 to ${AgentConstants.INBOX_CAPACITY}, got {json}`,
        }),
      ),
      timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 300_000, description: 'wait: how long to block' })),
    },
    handler: async (raw, caller) => {
      const args = raw as unknown as AgentArgs;
      const { action } = args;
      if (MESSAGING_ACTIONS.has(action) && !caller.isLoopback) throw new ToolError('forbidden', 'Agent messaging is restricted to localhost connections');
      switch (action) {
        case 'spawn':
          return await spawn(args, caller);
        case 'register':
          return register(args, caller);
        case 'list_peers':
          return { peers: messaging.listPeers(args.path ?? args.project) };
        case 'send':
          return send(args, caller);
        case 'inbox':
          return inbox(args, caller);
        case 'wait':
          return await wait(args, caller);
        case 'detect':
          return await deps.binaries.installed();
        case 'stats': {
          const max = deps.maxSessions();
          const active = sessions.liveCount;
          return { active_sessions: active, max_sessions: max, available_slots: Math.max(0, max - active) };
        }
        default: {
          const c = sessions.counters;
          return { total_spawned: c.total_spawned, total_failed: c.failed_spawns, bytes_emitted: c.bytes_emitted, pauses_triggered: c.pauses_triggered };
        }
      }
    },
  });
  return tool;
}
