/**
 * The user's command queue for an agent session (`/sessions/:id/queue`): commands wait in the
 * session's one typed FIFO with peers' messages and are typed one per idle, so an agent that is
 * mid-turn gets the next instruction when it finishes instead of in its composer.
 */
import { Buffer } from 'node:buffer';

import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import type { MailDelivery } from '../agents/mailDelivery.js';
import { TypedQueueConstants } from '../agents/typedQueue.js';
import { defineRoute } from '../http/routeSpec.js';
import { bareJson, json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { SessionRefParams } from '../sessions/sessionSchemas.js';
import type { SessionService } from '../sessions/sessionService.js';

const TAG = 'sessions';

/** Longest command accepted; the same ceiling as a peer message. */
const COMMAND_MAX_BYTES = 64 * 1024;
const KEY_MAX_BYTES = TypedQueueConstants.IDEMPOTENCY_KEY_MAX_BYTES;
const KEY_ERROR = `idempotencyKey must be a string of 1 to ${KEY_MAX_BYTES} bytes`;

const QueueBody = Type.Object({
  text: Type.String({
    minLength: 1,
    // Not only whitespace: a blank command would press Enter on whatever the agent shows.
    pattern: '\\S',
    description: `The command, typed as a line when the agent is next idle: not blank, at most ${COMMAND_MAX_BYTES} bytes of UTF-8.`,
    errorMessage: 'text must be a non-empty string',
  }),
  idempotencyKey: Type.Optional(
    // Characters never outnumber UTF-8 bytes: maxLength refuses part of what the byte limit does, never more.
    Type.String({
      minLength: 1,
      maxLength: KEY_MAX_BYTES,
      description: `A resend with the same key is answered \`duplicate\` and typed once; 1 to ${KEY_MAX_BYTES} bytes.`,
      errorMessage: KEY_ERROR,
    }),
  ),
});

const QueueReceiptSchema = Type.Object({
  accepted: Type.Boolean({ description: 'false: a duplicate of a command already taken (same idempotencyKey).' }),
  typed: Type.Boolean({ description: 'The agent was idle: typed at once.' }),
  queued: Type.Boolean({ description: 'Waiting for the agent to be idle.' }),
  id: Type.Optional(Type.String({ description: 'The queued command, for DELETE /sessions/:id/queue/:cmdId.' })),
  duplicate: Type.Optional(Type.Literal(true)),
});

const CommandParams = Type.Object({ ...SessionRefParams.properties, cmdId: Type.String({ minLength: 1, description: "A queued command's `id`." }) });

export function sessionQueueRoutes(sessions: SessionService, mail: MailDelivery): Route[] {
  return [
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/queue',
      tag: TAG,
      summary: "Queue a command for the session's agent: typed at once when it is idle, else when it next is",
      params: SessionRefParams,
      body: QueueBody,
      answers: { 200: QueueReceiptSchema },
      handler: async ({ params, body }) => {
        const r = sessions.get(params.id);
        const bytes = Buffer.byteLength(body.text);
        if (bytes > COMMAND_MAX_BYTES)
          throw new ApiError('invalid_input', `text is ${bytes} bytes; the limit is ${COMMAND_MAX_BYTES}`, { extra: { field: 'text' } });
        if (body.idempotencyKey !== undefined && Buffer.byteLength(body.idempotencyKey) > KEY_MAX_BYTES) {
          throw new ApiError('invalid_input', KEY_ERROR, { extra: { field: 'idempotencyKey' } });
        }
        if (r.exit) throw new ApiError('conflict', 'Session has exited');
        if (r.agent_type === null) throw new ApiError('invalid_input', 'Session is not running an agent');
        return json(await mail.queueCommand(r, body.text, body.idempotencyKey));
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/queue',
      tag: TAG,
      summary: "The session's queued commands, oldest first (peers' messages in the same queue are not listed)",
      params: SessionRefParams,
      answers: { 200: Type.Array(Type.Object({ id: Type.String(), text: Type.String() })) },
      handler: ({ params }) => json(mail.queuedCommands(sessions.get(params.id).session_id)),
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/sessions/:id/queue',
      tag: TAG,
      summary: 'Drop every queued command of the session: a bare JSON number, how many',
      params: SessionRefParams,
      answers: { 200: Type.Integer({ minimum: 0, description: 'The number of commands removed.' }) },
      handler: ({ params }) => bareJson(mail.clearCommands(sessions.get(params.id))),
    }),
    defineRoute({
      method: 'DELETE',
      pattern: '/sessions/:id/queue/:cmdId',
      tag: TAG,
      summary: 'Drop one queued command: a bare JSON boolean, whether it was still queued',
      params: CommandParams,
      answers: { 200: Type.Boolean({ description: 'true: removed; false: already typed, removed, or never queued.' }) },
      handler: ({ params }) => bareJson(mail.removeCommand(sessions.get(params.id), params.cmdId)),
    }),
  ];
}
