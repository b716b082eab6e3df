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
import { defineTool, describeArgument, requireAction, ToolError } from './nativeTool.js';
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MESSAGING_ACTIONS = new Set(['register', 'list_peers', 'send', 'inbox']);

function optionalText(args: Record<string, unknown>, key: string, max: number): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ToolError(`'${key}' must be a string, got ${describeArgument(v)}`);
  if (v.length > max) throw new ToolError(`'${key}' must be at most ${max} characters`);
  return v;
}

function sinceArg(args: Record<string, unknown>): number | undefined {
  const v = args['since'];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    throw new ToolError(`'since' must be a non-negative integer (a next_since value), got ${describeArgument(v)}`);
  return v;
}

function limitArg(args: Record<string, unknown>): number {
  const v = args['limit'];
  if (v === undefined || v === null) return AgentConstants.INBOX_DEFAULT_LIMIT;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > AgentConstants.INBOX_CAPACITY)
    throw new ToolError(`'limit' must be an integer from 1 to ${AgentConstants.INBOX_CAPACITY}, got ${describeArgument(v)}`);
  return v;
}

function projectArg(args: Record<string, unknown>): string | undefined {
  return optionalText(args, 'path', AgentConstants.PROJECT_MAX_CHARS) ?? optionalText(args, 'project', AgentConstants.PROJECT_MAX_CHARS);
}

