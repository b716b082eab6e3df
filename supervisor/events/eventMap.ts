/**
 * Every event tuicd publishes on its bus, by name, with the typebox schema of its payload. The bus
 * is typed from this map (a wrong payload or an unknown name does not compile), GET /openapi.json
 * describes the `/events` stream from it (sseAnswer), and the tests validate live payloads against it.
 * Payloads are sent as `data:` JSON exactly as published; a field marked optional is left out, never null.
 */
import type { Static, TLiteral, TSchema, TSchemaOptions, TUnion } from 'typebox';
import { Type } from 'typebox';

import type { ParsedEvent } from '../../shared/protocol/parsedEvents.js';
import { UpstreamStatusSchema } from '../../shared/protocol/upstreamServer.js';
import type { ProgressKind } from '../progress/progressJournal.js';
import type { AgentType } from '../sessions/agentDetection.js';
import { SessionStateSchema } from '../sessions/sessionSchemas.js';

/** A union of string literals that keeps each literal in its static type. */
function literals<const T extends readonly string[]>(values: T, options: TSchemaOptions = {}): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as never;
}

const AGENT_TYPES = ['claude', 'gemini', 'opencode', 'aider', 'codex', 'amp', 'cursor', 'goose', 'grok', 'droid', 'pi'] as const;
export const TOAST_LEVELS = ['info', 'warn', 'error'] as const;
export type ToastLevel = (typeof TOAST_LEVELS)[number];
/** The notification sounds every client knows how to play: a toast's `sound` names one. */
export const NOTIFICATION_SOUNDS = ['question', 'completion', 'error', 'warning', 'info', 'attention'] as const;
export type NotificationSound = (typeof NOTIFICATION_SOUNDS)[number];
const PROGRESS_KINDS = ['done', 'blocked', 'intent', 'delegated', 'message'] as const;

const sessionId = Type.String({ description: 'The session id (a UUID).' });
const repoPath = Type.String({ description: 'Absolute path of the repository (its main checkout).' });

/** The output parser's events (`type` tags them), as `pty-parsed` carries them. */
export const ParsedEventPayloadSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('rate-limit'), pattern_name: Type.String(), matched_text: Type.String(), retry_after_ms: Type.Number() }),
    Type.Object({
      type: Type.Literal('status-line'),
      task_name: Type.String(),
      full_line: Type.String(),
      time_info: Type.Optional(Type.String()),
      token_info: Type.Optional(Type.String()),
    }),
    Type.Object({ type: Type.Literal('pr-url'), number: Type.Number(), url: Type.String(), platform: literals(['github', 'gitlab']) }),
    Type.Object({ type: Type.Literal('progress'), state: Type.Number(), value: Type.Number() }),
    Type.Object({ type: Type.Literal('question'), prompt_text: Type.String(), confident: Type.Boolean() }),
    Type.Object({ type: Type.Literal('question-cleared') }),
    Type.Object({ type: Type.Literal('usage-limit'), percentage: Type.Number(), limit_type: literals(['weekly', 'session']) }),
    Type.Object({ type: Type.Literal('usage-exhausted'), reset_time: Type.Optional(Type.String()) }),
    Type.Object({ type: Type.Literal('plan-file'), path: Type.String() }),
    Type.Object({ type: Type.Literal('user-input'), content: Type.String(), line: Type.Number() }),
    Type.Object({
      type: Type.Literal('api-error'),
      pattern_name: Type.String(),
      matched_text: Type.String(),
      error_kind: literals(['server', 'auth', 'unknown']),
    }),
    Type.Object({ type: Type.Literal('tool-error'), matched_text: Type.String() }),
    Type.Object({ type: Type.Literal('intent'), text: Type.String(), title: Type.Optional(Type.String()) }),
    Type.Object({ type: Type.Literal('suggest'), items: Type.Array(Type.String()) }),
    Type.Object({
      type: Type.Literal('slash-menu'),
      items: Type.Array(Type.Object({ command: Type.String(), description: Type.String(), highlighted: Type.Boolean() })),
    }),
    Type.Object({
      type: Type.Literal('choice-prompt'),
      title: Type.String(),
      options: Type.Array(
        Type.Object({ key: Type.String(), label: Type.String(), highlighted: Type.Boolean(), destructive: Type.Boolean(), hint: Type.Optional(Type.String()) }),
      ),
      dismiss_key: Type.Optional(Type.String()),
      amend_key: Type.Optional(Type.String()),
    }),
    Type.Object({ type: Type.Literal('choice-cleared') }),
    Type.Object({ type: Type.Literal('active-subtasks'), count: Type.Number(), task_type: Type.String() }),
    Type.Object({ type: Type.Literal('shell-state'), state: literals(['busy', 'idle']), agent_type: Type.Optional(Type.String()) }),
    Type.Object({ type: Type.Literal('agent-block'), action: literals(['start', 'end']), line: Type.Number(), exit_code: Type.Optional(Type.Number()) }),
    Type.Object({ type: Type.Literal('agent-session-conflict'), matched_text: Type.String(), kind: literals(['in-use', 'not-found']) }),
  ],
  { description: 'One parser event; `type` says which.' },
);

