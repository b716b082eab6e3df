/**
 * What a client may ask about one session's processes and input, each answered from what tuicd
 * already holds: the leaf process, the foreground job and agent, the line being composed, the kitty
 * keyboard flags in force, the raw output ring, and the receipt of the prompts it was given.
 */
import { Buffer } from 'node:buffer';

import { Type } from 'typebox';

import { redactSecrets } from '../../shared/redactor.js';
import { defineRoute } from '../http/routeSpec.js';
import { bareJson, json } from '../http/types.js';
import type { Route } from '../http/types.js';
import { LAST_PROMPT_MAX_CHARS } from '../sessions/agentStateTracker.js';
import { foregroundJobRuns, foregroundOf } from '../sessions/foreground.js';
import { leafPid } from '../sessions/processTree.js';
import type { SessionRecord } from '../sessions/sessionRecord.js';
import { SessionRefParams } from '../sessions/sessionSchemas.js';
import type { SessionService } from '../sessions/sessionService.js';

const TAG = 'sessions';

const PromptSection = Type.Object({
  label: Type.String(),
  source: Type.Union([Type.Literal('pty_description'), Type.Literal('terminal_input')], {
    description: "`pty_description`: the orchestrator's description of the work; `terminal_input`: the last prompt typed into the session.",
  }),
  bytes: Type.Integer({ minimum: 0, description: 'UTF-8 bytes of `text` as kept (before redaction).' }),
  text: Type.String({ description: 'Redacted.' }),
  status: Type.Literal('delivered'),
  truncated: Type.Boolean({ description: `Only the first ${LAST_PROMPT_MAX_CHARS} characters of a longer prompt are kept.` }),
});

const PromptReceipt = Type.Object({
  sections: Type.Array(PromptSection),
  captureLimited: Type.Literal(true, {
    description: 'Always true: tuicd keeps the last typed line of ten or more words and the description, not every part of every prompt.',
  }),
});

function promptReceipt(r: SessionRecord): { sections: object[]; captureLimited: true } {
  const sections: object[] = [];
  const section = (label: string, source: string, text: string, truncated: boolean) =>
    sections.push({ label, source, bytes: Buffer.byteLength(text), text: redactSecrets(text), status: 'delivered', truncated });
  if (r.pty_description !== undefined) section('Task description', 'pty_description', r.pty_description, false);
  if (r.last_prompt !== null) section('Last prompt', 'terminal_input', r.last_prompt, r.last_prompt.length >= LAST_PROMPT_MAX_CHARS);
  return { sections, captureLimited: true };
}

export function sessionIntrospectionRoutes(sessions: SessionService): Route[] {
  return [
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/leaf-pid',
      tag: TAG,
      summary: "The session's leaf process: down from its process through only children; null once it exited",
      params: SessionRefParams,
      answers: { 200: Type.Object({ pid: Type.Union([Type.Integer(), Type.Null()]) }) },
      handler: ({ params }) => {
        const r = sessions.get(params.id);
        return json({ pid: r.exit ? null : leafPid(r.pid) });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/has-foreground',
      tag: TAG,
      summary: 'The program running in the foreground instead of the shell (not a known agent); null at the prompt',
      params: SessionRefParams,
      answers: { 200: Type.Object({ process: Type.Union([Type.String(), Type.Null()]) }) },
      handler: ({ params }) => {
        const r = sessions.get(params.id);
        const fg = r.exit ? null : foregroundOf(r.pid);
        return json({ process: fg !== null && foregroundJobRuns(fg) ? fg.name : null });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/foreground',
      tag: TAG,
      summary: 'The agent running in the session (agent detection); null for none',
      params: SessionRefParams,
      answers: { 200: Type.Object({ agent: Type.Union([Type.String(), Type.Null()]) }) },
      handler: ({ params }) => {
        const r = sessions.get(params.id);
        return json({ agent: r.exit ? null : r.agent_type });
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/input-buffer',
      tag: TAG,
      summary: 'The line being typed at the prompt, as tuicd tracked the input (redacted)',
      description: 'Empty after Enter or Ctrl-U; what editing keys tuicd cannot follow did to the line is not known, so it may be stale then.',
      params: SessionRefParams,
      answers: { 200: Type.Object({ content: Type.String() }) },
      handler: ({ params }) => json({ content: redactSecrets(sessions.inputOf(sessions.get(params.id)).composer.text) }),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/kitty-flags',
      tag: TAG,
      summary: 'The kitty keyboard protocol flags the program pushed (`CSI > flags u`): a bare JSON integer, 0 when off',
      params: SessionRefParams,
      answers: { 200: Type.Integer({ minimum: 0 }) },
      handler: async ({ params }) => bareJson((await sessions.screenQuery(params.id, { kind: 'kitty_flags' })).kitty_flags ?? 0),
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/raw-ring',
      tag: TAG,
      summary: "The session's raw output ring (up to 2 MiB), as bytes",
      description: 'The bytes the program wrote, escapes included, oldest first; `X-Ring-Offset` is the absolute offset of the first byte.',
      params: SessionRefParams,
      answers: { 200: { contentType: 'application/octet-stream', description: 'The ring bytes.' } },
      handler: async ({ params }) => {
        const r = await sessions.readRaw(params.id, 0, undefined);
        const body = Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
        return { status: 200, headers: { 'Content-Type': 'application/octet-stream', 'X-Ring-Offset': String(r.start) }, body };
      },
    }),
    defineRoute({
      method: 'GET',
      pattern: '/sessions/:id/prompt-receipt',
      tag: TAG,
      summary: 'What the session was asked to do: its description and the last prompt typed into it (redacted)',
      params: SessionRefParams,
      answers: { 200: PromptReceipt },
      handler: ({ params }) => json(promptReceipt(sessions.get(params.id))),
    }),
  ];
}
