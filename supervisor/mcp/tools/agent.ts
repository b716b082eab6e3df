/**
 * `agent`: peers and their mail (REFERENCE §6.2; spec "Inter-Agent Messaging", "Protocol"):
 * register (an optional rename for a PTY-bound peer, an identity for a headerless one), list_peers,
 * send (inbox first, then the route the recipient's state allows: mailDelivery.ts), inbox and wait
 * (server-side cursors, logical ms), stats and metrics. Messaging is loopback-only (anti-hijack).
 */
import { randomUUID } from 'node:crypto';

import { Type } from 'typebox';

import { ApiError } from '../../../shared/apiError.js';
import { AgentConstants, type AgentMessage, type Peer, type PeerRegistry } from '../../agents/peerRegistry.js';
import type { MailDelivery } from '../../agents/mailDelivery.js';
import { SpawnError, type AgentSpawner, type SpawnRequest } from '../../agents/agentSpawner.js';
import type { AgentBinaries } from '../../agents/agentBinaries.js';
import type { LifecycleMail } from '../../agents/lifecycleMail.js';
import { checkEnv, type SessionService } from '../../sessions/sessionService.js';
import { clampWaitTimeout } from '../../sessions/sessionWaiter.js';
import type { Logger } from '../../log.js';
import { defineTool, describeArgument, requireAction, ToolError } from './nativeTool.js';
import type { CallerContext, NativeTool } from './nativeTool.js';

/** The protocol session facts register needs: is the current owner of an identity still live? */
export interface McpSessionFacts {
  exists(mcpSessionId: string): boolean;
  /** Holds its GET stream, or made a request within LIVE_OWNER_MS. */
  isLive(mcpSessionId: string): boolean;
  /** The identity its initialize asserted with x-tuic-session (the PTY's environment), if any. */
  assertedIdentity(mcpSessionId: string): string | null;
}