export const ProgressEntrySchema = Type.Object({
  id: Type.String(),
  at_ms: Type.Integer({ description: 'When it was recorded (ms since the epoch).' }),
  kind: literals(PROGRESS_KINDS, { description: '`done`/`blocked` are reported by agents; `intent`, `delegated` and `message` are written by tuicd.' }),
  project: Type.String({ description: 'The repository path the entry belongs to, or `unknown`.' }),
  agent: Type.String({ description: 'Who reported: a `tuic_session` or an MCP client name.' }),
  text: Type.String(),
  step: Type.Optional(Type.String()),
  session_id: Type.Optional(Type.String({ description: 'The terminal the reporter runs in, when it runs in one of ours.' })),
});

/** The events, by name. Each schema's description says when the event is published. */
export const EVENT_SCHEMAS = {
  'session-created': Type.Object(
    {
      session_id: sessionId,
      cwd: Type.String(),
      agent_type: Type.Union([literals(AGENT_TYPES), Type.Null()], { description: 'The agent the session was created as, if any.' }),
      display_name: Type.String(),
    },
    { description: 'A terminal session was created (POST /sessions, the `session` tool, an agent spawn).' },
  ),
  'term-alias-assigned': Type.Object(
    { session_id: sessionId, alias: Type.String({ description: 'The short name (`tu-1`) any `:id` also accepts.' }) },
    { description: 'A new session got its alias; follows its `session-created`.' },
  ),
  'session-state-changed': Type.Object(
    { session_id: sessionId, state: SessionStateSchema },
    { description: "A session's state (agent state, question, rate limit, shell state…) changed; the whole state, not a delta." },
  ),
  'pty-parsed': Type.Object(
    { session_id: sessionId, parsed: ParsedEventPayloadSchema },
    { description: "The output parser recognised something in a session's output (a question, a status line, a rate limit…)." },
  ),
  'pty-description-changed': Type.Object(
    { session_id: sessionId, pty_description: Type.Optional(Type.String({ description: 'Absent when the description was cleared.' })) },
    { description: "The orchestrator set or cleared a session's description." },
  ),
  'plugin-watcher-lines': Type.Object(
    {
      session_id: sessionId,
      lines: Type.Array(
        Type.Object({
          text: Type.String({ description: 'The line, stripped of escapes and redacted.' }),
          matched_ids: Type.Array(Type.String(), { description: 'The watchers that matched, as `<client_id>/<watcher_id>`.' }),
        }),
      ),
    },
    { description: "Lines of a session's output that output watchers (POST /api/plugins/output-watchers) matched." },
  ),
  'pty-exit': Type.Object(
    { session_id: sessionId, exit_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when a signal ended it.' }) },
    { description: "A session's process exited." },
  ),
  'session-closed': Type.Object(
    {
      session_id: sessionId,
      reason: Type.String({
        description:
          '`exit` (the process ended), `explicit_close` (DELETE /sessions/:id), `closed` (the `session` tool), `killed`, `pty_host_exited`; ' +
          'published at start for sessions a pty host left without a supervisor ended: `orphan_timeout` (services.orphan_timeout_min), ' +
          '`pty_protocol_changed` (an upgrade replaced a host of another protocol version), `exit` (its process ended meanwhile).',
      }),
    },
    { description: 'A session ended; its record stays readable for a while (a tombstone).' },
  ),
  'peer-registered': Type.Object(
    { tuic_session: Type.String(), name: Type.String() },
    { description: 'An agent identity was registered for messaging (through tuic-bridge, or `agent action=register`).' },
  ),
  'peer-unregistered': Type.Object(
    { tuic_session: Type.String() },
    { description: 'An agent identity nobody can reach any more was dropped, with its inbox.' },
  ),
  'repositories-changed': Type.Null({
    description: 'The list of known repositories changed (registered, removed, or discovered from a session cwd); no payload.',
  }),
  'repo-changed': Type.Object(
    { repo_path: repoPath, kind: literals(['git-state', 'working-tree'], { description: '`git-state`: under .git (refs, index); `working-tree`: a file.' }) },
    { description: 'Something changed in a watched repository (debounced).' },
  ),
  'head-changed': Type.Object(
    { repo_path: repoPath, branch: Type.Union([Type.String(), Type.Null()], { description: 'null when HEAD is detached.' }) },
    { description: "A watched repository's checked-out branch changed." },
  ),
  'worktree-created': Type.Object(
    {
      repo_path: repoPath,
      workspace_id: Type.String({ description: "The worktree directory's name." }),
      branch: Type.String(),
      worktree_path: Type.String(),
      kind: Type.Literal('worktree'),
      creator_session: Type.Optional(Type.String({ description: 'The session that asked for it, when one did.' })),
    },
    { description: 'A worktree was created (POST /worktrees, the `repo` tool).' },
  ),
  'worktree-create-failed': Type.Object(
    { repo_path: repoPath, branch: Type.String(), reason: Type.String() },
    { description: 'Creating a worktree failed; `reason` is the error.' },
  ),
  'worktree-removed': Type.Object(
    { repo_path: repoPath, workspace_id: Type.String(), branch: Type.Union([Type.String(), Type.Null()]) },
    { description: 'A worktree was removed.' },
  ),
  'progress-recorded': Type.Object(
    { entry: ProgressEntrySchema },
    { description: 'An entry was added to the progress journal (the `progress` tool, or an intent marker).' },
  ),
  'mcp-oauth-start': Type.Object(
    {
      name: Type.String(),
      authorization_url: Type.String(),
      as_origin: Type.String(),
      cross_domain_as: Type.Boolean(),
    },
    {
      description: 'An OAuth authorization of an upstream started (POST /mcp/upstreams/oauth/start): the URL to open, and the authorization server it goes to.',
    },
  ),
  'upstream-status-changed': Type.Object(
    {
      name: Type.String(),
      status: Type.Union([UpstreamStatusSchema, Type.Literal('disconnected')]),
      last_error: Type.Union([Type.String(), Type.Null()], {
        description:
          'Why it left `ready` or is not ready (a failed handshake or call, `… (pid 123) ended: exited on its own (signal SIGKILL)`); null when ready.',
      }),
    },
    { description: "An upstream MCP server's status changed." },
  ),
  'config-changed': Type.Object(
    { paths: Type.Array(Type.String(), { description: 'Dotted paths of every changed leaf (`services.server.port`).' }) },
    { description: 'config.json was saved with changes.' },
  ),
  'mcp-toast': Type.Object(
    {
      title: Type.String(),
      message: Type.Optional(Type.String()),
      level: literals(TOAST_LEVELS),
      sound: Type.Union([literals(NOTIFICATION_SOUNDS), Type.Null()], { description: 'The sound to play, or null for none.' }),
      origin_session_id: Type.Optional(Type.String({ description: "The caller's `tuic_session`, when it runs in one of our terminals." })),
      origin_repo_path: Type.Optional(Type.String({ description: "The caller's repository (its terminal's cwd, or the MCP session's root)." })),
    },
    { description: 'An agent asked for a notification (`ui action=toast`).' },
  ),
  'ui-tab': Type.Object(
    {
      id: Type.String({ description: 'Dedup key: a tab with the same id is replaced.' }),
      title: Type.String(),
      html: Type.Optional(Type.String()),
      url: Type.Optional(Type.String()),
      pinned: Type.Boolean(),
      focus: Type.Boolean(),
      origin_session_id: Type.Optional(Type.String()),
    },
    { description: 'An agent opened or replaced a tab (`ui action=tab`): exactly one of `html` and `url`.' },
  ),
  'mcp-confirm': Type.Object(
    { request_id: Type.String(), title: Type.String(), message: Type.Optional(Type.String()), origin_session_id: Type.Optional(Type.String()) },
    { description: 'An agent asks the human a yes/no question (`ui action=confirm`); answer with POST /mcp/confirm-response.' },
  ),
  'acp-notice': Type.Object(
    {
      event: literals(['ready', 'settled', 'interaction_pending', 'interaction_settled']),
      connection_id: Type.String(),
      generation: Type.Integer({ minimum: 1 }),
      seq: Type.Integer({ minimum: 0, description: 'The stream frame this notice is about: read the stream from here.' }),
      session_id: Type.Optional(Type.String()),
      request_id: Type.Optional(Type.String()),
    },
    {
      description:
        'An ACP connection changed in a way a person may care about (ready, settled, a question raised or answered): a wake signal; ' +
        'read the snapshot, the interactions or the stream from `seq`. Turn frames never come here.',
    },
  ),
  'mcp-confirm-resolved': Type.Object(
    {
      request_id: Type.String(),
      confirmed: Type.Boolean(),
      reason: Type.Optional(Type.String({ description: 'Why nobody answered (timeout, caller gone, shutdown); absent after an answer.' })),
    },
    { description: 'A confirm request was answered or ended; every client drops its dialog.' },
  ),
} as const;

/** Notices the stream itself writes: never published on the bus, and never with an `id`. */
export const STREAM_NOTICE_SCHEMAS = {
  lagged: Type.Object(
    { missed: Type.Integer({ minimum: 1, description: 'How many events this subscriber lost.' }) },
    { description: 'The subscriber fell behind (its queue overflowed): events were dropped for it; it should re-read what it shows.' },
  ),
} as const;

type Schemas = typeof EVENT_SCHEMAS;

/** The payload type of every event, by name. */
export type TuicdEvents = { [K in keyof Schemas]: Static<Schemas[K]> };
export type EventName = keyof TuicdEvents;
export type EventPayload<K extends EventName> = TuicdEvents[K];

export const EVENT_NAMES = Object.keys(EVENT_SCHEMAS) as EventName[];

/** The schema of one event's payload, or undefined for a name tuicd never publishes. */
export function eventSchema(name: string): TSchema | undefined {
  return Object.hasOwn(EVENT_SCHEMAS, name) ? EVENT_SCHEMAS[name as EventName] : undefined;
}

/**
 * GET /events's 200 body for the OpenAPI document: one `{event, id, data}` object per event name,
 * `data` being that event's payload schema, and the `lagged` notice (no id).
 */
export function sseEventsSchema(): TSchema {
  const frame = (name: string, payload: TSchema, withId: boolean) =>
    Type.Object(
      {
        event: Type.Literal(name),
        ...(withId ? { id: Type.Integer({ minimum: 1, description: 'Increases by one per published event; one sequence for all subscribers.' }) } : {}),
        data: payload,
      },
      { title: name, ...describedAs(payload) },
    );
  const frames = [
    ...Object.entries(EVENT_SCHEMAS).map(([name, schema]) => frame(name, schema, true)),
    ...Object.entries(STREAM_NOTICE_SCHEMAS).map(([name, schema]) => frame(name, schema, false)),
  ];
  return Type.Unsafe({ oneOf: frames, description: 'One SSE event: the `event:` line, the `id:` line and the `data:` line (JSON).' });
}

function describedAs(schema: TSchema): { description?: string } {
  const description = (schema as { description?: unknown }).description;
  return typeof description === 'string' ? { description } : {};
}

// The schemas restate types declared elsewhere: these fail to compile when the two drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type ParsedEventSchemaMatches = Assert<Same<Static<typeof ParsedEventPayloadSchema>, ParsedEvent>>;
export type AgentTypesMatch = Assert<Same<(typeof AGENT_TYPES)[number], AgentType>>;
export type ProgressKindsMatch = Assert<Same<(typeof PROGRESS_KINDS)[number], ProgressKind>>;