export function createAgentTool(deps: AgentToolDeps): NativeTool {
  const { messaging, sessions } = deps;

  const register = (args: Record<string, unknown>, caller: CallerContext): Record<string, unknown> => {
    const req: RegisterRequest = {};
    const announced = optionalText(args, 'tuic_session', 64);
    if (announced !== undefined && !UUID.test(announced))
      throw new ToolError(`tuic_session must be a canonical UUID (36 characters), got ${describeArgument(announced)}`);
    if (announced !== undefined) req.tuicSession = announced;
    const name = optionalText(args, 'name', AgentConstants.NAME_MAX_CHARS);
    if (name !== undefined && name.trim() === '') throw new ToolError("'name' must not be empty");
    if (name !== undefined) req.name = name;
    const project = projectArg(args);
    if (project !== undefined) req.project = project;
    const orchestrator = args['orchestrator'];
    if (orchestrator !== undefined && orchestrator !== null && typeof orchestrator !== 'boolean')
      throw new ToolError(`'orchestrator' must be a boolean, got ${describeArgument(orchestrator)}`);
    if (typeof orchestrator === 'boolean') req.orchestrator = orchestrator;
    const replaces = optionalText(args, 'replaces', 64);
    if (replaces !== undefined && !UUID.test(replaces))
      throw new ToolError(`replaces must be a canonical UUID (36 characters), got ${describeArgument(replaces)}`);
    if (replaces !== undefined) req.replaces = replaces;

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

  const send = (args: Record<string, unknown>, caller: CallerContext): Record<string, unknown> => {
    const to = args['to'];
    if (typeof to !== 'string' || to === '')
      throw new ToolError("Action 'send' requires 'to' (a peer's tuic_session, the session id of its terminal, or its alias)");
    const message = args['message'];
    if (typeof message !== 'string' || message === '') throw new ToolError("Action 'send' requires 'message'");
    const urgency = args['urgency'];
    if (urgency !== undefined && urgency !== null && urgency !== 'normal' && urgency !== 'urgent')
      throw new ToolError(`'urgency' must be normal or urgent, got ${describeArgument(urgency)}`);
    const { message: stored, receipt, toSelf } = messaging.send(caller, to, message, urgency === 'urgent');
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

  const inbox = (args: Record<string, unknown>, caller: CallerContext): Record<string, unknown> => {
    const page = messaging.inbox(caller, sinceArg(args), limitArg(args));
    const out: Record<string, unknown> = { messages: page.messages, count: page.messages.length, next_since: page.nextSince, has_more: page.hasMore };
    if (page.missed > 0) out['missed_count'] = page.missed;
    return out;
  };

  const wait = async (args: Record<string, unknown>, caller: CallerContext): Promise<Record<string, unknown>> => {
    const { messages, nextSince } = await messaging.wait(caller, sinceArg(args), clampWaitTimeout(args['timeout_ms']), caller.signal);
    const met = messages.length > 0;
    return { met, timed_out: !met, new_messages: messages.length, messages, next_since: nextSince };
  };

  const spawn = async (args: Record<string, unknown>, caller: CallerContext): Promise<Record<string, unknown>> => {
    if (!caller.isLoopback) throw new ToolError('forbidden', 'Agent spawning is restricted to localhost connections');
    const prompt = args['prompt'];
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new ToolError("Action 'spawn' requires 'prompt'");
    const req: SpawnRequest = { prompt };
    const text = (key: string): string | undefined => optionalText(args, key, AgentConstants.PROJECT_MAX_CHARS);
    const agentType = text('agent_type');
    if (agentType !== undefined) req.agentType = agentType;
    const binaryPath = text('binary_path');
    if (binaryPath !== undefined) req.binaryPath = binaryPath;
    const cwd = text('cwd');
    if (cwd !== undefined) req.cwd = cwd;
    const model = text('model');
    if (model !== undefined) req.model = model;
    const name = optionalText(args, 'name', AgentConstants.NAME_MAX_CHARS);
    if (name !== undefined) {
      if (name.trim() === '') throw new ToolError("'name' must not be empty");
      req.name = name;
    }
    const list = args['args'];
    if (list !== undefined && list !== null) {
      if (!Array.isArray(list) || !list.every((a) => typeof a === 'string'))
        throw new ToolError(`'args' must be an array of strings, got ${describeArgument(list)}`);
      req.args = list;
    }
    for (const dim of ['rows', 'cols'] as const) {
      const v = args[dim];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 500)
        throw new ToolError(`'${dim}' must be an integer from 1 to 500, got ${describeArgument(v)}`);
      req[dim] = v;
    }
    if (args['pty_description'] !== undefined) {
      const d = args['pty_description'];
      if (d !== null && typeof d !== 'string') throw new ToolError("'pty_description' must be a string or null");
      req.ptyDescription = d === '' ? null : (d as string | null);
    }
    const connection = args['connection_id'];
    if (connection !== undefined && connection !== null && connection !== '' && connection !== 'local') {
      throw new ToolError(
        `connection_id ${describeArgument(connection)} names a remote connection; tuicd runs agents on this machine only: omit connection_id`,
      );
    }
    if (args['env'] !== undefined && args['env'] !== null) {
      checkEnv(args['env']);
      req.env = args['env'] as Record<string, string>;
    }
    for (const [key, field] of [
      ['keep_open', 'keepOpen'],
      ['print_mode', 'printMode'],
    ] as const) {
      const v = args[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'boolean') throw new ToolError(`'${key}' must be a boolean, got ${describeArgument(v)}`);
      req[field] = v;
    }
    const outputFormat = text('output_format');
    if (outputFormat !== undefined) req.outputFormat = outputFormat;
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
      prompt: Type.Optional(Type.String({ description: 'spawn: the task' })),
      agent_type: Type.Optional(Type.String({ description: 'spawn: claude, codex, gemini… (its binary is looked up on PATH)' })),
      binary_path: Type.Optional(Type.String({ description: 'spawn: absolute path of the agent program' })),
      args: Type.Optional(Type.Array(Type.String(), { description: 'spawn: arguments; {prompt} marks where the prompt goes (else it is the last one)' })),
      cwd: Type.Optional(Type.String({ description: 'spawn: working directory' })),
      model: Type.Optional(Type.String({ description: 'spawn: passed as --model' })),
      env: Type.Optional(
        Type.Record(Type.String(), Type.String(), {
          description: 'spawn: extra environment variables',
          errorMessage: 'env must be an object of names to strings',
        }),
      ),
      keep_open: Type.Optional(
        Type.Boolean({ description: 'spawn: keep the terminal and its output after the agent exits', errorMessage: "'keep_open' must be a boolean" }),
      ),
      print_mode: Type.Optional(Type.Boolean({ description: 'spawn: true runs the agent one-shot and headless (claude -p, codex exec); default false' })),
      output_format: Type.Optional(Type.String({ description: 'spawn, print_mode: e.g. json' })),
      connection_id: Type.Optional(Type.String({ description: 'spawn: a remote connection; tuicd has only this machine' })),
      rows: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
      cols: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
      pty_description: Type.Optional(
        Type.Union([Type.String(), Type.Null()], { description: 'spawn: what the terminal works on (default: from the prompt; null: none)' }),
      ),
      name: Type.Optional(Type.String({ description: 'register, spawn: display name' })),
      path: Type.Optional(Type.String({ description: 'register: your project (repository path); list_peers: only peers of this project' })),
      orchestrator: Type.Optional(Type.Boolean({ description: 'register: declare (true) or drop (false) the orchestrator role; omitted keeps it' })),
      tuic_session: Type.Optional(
        Type.String({ description: 'register: the identity (canonical UUID) to register as; omitted = your terminal’s, or a new one' }),
      ),
      replaces: Type.Optional(Type.String({ description: 'register: an old identity (UUID) whose mail moves to you' })),
      to: Type.Optional(Type.String({ description: 'send: recipient' })),
      message: Type.Optional(Type.String({ description: 'send: the text, at most 64 KiB' })),
      urgency: Type.Optional(Type.String({ enum: ['normal', 'urgent'], description: 'send: default normal' } as never)),
      since: Type.Optional(Type.Integer({ minimum: 0, description: 'inbox, wait: a next_since value; 0 replays everything' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'inbox: at most this many messages (default 100)' })),
      timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 300_000, description: 'wait: how long to block' })),
    },
    handler: async (args, caller) => {
      const action = requireAction(tool, args);
      if (MESSAGING_ACTIONS.has(action) && !caller.isLoopback) throw new ToolError('forbidden', 'Agent messaging is restricted to localhost connections');
      switch (action) {
        case 'spawn':
          return await spawn(args, caller);
        case 'register':
          return register(args, caller);
        case 'list_peers':
          return { peers: messaging.listPeers(projectArg(args)) };
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
