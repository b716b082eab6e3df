/**
 * POST /mcp/confirm-response {request_id, confirmed}: a client answers a pending `ui action=confirm`.
 * Open to the socket and to authenticated TCP (the HTTP layer authenticates); the first answer wins.
 * The answer is always `{ok: true}`: answers to unknown or already answered ids are ignored, not
 * refused, because two viewers answering the same prompt is a normal race. `ignored` says why an
 * answer changed nothing.
 */
import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import type { ConfirmBroker } from '../mcp/confirmBroker.js';

const ConfirmResponseBody = Type.Object(
  {
    request_id: Type.String({
      minLength: 1,
      description: 'The `request_id` of the `mcp-confirm` event.',
      errorMessage: 'request_id is required (the id from the mcp-confirm event)',
    }),
    confirmed: Type.Boolean({ errorMessage: 'confirmed must be a boolean, got {got}' }),
  },
  { errorMessage: 'body must be a JSON object {request_id, confirmed}' },
);

const ConfirmResponseAnswer = Type.Object({
  ok: Type.Literal(true),
  ignored: Type.Optional(
    Type.Union([Type.Literal('already_answered'), Type.Literal('unknown')], { description: 'Present when the answer changed nothing, and why.' }),
  ),
  message: Type.Optional(Type.String()),
});

/** POST /mcp/suspend-response: a client's answer to a suspension prompt; tuicd never asks one, so every id is unknown. */
const SuspendResponseBody = Type.Object(
  {
    request_id: Type.String({ minLength: 1, errorMessage: 'request_id is required' }),
    ok: Type.Boolean({ errorMessage: 'ok must be a boolean, got {got}' }),
    reason: Type.Optional(Type.String({ maxLength: 4096, errorMessage: 'reason must be a string of at most 4096 characters' })),
  },
  { errorMessage: 'body must be a JSON object {request_id, ok, reason?}' },
);

export function mcpConfirmRoutes(broker: ConfirmBroker): Route[] {
  return [
    defineRoute({
      method: 'POST',
      pattern: '/mcp/confirm-response',
      tag: 'mcp',
      summary: 'Answer a pending `ui action=confirm` prompt (the first answer counts)',
      body: ConfirmResponseBody,
      answers: { 200: ConfirmResponseAnswer },
      handler: ({ body }) => {
        const requestId = body.request_id;
        switch (broker.answer(requestId, body.confirmed)) {
          case 'accepted':
            return json({ ok: true });
          case 'already_answered':
            return json({ ok: true, ignored: 'already_answered', message: `confirm request ${requestId} was already resolved; only the first answer counts` });
          case 'unknown':
            return json({ ok: true, ignored: 'unknown', message: `no pending confirm request ${requestId}` });
        }
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/mcp/suspend-response',
      tag: 'mcp',
      summary: 'Answer a suspension prompt: accepted like a confirm answer, but tuicd never suspends a tool call, so it is always `ignored: unknown`',
      body: SuspendResponseBody,
      answers: { 200: ConfirmResponseAnswer },
      handler: ({ body }) => json({ ok: true, ignored: 'unknown', message: `no pending suspend request ${body.request_id}` }),
    }),
  ];
}
