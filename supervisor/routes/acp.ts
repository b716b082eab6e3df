/**
 * /acp/connections/…: drive ACP agents (ego, and any Agent Client Protocol agent) over HTTP and one
 * WebSocket per connection. Every route is behind TCP auth like the rest of the API (which lets
 * in only a local or authenticated caller, the guard the two launching routes need); the others
 * act only on a connection id one of those two handed out. Shapes, frames and errors: docs/acp.md.
 */
import type { TSchema } from 'typebox';

import { acpError } from '../acp/acpError.js';
import { acpPresenceKey } from '../acp/acpPresence.js';
import { type AcpConnection, EGO_EXTENSIONS, type EgoExtension } from '../acp/acpConnection.js';
import type { AcpRegistry } from '../acp/acpRegistry.js';
import type { AcpViewer } from '../acp/acpViewers.js';
import {
  AcpErrorSchema,
  AgentAnswer,
  ConfigBody,
  ConnectBody,
  ConnectionParams,
  ElicitationAnswerBody,
  InteractionParams,
  NewSessionBody,
  OkAnswer,
  PermissionAnswerBody,
  PromptBody,
  SessionParams,
  SnapshotSchema,
  StreamQuery,
} from '../acp/acpSchemas.js';
import { defineRoute } from '../http/routeSpec.js';
import type { Route, WsRoute } from '../http/types.js';
import { json } from '../http/types.js';
import type { ViewerPresence } from '../streaming/viewerPresence.js';
import { Type } from 'typebox';
import type { ContentBlock } from '@agentclientprotocol/sdk';

const TAG = 'acp';

/** The errors every ACP route may answer, in the ACP error shape. */
const ERRORS: Record<number, TSchema> = { 404: AcpErrorSchema, 410: AcpErrorSchema, 501: AcpErrorSchema, 502: AcpErrorSchema };