export interface AgentToolDeps {
  sessions: SessionService;
  peers: PeerRegistry;
  mail: MailDelivery;
  spawner: AgentSpawner;
  lifecycle: LifecycleMail;
  binaries: AgentBinaries;
  mcpFacts: McpSessionFacts;
  maxSessions: () => number;
  log: Logger;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MESSAGING_ACTIONS = new Set(['register', 'list_peers', 'send', 'inbox']);
const NOT_REGISTERED = 'You are not registered. Register first with agent action=register';

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

export function createAgentTool(deps: AgentToolDeps): NativeTool {
  const { peers, sessions } = deps;
  /** One takeover warning per (identity, claimant) pair. */
  const warned = new Set<string>();

  /** The caller's identity: its protocol session's route, else the one its initialize asserted. */
  const callerIdentity = (caller: CallerContext): Peer | undefined => {
    const id = peers.identityOf(caller.mcpSessionId) ?? caller.tuicSession;
    return id === null ? undefined : peers.get(id);
  };

  const hasTerminal = (tuicSession: string): boolean => {
    const r = sessions.resolve(tuicSession);
    return r !== undefined && !r.exit;
  };

  /** A peer by tuic_session, PTY session id or alias. */
  const recipient = (to: string): Peer | undefined => {
    const direct = peers.get(to);
    if (direct) return direct;
    const record = sessions.resolve(to);
    return record ? peers.get(record.tuic_session) : undefined;
  };

  const register = (args: Record<string, unknown>, caller: CallerContext): Record<string, unknown> => {
    const mcp = caller.mcpSessionId;
    if (mcp === null) {
      throw new ToolError('Registration needs an MCP protocol session (Mcp-Session-Id). Run `initialize` first, then call agent action=register.');
    }
    const announced = optionalText(args, 'tuic_session', 64);
    if (announced !== undefined && !UUID.test(announced))
      throw new ToolError(`tuic_session must be a canonical UUID (36 characters), got ${describeArgument(announced)}`);
    const name = optionalText(args, 'name', AgentConstants.NAME_MAX_CHARS);
    if (name !== undefined && name.trim() === '') throw new ToolError("'name' must not be empty");
    const project = optionalText(args, 'path', AgentConstants.PROJECT_MAX_CHARS) ?? optionalText(args, 'project', AgentConstants.PROJECT_MAX_CHARS);
    const orchestrator = args['orchestrator'];
    if (orchestrator !== undefined && orchestrator !== null && typeof orchestrator !== 'boolean')
      throw new ToolError(`'orchestrator' must be a boolean, got ${describeArgument(orchestrator)}`);
    const replaces = optionalText(args, 'replaces', 64);
    if (replaces !== undefined && !UUID.test(replaces))
      throw new ToolError(`replaces must be a canonical UUID (36 characters), got ${describeArgument(replaces)}`);

    const bound = peers.identityOf(mcp) ?? caller.tuicSession;
    const out: Record<string, unknown> = { ok: true };
    let target = announced ?? bound ?? null;
    let generated = false;
    if (target === null) {
      // A headerless caller: an identity of its own, stable for this protocol session.
      target = randomUUID();
      generated = true;
    }
    if (bound !== null && target !== bound) {
      // Ranked, not compared: an identity backed by a terminal outranks one that is not.
      const boundLive = hasTerminal(bound);
      const targetLive = hasTerminal(target);
      if (boundLive && !targetLive)
        throw new ToolError(`This MCP session is bound to identity ${bound}, which owns a live terminal; register with tuic_session=${bound} (or omit it)`);
      if (!targetLive) throw new ToolError('This MCP session is already bound to a different peer identity');
    }
    const existing = peers.get(target);
    if (existing && !existing.routes.includes(mcp) && caller.tuicSession !== target && deps.mcpFacts.assertedIdentity(mcp) !== target) {
      // Another protocol session owns it: a live owner is never taken over by an unrouted caller.
      const liveOwner = existing.routes.some((r) => deps.mcpFacts.isLive(r));
      if (liveOwner) {
        const pair = `${target} ${mcp}`;
        if (!warned.has(pair)) {
          warned.add(pair);
          deps.log.warn({ tuic_session: target, claimant: mcp }, 'agent register refused: identity held by another active MCP session');
        }
        throw new ToolError(`Identity ${target} is already registered to another active MCP session`);
      }
      for (const stale of [...existing.routes]) peers.unroute(stale);
    }
    const previous = bound !== null && bound !== target ? peers.get(bound) : undefined;
    const { peer } = peers.bind(target, mcp, { generated, name: name ?? sessions.resolve(target)?.display_name ?? 'agent' });
    if (previous) {
      // Repair: the invented identity's mail follows the real one, and the invented one retires.
      out['superseded_identity'] = previous.tuic_session;
      out['mail_migrated'] = peers.migrate(previous, peer);
      if (previous.routes.length === 0 && !hasTerminal(previous.tuic_session)) peers.remove(previous.tuic_session);
    }
    if (replaces !== undefined && replaces !== target) {
      const old = peers.get(replaces);
      out['superseded_identity'] = replaces;
      if (!old) out['mail_migrated'] = 0;
      else if (hasTerminal(replaces)) {
        // A peer with a terminal is reachable: taking its inbox would strand a working agent.
        out['mail_migrated'] = 0;
        out['mail_stranded'] = old.inbox.length;
        out['identity_warning'] = `Identity ${replaces} still owns a live terminal; its mail stays with it`;
      } else {
        out['mail_migrated'] = peers.migrate(old, peer);
        peers.remove(replaces);
      }
    }
    if (name !== undefined) peer.name = name.trim();
    if (project !== undefined) peer.project = project;
    if (typeof orchestrator === 'boolean') peer.orchestrator = orchestrator;
    const record = sessions.resolve(peer.tuic_session);
    const terminal = record !== undefined && !record.exit;
    // Children this protocol session spawned before it had an identity become this peer's.
    const linked = deps.lifecycle.link(mcp, peer.tuic_session);
    return {
      ...out,
      tuic_session: peer.tuic_session,
      name: peer.name,
      linked_children: linked,
      identity_generated: peer.generated,
      terminal,
      orchestrator: peer.orchestrator,
      mail_wake: terminal && record.agent_type !== null ? 'managed_pty_lifecycle' : 'none',
    };
  };

  const listPeers = (args: Record<string, unknown>): Record<string, unknown> => {
    const project = optionalText(args, 'path', AgentConstants.PROJECT_MAX_CHARS) ?? optionalText(args, 'project', AgentConstants.PROJECT_MAX_CHARS);
    const out: Array<Record<string, unknown>> = [];
    for (const p of peers.list()) {
      if (project !== undefined && p.project !== project) continue;
      const entry: Record<string, unknown> = { tuic_session: p.tuic_session, name: p.name, orchestrator: p.orchestrator };
      const record = sessions.resolve(p.tuic_session);
      if (record && !record.exit) {
        if (record.alias) entry['alias'] = record.alias;
        entry['session_id'] = record.session_id;
      }
      if (p.project !== null) entry['project'] = p.project;
      out.push(entry);
    }
    return { peers: out };
  };

  const send = (args: Record<string, unknown>, caller: CallerContext): Record<string, unknown> => {
    const to = args['to'];
    if (typeof to !== 'string' || to === '')
      throw new ToolError("Action 'send' requires 'to' (a peer's tuic_session, the session id of its terminal, or its alias)");
    const message = args['message'];
    if (typeof message !== 'string' || message === '') throw new ToolError("Action 'send' requires 'message'");
    const bytes = Buffer.byteLength(message);
    if (bytes > AgentConstants.MESSAGE_MAX_BYTES) throw new ToolError(`Message is ${bytes} bytes; the limit is ${AgentConstants.MESSAGE_MAX_BYTES} (64 KiB)`);
    const urgency = args['urgency'];
    if (urgency !== undefined && urgency !== null && urgency !== 'normal' && urgency !== 'urgent')
      throw new ToolError(`'urgency' must be normal or urgent, got ${describeArgument(urgency)}`);
    const from = callerIdentity(caller);
    if (!from) throw new ToolError(NOT_REGISTERED);
    const target = recipient(to);
    if (!target) throw new ToolError(`Recipient '${to}' is not registered. Use list_peers to find valid targets.`);
    const { message: stored, receipt } = deps.mail.send(from, target, message, urgency === 'urgent');
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
    if (target.tuic_session === from.tuic_session) out['warning'] = 'You sent a message to yourself';
    return out;
  };

  /** A read: messages after the cursor; a read that did not name `since` moves the stored cursor. */
  const observe = (peer: Peer, since: number | undefined, messages: AgentMessage[], acknowledges = true): number => {
    const last = messages.at(-1)?.timestamp;
    if (since === undefined && last !== undefined) peer.cursor = Math.max(peer.cursor, last);
    // The read acknowledges the unread group with its snapshot, an empty one too: its wake budget starts over.
    if (acknowledges) deps.mail.acknowledged(peer);
    return last ?? (since === undefined ? peer.cursor : Math.max(since, peer.cursor));
  };

  const inbox = (args: Record<string, unknown>, caller: CallerContext): Record<string, unknown> => {
    const peer = callerIdentity(caller);
    if (!peer) throw new ToolError(NOT_REGISTERED);
    const since = sinceArg(args);
    const { messages, has_more } = peers.read(peer, since, limitArg(args));
    const out: Record<string, unknown> = { messages, count: messages.length, next_since: observe(peer, since, messages), has_more };
    if (peer.missed > 0) {
      out['missed_count'] = peer.missed;
      peer.missed = 0;
    }
    return out;
  };

  const wait = async (args: Record<string, unknown>, caller: CallerContext): Promise<Record<string, unknown>> => {
    const peer = callerIdentity(caller);
    if (!peer) throw new ToolError('agent action=wait needs a registered identity. Register first with agent action=register');
    const since = sinceArg(args);
    const timeoutMs = clampWaitTimeout(args['timeout_ms']);
    const fresh = (): AgentMessage[] => peers.read(peer, since, AgentConstants.INBOX_CAPACITY).messages;
    let messages = fresh();
    if (messages.length === 0) {
      // Subscribe, then check again: a message that landed in between is not missed.
      await new Promise<void>((resolve) => {
        let unsubscribe = (): void => {};
        const done = (): void => {
          clearTimeout(timer);
          unsubscribe();
          caller.signal.removeEventListener('abort', done);
          resolve();
        };
        unsubscribe = peers.onMail(peer.tuic_session, done);
        const timer = setTimeout(done, timeoutMs);
        caller.signal.addEventListener('abort', done, { once: true });
        if (fresh().length > 0) done();
      });
      messages = fresh();
    }
    const met = messages.length > 0;
    return { met, timed_out: !met, new_messages: messages.length, messages, next_since: observe(peer, since, messages, met) };
  };

  const spawn = async (args: Record<string, unknown>, caller: CallerContext): Promise<Record<string, unknown>> => {
    if (!caller.isLoopback) throw new ToolError('Agent spawning is restricted to localhost connections');
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
      try {
        checkEnv(args['env']);
      } catch (err) {
        throw new ToolError((err as Error).message);
      }
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
    const parent = callerIdentity(caller);
    try {
      return { ...(await deps.spawner.spawn(req, parent, parent?.tuic_session ?? caller.mcpSessionId ?? 'anonymous', caller.mcpSessionId)) };
    } catch (err) {
      if (err instanceof SpawnError || err instanceof ApiError) throw new ToolError(err.message);
      throw err;
    }
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
      env: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'spawn: extra environment variables' })),
      keep_open: Type.Optional(Type.Boolean({ description: 'spawn: keep the terminal and its output after the agent exits' })),
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
      if (MESSAGING_ACTIONS.has(action) && !caller.isLoopback) throw new ToolError('Agent messaging is restricted to localhost connections');
      switch (action) {
        case 'spawn':
          return spawn(args, caller);
        case 'register':
          return register(args, caller);
        case 'list_peers':
          return listPeers(args);
        case 'send':
          return send(args, caller);
        case 'inbox':
          return inbox(args, caller);
        case 'wait':
          return wait(args, caller);
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
