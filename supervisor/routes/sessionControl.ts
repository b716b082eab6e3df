/**
 * Driving a session over REST beyond raw writes: submit (the `session` tool's submit, one shared
 * implementation: same receipt, same refusal reasons), several writes under one hold of the writer
 * lock, whether a viewer shows it, and its display name.
 */
import { Type } from 'typebox';

import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { MAX_NAME_CHARS, OkAnswer, SessionRefParams } from '../sessions/sessionSchemas.js';
import type { SessionService } from '../sessions/sessionService.js';
import { clientSubmit, commandText, SubmitConstants } from '../sessions/submission.js';

const TAG = 'sessions';

/** Parts in one write-parts call; each is one write, so this bounds the lock's hold. */
const MAX_PARTS = 256;

const SubmitBody = Type.Object({
  input: Type.String({
    minLength: 1,
    pattern: '[^\\r\\n]',
    description: 'The command: typed after Ctrl-U (posix shells), multi-line as one bracketed paste, then Enter. Trailing newlines are dropped.',
    errorMessage: 'input must be a non-empty command',
  }),
  timeout_ms: Type.Optional(
    Type.Number({
      description: `How long to wait for the terminal to move after Enter: default ${SubmitConstants.ACK_TIMEOUT_DEFAULT_MS}, clamped to ${SubmitConstants.ACK_TIMEOUT_MIN_MS}-${SubmitConstants.ACK_TIMEOUT_MAX_MS}.`,
      errorMessage: 'timeout_ms must be a number',
    }),
  ),
  pty_description: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: "The orchestrator's description of the work: a string sets it, null or an empty string clears it, absent keeps it.",
      errorMessage: 'pty_description must be a string or null',
    }),
  ),
});

const ReceiptSchema = Type.Object(
  {
    submission_id: Type.String(),
    submitted: Type.Boolean(),
    write_state: Type.Union([Type.Literal('not_started'), Type.Literal('complete'), Type.Literal('uncertain')]),
    acknowledged: Type.Boolean(),
    retry_safe: Type.Boolean({ description: 'True only when no byte was written.' }),
    turn_epoch: Type.Integer(),
    composer_state: Type.Union([Type.Literal('cleared'), Type.Literal('empty'), Type.Literal('partial'), Type.Literal('unknown')]),
    acknowledgement: Type.Optional(Type.Object({ enter_offset: Type.Integer(), output_offset: Type.Integer() })),
    reason: Type.Optional(
      Type.String({
        description:
          'Refused before writing: session_not_found, session_exited, shell_state_unconfirmed, turn_in_flight, queued_commands_pending, confident_dialog, ' +
          'shell_busy, agent_busy, foreground_job_running, composer_partial, composer_unknown. Written but not acknowledged: ack_timeout, ' +
          'session_exited_after_write, superseded, request_aborted; write_failed: … when a write broke off.',
      }),
    ),
  },
  { title: 'receipt' },
);

export function sessionControlRoutes(sessions: SessionService): Route[] {
  return [
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/submit',
      tag: TAG,
      summary: "Run one command in an idle session with an empty line and get a receipt (the `session` tool's submit)",
      description:
        'Never queued and never typed ahead of commands queued for the session: a session that cannot take it now refuses before the first byte ' +
        '(409, or 404 for an unknown session, with the receipt and its `reason`; retry_safe is true). 200 once written, acknowledged or not.',
      params: SessionRefParams,
      body: SubmitBody,
      answers: { 200: ReceiptSchema, 404: ReceiptSchema, 409: ReceiptSchema },
      handler: async ({ params, body }, { signal }) => {
        const text = commandText(body.input);
        const receipt = await clientSubmit(sessions, params.id, text, { timeoutMs: body.timeout_ms, description: body.pty_description, signal });
        if (receipt.write_state !== 'not_started') return json(receipt);
        return json(receipt, receipt.reason === 'session_not_found' ? 404 : 409);
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/write-parts',
      tag: TAG,
      summary: 'Type several parts in one hold of the writer lock: no other writer lands between them',
      description: 'Each part is one write, with the same input bookkeeping as POST /sessions/:id/write (text and Enter apart for raw-mode programs).',
      params: SessionRefParams,
      body: Type.Object({
        parts: Type.Array(Type.String({ errorMessage: 'parts must be strings' }), {
          minItems: 1,
          maxItems: MAX_PARTS,
          description: `1 to ${MAX_PARTS} strings, typed in order as they are (UTF-8).`,
          errorMessage: `parts must be an array of 1 to ${MAX_PARTS} strings`,
        }),
      }),
      answers: { 200: OkAnswer },
      handler: async ({ params, body }) => {
        await sessions.writeSequence(
          params.id,
          body.parts.map((p) => Buffer.from(p, 'utf8')),
        );
        return json({ ok: true });
      },
    }),
    defineRoute({
      method: 'POST',
      pattern: '/sessions/:id/visible',
      tag: TAG,
      summary: 'Tell tuicd whether a viewer shows the session now',
      params: SessionRefParams,
      body: Type.Object({ visible: Type.Boolean({ errorMessage: 'visible must be a boolean' }) }),
      answers: { 200: OkAnswer },
      handler: ({ params, body }) => (sessions.setVisible(params.id, body.visible), json({ ok: true })),
    }),
    defineRoute({
      method: 'PUT',
      pattern: '/sessions/:id/name',
      tag: TAG,
      summary: "Rename a session: its display_name; `isCustom` (default true) marks it a person's choice that titles leave alone",
      params: SessionRefParams,
      body: Type.Object({
        name: Type.String({
          minLength: 1,
          maxLength: MAX_NAME_CHARS,
          pattern: '\\S',
          description: `The new display name: not blank, at most ${MAX_NAME_CHARS} characters.`,
          errorMessage: `name must be a non-blank string of at most ${MAX_NAME_CHARS} characters`,
        }),
        isCustom: Type.Optional(Type.Boolean({ description: 'Default true.', errorMessage: 'isCustom must be a boolean' })),
      }),
      answers: { 200: OkAnswer },
      handler: ({ params, body }) => (sessions.rename(params.id, body.name, body.isCustom ?? true), json({ ok: true })),
    }),
  ];
}