export function acpRoutes(registry: AcpRegistry): Route[] {
  const sessionVerb = (verb: 'load' | 'resume' | 'fork' | 'close', summary: string): Route =>
    defineRoute({
      method: 'POST',
      pattern: `/acp/connections/:id/sessions/:sid/${verb}`,
      tag: TAG,
      summary,
      params: SessionParams,
      noBody: true,
      answers: { 200: AgentAnswer, 409: AcpErrorSchema, ...ERRORS },
      handler: async ({ params }) => {
        const c = registry.get(params.id, `session/${verb}`);
        const run = { load: c.loadSession, resume: c.resumeSession, fork: c.forkSession, close: c.closeSession }[verb];
        return json(await run.call(c, params.sid));
      },
    });
  const extension = (verb: EgoExtension): Route =>
    defineRoute({
      method: 'POST',
      pattern: `/acp/connections/:id/sessions/:sid/${verb}`,
      tag: TAG,
      summary: `ego's extension: ${verb} (\`${EGO_EXTENSIONS[verb].method}\`; 501 capability_unavailable for an agent that does not advertise it)`,
      params: SessionParams,
      noBody: true,
      answers: { 200: AgentAnswer, ...ERRORS },
      handler: async ({ params }) => json(await registry.get(params.id, EGO_EXTENSIONS[verb].method).extension(params.sid, verb)),
    });
  return [
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections',
      tag: TAG,
      summary: 'Launch the configured ACP agent (`ego_executable`) in `root`, run initialize, answer the snapshot',
      body: ConnectBody,
      answers: { 201: SnapshotSchema, 400: AcpErrorSchema, ...ERRORS },
      handler: async ({ body }) => {
        const connection = await registry.open(body.root);
        return json(connection.snapshot(), 201);
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/acp/connections/:id',
      tag: TAG,
      summary: 'The connection now: generation, state, the agent’s info, capabilities and auth methods, sessions, the stream’s seq',
      params: ConnectionParams,
      answers: { 200: SnapshotSchema, ...ERRORS },
      handler: ({ params }) => json(registry.get(params.id, 'snapshot').snapshot()),
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/acp/connections/:id',
      tag: TAG,
      summary: 'Disconnect: end the agent’s process group, send `end` on the stream, forget the connection',
      params: ConnectionParams,
      answers: { 200: OkAnswer, ...ERRORS },
      handler: async ({ params }) => {
        await registry.delete(params.id);
        return json({ ok: true });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/kill',
      tag: TAG,
      summary: 'Kill the agent’s process group; the connection stays (state `closed`) for a reconnect',
      params: ConnectionParams,
      noBody: true,
      answers: { 200: SnapshotSchema, ...ERRORS },
      handler: async ({ params }) => {
        const c = registry.get(params.id, 'kill');
        await c.kill('killed');
        return json(c.snapshot());
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/reconnect',
      tag: TAG,
      summary: 'Settle the current generation and start the next one (same id, generation + 1) in `root`',
      params: ConnectionParams,
      body: ConnectBody,
      answers: { 200: SnapshotSchema, 400: AcpErrorSchema, ...ERRORS },
      handler: async ({ params, body }) => {
        return json((await registry.reconnect(params.id, body.root)).snapshot());
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/acp/connections/:id/sessions',
      tag: TAG,
      summary: 'Sessions: the agent’s list (session/list, when it offers one) marked with those attached here',
      params: ConnectionParams,
      answers: { 200: AgentAnswer, ...ERRORS },
      handler: async ({ params }) => json(await registry.get(params.id, 'session/list').listSessions()),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/sessions',
      tag: TAG,
      summary: 'session/new in the root (or `cwd` below it) → `{sessionId, …}`',
      params: ConnectionParams,
      body: NewSessionBody,
      emptyBody: {},
      answers: { 200: AgentAnswer, 400: AcpErrorSchema, ...ERRORS },
      handler: async ({ params, body }) => json(await registry.get(params.id, 'session/new').newSession(body.cwd)),
    }),
    sessionVerb('load', 'session/load: attach a stored session; the agent replays its history on the stream'),
    sessionVerb('resume', 'session/resume: attach a session without a replay'),
    sessionVerb('fork', 'session/fork: a new session from this one (agents that advertise it)'),
    sessionVerb('close', 'session/close: detach the session (the agent frees it)'),
    defineRoute({
      method: 'DELETE',
      pattern: '/acp/connections/:id/sessions/:sid',
      tag: TAG,
      summary: 'session/delete: delete the session for good',
      params: SessionParams,
      answers: { 200: OkAnswer, ...ERRORS },
      handler: async ({ params }) => json(await registry.get(params.id, 'session/delete').deleteSession(params.sid)),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/sessions/:sid/prompt',
      tag: TAG,
      summary: 'Start a turn and answer at once (202): its updates and its `stopReason` come on the stream after the `turn_started` frame at `seq`',
      params: SessionParams,
      body: PromptBody,
      answers: {
        202: Type.Object({ sessionId: Type.String(), turnId: Type.String(), seq: Type.Integer() }),
        400: AcpErrorSchema,
        409: AcpErrorSchema,
        ...ERRORS,
      },
      handler: ({ params, body }) => json(registry.get(params.id, 'session/prompt').prompt(params.sid, body.prompt as ContentBlock[]), 202),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/sessions/:sid/cancel',
      tag: TAG,
      summary: 'session/cancel: stop the running turn; its waiting questions are answered `cancelled`',
      params: SessionParams,
      noBody: true,
      answers: { 200: OkAnswer, ...ERRORS },
      handler: async ({ params }) => json(await registry.get(params.id, 'session/cancel').cancel(params.sid)),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/sessions/:sid/config',
      tag: TAG,
      summary: 'Set a session config option (`{configId, value}`) or its mode (`{modeId}`)',
      params: SessionParams,
      body: ConfigBody,
      answers: { 200: AgentAnswer, 400: AcpErrorSchema, ...ERRORS },
      handler: async ({ params, body }) => json(await registry.get(params.id, 'session/set_config_option').setConfig(params.sid, body)),
    }),
    extension('pause'),
    extension('resume-turn'),
    extension('compact'),
    defineRoute({
      method: 'GET',
      pattern: '/acp/connections/:id/interactions',
      tag: TAG,
      summary: 'Questions waiting on a person: permissions (the tool call, the options) and elicitations',
      params: ConnectionParams,
      answers: { 200: Type.Object({ interactions: Type.Array(Type.Unknown()) }), ...ERRORS },
      handler: ({ params }) => json({ interactions: registry.get(params.id, 'interactions').interactions.list() }),
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/permissions/:rid/response',
      tag: TAG,
      summary: 'Answer a permission once: `{optionId}` or `{cancelled: true}` (a second answer: 409)',
      params: InteractionParams,
      body: PermissionAnswerBody,
      answers: { 200: OkAnswer, 400: AcpErrorSchema, 409: AcpErrorSchema, ...ERRORS },
      handler: ({ params, body }) => {
        const interaction = registry.get(params.id, 'permission_response').interactions.answerPermission(params.rid, body);
        return json({ ok: true, requestId: interaction.requestId });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/acp/connections/:id/elicitations/:rid/response',
      tag: TAG,
      summary: 'Answer an elicitation once: `{action, content}` (a second answer: 409)',
      params: InteractionParams,
      body: ElicitationAnswerBody,
      answers: { 200: OkAnswer, 400: AcpErrorSchema, 409: AcpErrorSchema, ...ERRORS },
      handler: ({ params, body }) => {
        const interaction = registry.get(params.id, 'elicitation_response').interactions.answerElicitation(params.rid, body);
        return json({ ok: true, requestId: interaction.requestId });
      },
    }),
  ];
}

interface StreamData {
  connectionId: string;
  after: number;
  /** `?client=mobile`: the /mobile page's view, counted in ViewerPresence while open. */
  mobile: boolean;
  /** Held from the open on: a DELETE drops the connection from the registry before its viewers close. */
  connection?: AcpConnection;
  viewer?: AcpViewer;
}

/** Frames are small JSON; a viewer sends nothing but may be slow. */
const MAX_BACKPRESSURE_BYTES = 4 * 1024 * 1024;

const STREAM_DESCRIPTION = [
  "Upgrades to a WebSocket carrying the connection's frames in order, each a JSON text frame with a numeric `seq`:",
  '`{kind:"event", seq, connectionId, generation, atMs, event}` where `event.type` is `session_update` (the agent\'s notification verbatim), ' +
    '`turn_started`, `turn_ended` (`stopReason`, or `error`), `interaction_raised`, `interaction_settled`, `state`, `generation`; ' +
    '`{kind:"end", seq, reason}` when the connection is deleted; `{kind:"gap", after, firstAvailable}` (terminal) when the journal dropped frames the viewer never got.',
  '',
  '`?after=SEQ` resumes exactly after that frame; a cursor the journal no longer covers is refused with 404 before the upgrade. Examples: docs/acp.md.',
].join('\n');

export function acpStreamRoute(registry: AcpRegistry, presence: ViewerPresence): WsRoute<StreamData> {
  return {
    pattern: '/acp/connections/:id/stream',
    spec: {
      tag: TAG,
      summary: "An ACP connection's ordered frames over a WebSocket, resumable with ?after=",
      description: STREAM_DESCRIPTION,
      params: ConnectionParams,
      query: StreamQuery,
      answers: { 101: { description: 'Switching Protocols: frames as described above.' }, 404: AcpErrorSchema },
    },
    ws: {
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      maxPayloadLength: 1024,
      accept(ctx) {
        const connectionId = ctx.params['id'] ?? '';
        const connection = registry.get(connectionId, 'stream');
        const raw = ctx.query.get('after');
        const after = raw === null || raw === '' ? connection.journal.firstSeq - 1 : Number(raw);
        if (!Number.isSafeInteger(after) || after < 0)
          throw acpError('invalid_input', 'after must be a non-negative integer (a seq of this stream)', { connectionId, operation: 'stream' });
        if (after > connection.journal.lastSeq)
          throw acpError('invalid_input', `after=${after} is past the stream's last seq ${connection.journal.lastSeq}`, { connectionId, operation: 'stream' });
        if (!connection.journal.covers(after))
          throw acpError(
            'not_found',
            `the journal no longer holds the frames after seq ${after} (oldest held: ${connection.journal.firstSeq})`,
            { connectionId, operation: 'stream' },
            { firstAvailable: connection.journal.firstSeq },
          );
        return { connectionId, after, mobile: ctx.query.get('client') === 'mobile' };
      },
      open(ws) {
        const d = ws.getUserData();
        const connection = registry.find(d.connectionId);
        if (connection === undefined || connection.isDeleted) {
          ws.end(1000, 'connection deleted');
          return;
        }
        // Recorded before the first catch-up, which may end the socket (a gap): the close finds it.
        d.connection = connection;
        d.viewer = connection.viewers.add(ws, d.after);
        if (d.mobile) presence.add(acpPresenceKey(d.connectionId));
        connection.viewers.start(d.viewer);
      },
      drain(ws) {
        const d = ws.getUserData();
        if (d.viewer) d.connection?.viewers.drain(d.viewer);
      },
      close(ws) {
        const d = ws.getUserData();
        if (!d.viewer) return;
        if (d.mobile) presence.remove(acpPresenceKey(d.connectionId));
        d.connection?.viewers.remove(d.viewer);
        d.viewer = undefined;
      },
    },
  };
}
