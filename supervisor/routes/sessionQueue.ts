/**
 * The user's command queue for an agent session (REFERENCE §1.1 `/sessions/:id/queue`): commands
 * wait in the session's one typed FIFO with peers' messages and are typed one per idle, so an
 * agent that is mid-turn gets the next instruction when it finishes instead of in its composer.
 */
import { Buffer } from 'node:buffer';

import type { MailDelivery } from '../agents/mailDelivery.js';
import { TypedQueueConstants } from '../agents/typedQueue.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { Reply, RequestContext, Route } from '../http/types.js';
import type { SessionService } from '../sessions/sessionService.js';

/** Longest command accepted; the same ceiling as a peer message. */
const COMMAND_MAX_BYTES = 64 * 1024;

function bare(value: number | boolean): Reply {
  return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(value) };
}

export function sessionQueueRoutes(sessions: SessionService, mail: MailDelivery): Route[] {
  const record = (ctx: RequestContext) => sessions.get(ctx.params['id']!);
  return [
    {
      method: 'POST',
      pattern: '/sessions/:id/queue',
      handler: async (ctx) => {
        const r = record(ctx);
        const body = parseJsonBody<unknown>(ctx);
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'body must be a JSON object');
        const { text, idempotencyKey } = body as { text?: unknown; idempotencyKey?: unknown };
        if (typeof text !== 'string' || text.trim() === '') throw new HttpError(400, 'text must be a non-empty string');
        if (Buffer.byteLength(text) > COMMAND_MAX_BYTES)
          throw new HttpError(400, `text is ${Buffer.byteLength(text)} bytes; the limit is ${COMMAND_MAX_BYTES}`);
        if (idempotencyKey !== undefined) {
          const bytes = typeof idempotencyKey === 'string' ? Buffer.byteLength(idempotencyKey) : 0;
          if (bytes < 1 || bytes > TypedQueueConstants.IDEMPOTENCY_KEY_MAX_BYTES)
            throw new HttpError(400, `idempotencyKey must be a string of 1 to ${TypedQueueConstants.IDEMPOTENCY_KEY_MAX_BYTES} bytes`);
        }
        if (r.exit) throw new HttpError(409, 'Session has exited');
        if (r.agent_type === null) throw new HttpError(400, 'Session is not running an agent');
        return json(await mail.queueCommand(r, text, idempotencyKey as string | undefined));
      },
    },
    { method: 'GET', pattern: '/sessions/:id/queue', handler: (ctx) => json(mail.queuedCommands(record(ctx).session_id)) },
    // Bare JSON values (REFERENCE: the number removed; whether the command was there).
    { method: 'DELETE', pattern: '/sessions/:id/queue', handler: (ctx) => bare(mail.clearCommands(record(ctx))) },
    { method: 'DELETE', pattern: '/sessions/:id/queue/:cmdId', handler: (ctx) => bare(mail.removeCommand(record(ctx), ctx.params['cmdId']!)) },
  ];
}
